package k8s

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

func TestDevRunsOneOfEach(t *testing.T) {
	b := render(t, devDir)
	for _, w := range b.workloads() {
		if w.replicas == nil || *w.replicas != 1 {
			t.Errorf("%s %s: replicas %v, want 1", w.kind, w.name, ptrValue(w.replicas))
		}
	}
}

var (
	routePattern    = regexp.MustCompile(`nats://([a-z0-9-]+)\.([a-z0-9-]+):(\d+)`)
	storeDirPattern = regexp.MustCompile(`(?m)^\s*store_dir:\s*(\S+)`)
)

// TestNATSConfigFitsTheStatefulSet: the cluster routes name exactly the
// StatefulSet's pods (a one-server cluster must have none, or it waits for a
// quorum forever), JetStream stores on the persistent volume, and the
// streams ask for one replica per server (more cannot be placed; fewer lose
// jobs and sessions with a server).
func TestNATSConfigFitsTheStatefulSet(t *testing.T) {
	for _, dir := range distillBuilds {
		t.Run(dir, func(t *testing.T) {
			b := render(t, dir)
			i := slices.IndexFunc(b.statefulSets, func(s appsv1.StatefulSet) bool { return s.Name == "nats" })
			if i < 0 {
				t.Fatal("no StatefulSet nats")
			}
			ss := b.statefulSets[i]
			w := b.workload(t, "nats")
			c := container(t, w, "nats")
			conf := natsConf(t, b, w, c)

			var routes []string
			for _, m := range routePattern.FindAllStringSubmatch(conf, -1) {
				routes = append(routes, fmt.Sprintf("%s.%s:%s", m[1], m[2], m[3]))
			}
			var want []string
			if n := int(ptrValue(ss.Spec.Replicas)); n > 1 {
				for i := range n {
					want = append(want, fmt.Sprintf("%s-%d.%s:6222", ss.Name, i, ss.Spec.ServiceName))
				}
			}
			if !slices.Equal(routes, want) {
				t.Errorf("routes %v, want %v", routes, want)
			}
			for _, name := range []string{"gateway", "fetcher"} {
				c := container(t, b.workload(t, name), name)
				if got, want := envValue(t, c, "DISTILL_STREAM_REPLICAS"), fmt.Sprint(ptrValue(ss.Spec.Replicas)); got != want {
					t.Errorf("%s: DISTILL_STREAM_REPLICAS=%s, want %s, one per NATS server", name, got, want)
				}
			}
			m := storeDirPattern.FindStringSubmatch(conf)
			if m == nil {
				t.Fatal("nats.conf has no JetStream store_dir")
			}
			claims := slices.Collect(func(yield func(string) bool) {
				for _, pvc := range ss.Spec.VolumeClaimTemplates {
					if !yield(pvc.Name) {
						return
					}
				}
			})
			if !slices.ContainsFunc(c.VolumeMounts, func(vm corev1.VolumeMount) bool {
				return vm.MountPath == m[1] && slices.Contains(claims, vm.Name)
			}) {
				t.Errorf("store_dir %s is not a volumeClaimTemplate's mount", m[1])
			}
		})
	}
}

// natsConf is the configuration file that the container's --config names.
func natsConf(t *testing.T, b *bundle, w workload, c corev1.Container) string {
	t.Helper()
	args := append(slices.Clone(c.Command), c.Args...)
	i := slices.Index(args, "--config")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("nats: no --config in %v", args)
	}
	path := args[i+1]
	for _, vm := range c.VolumeMounts {
		rel, ok := strings.CutPrefix(path, strings.TrimSuffix(vm.MountPath, "/")+"/")
		if !ok {
			continue
		}
		v := mountedVolume(w, c, vm.MountPath)
		if v == nil || v.ConfigMap == nil {
			break
		}
		for _, cm := range b.configMaps {
			if cm.Namespace == w.namespace && cm.Name == v.ConfigMap.Name {
				if conf, ok := cm.Data[rel]; ok {
					return conf
				}
			}
		}
	}
	t.Fatalf("nats: %s is not a file of a mounted ConfigMap", path)
	return ""
}

func TestProdScalesAndBudgets(t *testing.T) {
	b := render(t, prodDir)
	minReplicas := map[string]int32{"gateway": 2, "fetcher": 3, "extractor": 2, "renderer": 2}

	t.Run("autoscaling", func(t *testing.T) {
		for _, d := range b.deployments {
			if d.Spec.Replicas != nil {
				t.Errorf("%s: spec.replicas is set; kubectl apply would reset the autoscaler's count", d.Name)
			}
		}
		scaled := map[string]int{}
		for _, h := range b.hpas {
			ref := h.Spec.ScaleTargetRef
			scaled[ref.Name]++
			if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || !slices.ContainsFunc(b.deployments, func(d appsv1.Deployment) bool { return d.Name == ref.Name }) {
				t.Errorf("HPA %s targets %s %s %s, not a Deployment of the build", h.Name, ref.APIVersion, ref.Kind, ref.Name)
			}
			if got := ptrValue(h.Spec.MinReplicas); got != minReplicas[ref.Name] || h.Spec.MaxReplicas <= got {
				t.Errorf("HPA %s: replicas %d..%d, want from %d and room to grow", h.Name, got, h.Spec.MaxReplicas, minReplicas[ref.Name])
			}
			if !slices.ContainsFunc(h.Spec.Metrics, func(m autoscalingv2.MetricSpec) bool {
				return m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Target.AverageUtilization != nil
			}) {
				t.Errorf("HPA %s does not scale on CPU utilization", h.Name)
			}
		}
		for name := range minReplicas {
			if scaled[name] != 1 {
				t.Errorf("%s has %d HPAs, want 1", name, scaled[name])
			}
		}
	})

	t.Run("disruption budgets", func(t *testing.T) {
		budgets := map[string]int{}
		for _, p := range b.pdbs {
			if (p.Spec.MinAvailable == nil) == (p.Spec.MaxUnavailable == nil) {
				t.Errorf("PDB %s: set exactly one of minAvailable and maxUnavailable", p.Name)
			}
			ws := b.selected(t, p.Namespace, p.Spec.Selector)
			if len(ws) != 1 {
				t.Errorf("PDB %s selects %d workloads, want 1", p.Name, len(ws))
				continue
			}
			budgets[ws[0].name]++
			if ws[0].name == "nats" && (p.Spec.MaxUnavailable == nil || p.Spec.MaxUnavailable.IntValue() != 1) {
				t.Errorf("PDB %s: NATS needs maxUnavailable 1 to keep its quorum", p.Name)
			}
		}
		for _, w := range b.workloads() {
			if budgets[w.name] != 1 {
				t.Errorf("%s has %d PDBs, want 1", w.name, budgets[w.name])
			}
		}
	})

	t.Run("NATS servers on separate nodes", func(t *testing.T) {
		w := b.workload(t, "nats")
		spec := w.template.Spec
		spread := slices.ContainsFunc(spec.TopologySpreadConstraints, func(c corev1.TopologySpreadConstraint) bool {
			return c.TopologyKey == corev1.LabelHostname && c.WhenUnsatisfiable == corev1.DoNotSchedule &&
				c.MaxSkew == 1 && selects(t, c.LabelSelector, w.template.Labels)
		})
		anti := spec.Affinity != nil && spec.Affinity.PodAntiAffinity != nil &&
			slices.ContainsFunc(spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, func(a corev1.PodAffinityTerm) bool {
				return a.TopologyKey == corev1.LabelHostname && selects(t, a.LabelSelector, w.template.Labels)
			})
		if !spread && !anti {
			t.Error("nothing keeps two NATS servers off the same node")
		}
	})

	t.Run("images are pinned", func(t *testing.T) {
		for _, w := range b.workloads() {
			for _, c := range w.containers() {
				name := c.Image[strings.LastIndex(c.Image, "/")+1:]
				_, tag, tagged := strings.Cut(name, ":")
				if !strings.Contains(c.Image, "@sha256:") && (!tagged || tag == "latest") {
					t.Errorf("%s: image %s is not pinned to a tag or digest", c.Name, c.Image)
				}
			}
		}
	})
}

func TestMCPSidecar(t *testing.T) {
	b := render(t, sidecarDir)
	distill := render(t, baseDir)
	if len(b.deployments) != 1 {
		t.Fatalf("%d Deployments, want the agent's alone", len(b.deployments))
	}
	w := b.workloads()[0]
	spec := w.template.Spec

	i := slices.IndexFunc(spec.InitContainers, func(c corev1.Container) bool {
		return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
	})
	if i < 0 {
		t.Fatal("no sidecar (an init container with restartPolicy Always)")
	}
	sidecar := spec.InitContainers[i]
	args := append(slices.Clone(sidecar.Command), sidecar.Args...)
	h := slices.Index(args, "--http")
	if len(args) == 0 || args[0] != "mcp" || h < 0 || h+1 >= len(args) || !slices.Contains(args, "--cluster") {
		t.Fatalf("sidecar runs %v, want mcp --http ADDR --cluster", args)
	}
	if addr := args[h+1]; !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Errorf("the MCP server listens on %s, not on loopback alone", addr)
	}
	mcpURL := "http://" + args[h+1] + "/mcp"

	token := envVar(sidecar, "DISTILL_MCP_TOKEN")
	if token == nil || token.ValueFrom == nil || token.ValueFrom.SecretKeyRef == nil {
		t.Fatal("sidecar: DISTILL_MCP_TOKEN does not come from a secretKeyRef")
	}
	ref := *token.ValueFrom.SecretKeyRef
	for _, c := range spec.Containers {
		if got := envValue(t, c, "DISTILL_MCP_URL"); got != mcpURL {
			t.Errorf("%s: DISTILL_MCP_URL=%s, want %s", c.Name, got, mcpURL)
		}
		e := envVar(c, "DISTILL_MCP_TOKEN")
		if e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
			e.ValueFrom.SecretKeyRef.Name != ref.Name || e.ValueFrom.SecretKeyRef.Key != ref.Key {
			t.Errorf("%s: DISTILL_MCP_TOKEN is not the sidecar's secret %s/%s", c.Name, ref.Name, ref.Key)
		}
	}
	for _, s := range b.secrets {
		for k, v := range s.StringData {
			if !strings.Contains(v, "REPLACE-ME") {
				t.Errorf("Secret %s: %s looks like a real value; the example ships placeholders", s.Name, k)
			}
		}
	}

	// The sidecar does the gateway's work: it reaches what the gateway does
	// and shares its streams.
	gateway := container(t, distill.workload(t, "gateway"), "gateway")
	if got, want := envValue(t, sidecar, "DISTILL_STREAM_REPLICAS"), envValue(t, gateway, "DISTILL_STREAM_REPLICAS"); got != want {
		t.Errorf("sidecar: DISTILL_STREAM_REPLICAS=%s, the gateway's is %s", got, want)
	}
	for env, want := range contract[0].addresses {
		for _, addr := range strings.Split(envValue(t, sidecar, env), ",") {
			if got, err := distill.serviceAt(w.namespace, addr); err != nil || got != want {
				t.Errorf("%s=%s: want distill's Service %s, got %q (%v)", env, addr, want, got, err)
			}
		}
	}
	pols := append(slices.Clone(distill.policies), b.policies...)
	agent := podOf(w)
	stranger := pod{w.namespace, map[string]string{"app.kubernetes.io/name": "stranger"}, nil}
	for name, port := range map[string]int32{"nats": 4222, "fetcher": 7001, "extractor": 7002, "renderer": 7003} {
		dst := podOf(distill.workload(t, name))
		if !ingressAllowed(t, pols, agent, dst, corev1.ProtocolTCP, port) {
			t.Errorf("the agent's pods cannot reach %s:%d", name, port)
		}
		if ingressAllowed(t, pols, stranger, dst, corev1.ProtocolTCP, port) {
			t.Errorf("any pod of %s reaches %s:%d", w.namespace, name, port)
		}
		if ingressAllowed(t, pols, agent, dst, corev1.ProtocolTCP, metricsPort) {
			t.Errorf("the agent's pods reach %s's metrics", name)
		}
	}
}

// prod names a registry that cannot resolve until a release sets the real
// one (a bare distill/gateway would pull whatever Docker Hub has under that
// name), and the README says how.
func TestProdImagesNeedARegistry(t *testing.T) {
	b := render(t, prodDir)
	for _, svc := range contract {
		c := container(t, b.workload(t, svc.name), svc.name)
		if want := "registry.example/distill/" + svc.name + ":"; !strings.HasPrefix(c.Image, want) {
			t.Errorf("%s: image %s, want %s...", svc.name, c.Image, want)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range contract {
		if line := "kustomize edit set image distill/" + svc.name + "=REGISTRY/distill/" + svc.name + ":TAG"; !strings.Contains(string(readme), line) {
			t.Errorf("README.md lacks %q", line)
		}
	}
}
