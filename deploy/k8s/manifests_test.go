package k8s

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const metricsPort = 9464

// contract is the cluster contract the service binaries are built to: each
// service's gRPC port, and the Service each of its address variables names.
var contract = []struct {
	name      string
	grpcPort  int32
	addresses map[string]string
}{
	{"gateway", 7000, map[string]string{
		"DISTILL_NATS_URL": "nats", "DISTILL_FETCHER_ADDR": "fetcher",
		"DISTILL_EXTRACTOR_ADDR": "extractor", "DISTILL_RENDERER_ADDR": "renderer",
	}},
	{"fetcher", 7001, map[string]string{
		"DISTILL_NATS_URL": "nats", "DISTILL_EXTRACTOR_ADDR": "extractor", "DISTILL_RENDERER_ADDR": "renderer",
	}},
	{"extractor", 7002, nil},
	{"renderer", 7003, nil},
}

func TestWorkloads(t *testing.T) {
	for _, dir := range append(slices.Clone(distillBuilds), sidecarDir) {
		t.Run(dir, func(t *testing.T) {
			b := render(t, dir)
			if len(b.workloads()) == 0 {
				t.Fatal("no workloads")
			}
			for _, w := range b.workloads() {
				t.Run(w.name, func(t *testing.T) { checkWorkload(t, w) })
			}
		})
	}
}

func checkWorkload(t *testing.T, w workload) {
	sel := w.selector
	if sel == nil || len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		t.Errorf("selector %v selects everything or nothing", sel)
	} else if !selects(t, sel, w.template.Labels) {
		t.Errorf("selector %v does not select the pod template's labels %v", sel, w.template.Labels)
	}
	for _, key := range []string{"app.kubernetes.io/name", "app.kubernetes.io/component"} {
		if w.template.Labels[key] == "" {
			t.Errorf("pod template has no label %s", key)
		}
	}
	if w.namespace == namespace && w.template.Labels["app.kubernetes.io/part-of"] != "distill" {
		t.Errorf("pod template is not labelled app.kubernetes.io/part-of: distill")
	}
	spec := w.template.Spec
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the service account token is mounted; no container here calls the API server")
	}
	for _, v := range spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.SizeLimit == nil {
			t.Errorf("emptyDir %s has no sizeLimit", v.Name)
		}
	}
	for _, c := range w.containers() {
		checkResources(t, c)
		checkSecurity(t, spec.SecurityContext, c)
		for kind, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe, "startup": c.StartupProbe} {
			if p != nil && !probePortDeclared(p, c) {
				t.Errorf("container %s: %s probe's port is not one of its ports", c.Name, kind)
			}
		}
	}
}

func checkResources(t *testing.T, c corev1.Container) {
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, hasReq := c.Resources.Requests[r]
		lim, hasLim := c.Resources.Limits[r]
		switch {
		case !hasReq || !hasLim || req.IsZero() || lim.IsZero():
			t.Errorf("container %s: %s needs both a request and a limit", c.Name, r)
		case req.Cmp(lim) > 0:
			t.Errorf("container %s: %s request %s is above its limit %s", c.Name, r, req.String(), lim.String())
		}
	}
}

// checkSecurity applies the container's settings over the pod's, as the
// kubelet does.
func checkSecurity(t *testing.T, pod *corev1.PodSecurityContext, c corev1.Container) {
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	sc := c.SecurityContext
	if sc == nil {
		t.Errorf("container %s has no securityContext", c.Name)
		return
	}
	nonRoot, uid, seccomp := pod.RunAsNonRoot, pod.RunAsUser, pod.SeccompProfile
	if sc.RunAsNonRoot != nil {
		nonRoot = sc.RunAsNonRoot
	}
	if sc.RunAsUser != nil {
		uid = sc.RunAsUser
	}
	if sc.SeccompProfile != nil {
		seccomp = sc.SeccompProfile
	}
	if nonRoot == nil || !*nonRoot {
		t.Errorf("container %s: runAsNonRoot is not true", c.Name)
	}
	if uid == nil || *uid == 0 {
		t.Errorf("container %s: no non-zero runAsUser", c.Name)
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("container %s: seccompProfile is not RuntimeDefault", c.Name)
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("container %s: readOnlyRootFilesystem is not true", c.Name)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("container %s: allowPrivilegeEscalation is not false", c.Name)
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Errorf("container %s is privileged", c.Name)
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("container %s: capabilities must drop ALL and add none", c.Name)
	}
}

func probePortDeclared(p *corev1.Probe, c corev1.Container) bool {
	declared := func(name string, number int32) bool {
		return slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool {
			return (name != "" && cp.Name == name) || (name == "" && cp.ContainerPort == number)
		})
	}
	switch {
	case p.GRPC != nil:
		return declared("", p.GRPC.Port)
	case p.HTTPGet != nil:
		return declared(p.HTTPGet.Port.StrVal, p.HTTPGet.Port.IntVal)
	case p.TCPSocket != nil:
		return declared(p.TCPSocket.Port.StrVal, p.TCPSocket.Port.IntVal)
	}
	return true // exec probes have no port
}

func TestContract(t *testing.T) {
	for _, dir := range distillBuilds {
		t.Run(dir, func(t *testing.T) {
			b := render(t, dir)
			for _, svc := range contract {
				t.Run(svc.name, func(t *testing.T) {
					w := b.workload(t, svc.name)
					c := container(t, w, svc.name)
					checkServicePorts(t, w, c, svc.grpcPort)
					// Explicitly the pod's address: the binaries listen on
					// loopback by default.
					checkEnv(t, c, "DISTILL_LISTEN", fmt.Sprintf("0.0.0.0:%d", svc.grpcPort))
					checkEnv(t, c, "DISTILL_METRICS_ADDR", fmt.Sprintf(":%d", metricsPort))
					checkEnv(t, c, "OTEL_SERVICE_NAME", "distill-"+svc.name)
					for env, want := range svc.addresses {
						for _, addr := range strings.Split(envValue(t, c, env), ",") {
							if got, err := b.serviceAt(w.namespace, addr); err != nil || got != want {
								t.Errorf("%s=%s: want the Service %s, got %q (%v)", env, addr, want, got, err)
							}
						}
					}
					// The extractor has no egress, so nowhere to export to.
					if got, want := b.env(t, w, c, "OTEL_EXPORTER_OTLP_ENDPOINT") != "", svc.name != "extractor"; got != want {
						t.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT set: %v, want %v", got, want)
					}
				})
			}
			gw := b.workload(t, "gateway")
			if e := envVar(container(t, gw, "gateway"), "DISTILL_SESSION_KEY"); e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				t.Error("gateway: DISTILL_SESSION_KEY does not come from a Secret")
			}
			// Off loopback the gateway refuses to start without API tokens.
			for _, name := range []string{"DISTILL_API_TOKENS", "DISTILL_OPERATOR_TOKENS"} {
				if e := envVar(container(t, gw, "gateway"), name); e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
					t.Errorf("gateway: %s does not come from a Secret", name)
				}
			}
			if e := envVar(container(t, gw, "gateway"), "DISTILL_API_TOKENS"); e != nil && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && ptrValue(e.ValueFrom.SecretKeyRef.Optional) {
				t.Error("gateway: DISTILL_API_TOKENS is optional, so the gateway would not start without it")
			}
			checkFetcherVolumes(t, b.workload(t, "fetcher"))
			checkRendererVolumes(t, b.workload(t, "renderer"))
		})
	}
}

// checkServicePorts: gRPC health probes on the service's port (readiness on
// service "", liveness on "liveness"), metrics on 9464, annotated for scraping.
func checkServicePorts(t *testing.T, w workload, c corev1.Container, grpcPort int32) {
	if p, ok := w.port(corev1.ProtocolTCP, "grpc", 0); !ok || p.ContainerPort != grpcPort {
		t.Errorf("no container port grpc = %d", grpcPort)
	}
	if p, ok := w.port(corev1.ProtocolTCP, "metrics", 0); !ok || p.ContainerPort != metricsPort {
		t.Errorf("no container port metrics = %d", metricsPort)
	}
	for _, probe := range []struct {
		kind, service string
		p             *corev1.Probe
	}{{"readiness", "", c.ReadinessProbe}, {"liveness", "liveness", c.LivenessProbe}} {
		switch {
		case probe.p == nil || probe.p.GRPC == nil:
			t.Errorf("no gRPC %s probe", probe.kind)
		case probe.p.GRPC.Port != grpcPort:
			t.Errorf("%s probe on port %d, want %d", probe.kind, probe.p.GRPC.Port, grpcPort)
		case ptrValue(probe.p.GRPC.Service) != probe.service:
			t.Errorf("%s probe asks for service %q, want %q", probe.kind, ptrValue(probe.p.GRPC.Service), probe.service)
		}
	}
	want := map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": strconv.Itoa(metricsPort), "prometheus.io/path": "/metrics"}
	for k, v := range want {
		if got := w.template.Annotations[k]; got != v {
			t.Errorf("pod annotation %s = %q, want %q", k, got, v)
		}
	}
}

func checkFetcherVolumes(t *testing.T, w workload) {
	c := container(t, w, "fetcher")
	if n, err := strconv.Atoi(envValue(t, c, "DISTILL_WORKERS")); err != nil || n < 1 {
		t.Errorf("fetcher: DISTILL_WORKERS is not a positive number: %v", err)
	}
	if v := mountedVolume(w, c, envValue(t, c, "DISTILL_CACHE_DIR")); v == nil || v.EmptyDir == nil {
		t.Error("fetcher: DISTILL_CACHE_DIR is not an emptyDir mount")
	}
}

func checkRendererVolumes(t *testing.T, w workload) {
	c := container(t, w, "renderer")
	for _, path := range []string{"/tmp", "/dev/shm"} {
		if v := mountedVolume(w, c, path); v == nil || v.EmptyDir == nil || v.EmptyDir.Medium != corev1.StorageMediumMemory {
			t.Errorf("renderer: %s is not a memory-backed emptyDir", path)
		}
	}
	if lim := c.Resources.Limits[corev1.ResourceMemory]; lim.Cmp(resource.MustParse("1Gi")) < 0 {
		t.Errorf("renderer: memory limit %s is too small for Chromium", lim.String())
	}
}

func mountedVolume(w workload, c corev1.Container, path string) *corev1.Volume {
	for _, m := range c.VolumeMounts {
		if m.MountPath != path {
			continue
		}
		for i, v := range w.template.Spec.Volumes {
			if v.Name == m.Name {
				return &w.template.Spec.Volumes[i]
			}
		}
	}
	return nil
}

func TestServices(t *testing.T) {
	for _, dir := range distillBuilds {
		t.Run(dir, func(t *testing.T) {
			b := render(t, dir)
			for _, s := range b.services {
				t.Run(s.Name, func(t *testing.T) {
					if len(s.Spec.Selector) == 0 {
						t.Fatal("no selector")
					}
					ws := b.selected(t, s.Namespace, &metav1.LabelSelector{MatchLabels: s.Spec.Selector})
					if len(ws) != 1 {
						t.Fatalf("selector %v matches %d workloads, want 1", s.Spec.Selector, len(ws))
					}
					for _, p := range s.Spec.Ports {
						proto := p.Protocol
						if proto == "" {
							proto = corev1.ProtocolTCP
						}
						number := p.TargetPort.IntVal
						if p.TargetPort.StrVal == "" && number == 0 {
							number = p.Port
						}
						if _, ok := ws[0].port(proto, p.TargetPort.StrVal, number); !ok {
							t.Errorf("port %s: target %s is not a port of %s", p.Name, p.TargetPort.String(), ws[0].name)
						}
					}
				})
			}
			for _, ss := range b.statefulSets {
				i := slices.IndexFunc(b.services, func(s corev1.Service) bool { return s.Name == ss.Spec.ServiceName })
				if i < 0 || b.services[i].Spec.ClusterIP != corev1.ClusterIPNone {
					t.Errorf("StatefulSet %s: serviceName %q is not a headless Service", ss.Name, ss.Spec.ServiceName)
				}
			}
		})
	}
}

// externalSecrets are created by the operator, not by the build (README).
var externalSecrets = map[string][]string{
	baseDir: {"distill-gateway"},
	prodDir: {"distill-gateway"},
}

func TestReferences(t *testing.T) {
	for _, dir := range append(slices.Clone(distillBuilds), sidecarDir) {
		t.Run(dir, func(t *testing.T) {
			b := render(t, dir)
			for _, w := range b.workloads() {
				for _, ref := range podReferences(w.template.Spec) {
					if ref.optional || (ref.kind == "Secret" && slices.Contains(externalSecrets[dir], ref.name)) {
						continue
					}
					if !b.hasKey(ref.kind, w.namespace, ref.name, ref.key) {
						t.Errorf("%s: %s %s/%s (key %q) is not in the build", w.name, ref.kind, w.namespace, ref.name, ref.key)
					}
				}
			}
		})
	}
}

type reference struct {
	kind, name, key string
	optional        bool
}

func podReferences(spec corev1.PodSpec) []reference {
	var refs []reference
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		for _, e := range c.Env {
			switch {
			case e.ValueFrom == nil:
			case e.ValueFrom.ConfigMapKeyRef != nil:
				r := e.ValueFrom.ConfigMapKeyRef
				refs = append(refs, reference{"ConfigMap", r.Name, r.Key, ptrValue(r.Optional)})
			case e.ValueFrom.SecretKeyRef != nil:
				r := e.ValueFrom.SecretKeyRef
				refs = append(refs, reference{"Secret", r.Name, r.Key, ptrValue(r.Optional)})
			}
		}
		for _, e := range c.EnvFrom {
			if r := e.ConfigMapRef; r != nil {
				refs = append(refs, reference{"ConfigMap", r.Name, "", ptrValue(r.Optional)})
			}
			if r := e.SecretRef; r != nil {
				refs = append(refs, reference{"Secret", r.Name, "", ptrValue(r.Optional)})
			}
		}
	}
	for _, v := range spec.Volumes {
		if r := v.ConfigMap; r != nil {
			refs = append(refs, reference{"ConfigMap", r.Name, "", ptrValue(r.Optional)})
		}
		if r := v.Secret; r != nil {
			refs = append(refs, reference{"Secret", r.SecretName, "", ptrValue(r.Optional)})
		}
	}
	return refs
}

// hasKey reports whether the build holds the ConfigMap or Secret, and the
// key when one is named.
func (b *bundle) hasKey(kind, ns, name, key string) bool {
	switch kind {
	case "ConfigMap":
		i := slices.IndexFunc(b.configMaps, func(cm corev1.ConfigMap) bool { return cm.Namespace == ns && cm.Name == name })
		return i >= 0 && (key == "" || has(b.configMaps[i].Data, key) || has(b.configMaps[i].BinaryData, key))
	case "Secret":
		i := slices.IndexFunc(b.secrets, func(s corev1.Secret) bool { return s.Namespace == ns && s.Name == name })
		return i >= 0 && (key == "" || has(b.secrets[i].Data, key) || has(b.secrets[i].StringData, key))
	}
	return false
}

func has[V any](m map[string]V, key string) bool {
	_, ok := m[key]
	return ok
}

func TestNetworkPolicies(t *testing.T) {
	for _, dir := range distillBuilds {
		t.Run(dir, func(t *testing.T) {
			b := render(t, dir)
			pols := b.policies
			if !slices.ContainsFunc(pols, isDefaultDeny) {
				t.Error("no default-deny policy (every pod, ingress and egress, no rules)")
			}
			for _, p := range pols {
				checkIngressPortNames(t, b, p)
			}
			t.Run("inside the namespace", func(t *testing.T) { checkInsideTraffic(t, b) })
			t.Run("from other namespaces", func(t *testing.T) { checkOutsideTraffic(t, b) })
			t.Run("egress", func(t *testing.T) { checkEgress(t, b) })
		})
	}
}

// checkIngressPortNames: a named port that a selected pod does not declare
// silently allows nothing.
func checkIngressPortNames(t *testing.T, b *bundle, p networkingv1.NetworkPolicy) {
	for _, r := range p.Spec.Ingress {
		for _, np := range r.Ports {
			if np.Port == nil || np.Port.StrVal == "" {
				continue
			}
			for _, w := range b.selected(t, p.Namespace, &p.Spec.PodSelector) {
				if _, ok := w.port(corev1.ProtocolTCP, np.Port.StrVal, 0); !ok {
					t.Errorf("policy %s: port %q is not a port of %s", p.Name, np.Port.StrVal, w.name)
				}
			}
		}
	}
}

// checkInsideTraffic tries every workload against every port of every other
// and expects exactly the flows of the design, from the sender's egress and
// the receiver's ingress alike, so that each side holds on its own.
func checkInsideTraffic(t *testing.T, b *bundle) {
	want := map[string]bool{
		"gateway -> nats:4222":      true,
		"gateway -> fetcher:7001":   true,
		"gateway -> extractor:7002": true,
		"gateway -> renderer:7003":  true,
		"fetcher -> nats:4222":      true,
		"fetcher -> extractor:7002": true,
		"fetcher -> renderer:7003":  true,
		"nats -> nats:6222":         true,
	}
	for _, from := range b.workloads() {
		for _, to := range b.workloads() {
			for _, cp := range podOf(to).ports {
				flow := fmt.Sprintf("%s -> %s:%d", from.name, to.name, cp.ContainerPort)
				src, dst := podOf(from), podOf(to)
				if got := egressAllowed(t, b.policies, src, dst, corev1.ProtocolTCP, cp.ContainerPort); got != want[flow] {
					t.Errorf("%s: egress allowed: %v, want %v", flow, got, want[flow])
				}
				// The gateway's API is open to every pod.
				wantIn := want[flow] || (to.name == "gateway" && cp.ContainerPort == 7000)
				if got := ingressAllowed(t, b.policies, src, dst, corev1.ProtocolTCP, cp.ContainerPort); got != wantIn {
					t.Errorf("%s: ingress allowed: %v, want %v", flow, got, wantIn)
				}
			}
		}
	}
}

// checkOutsideTraffic: from another namespace only the gateway's gRPC port
// answers, and Prometheus in "monitoring" reaches the metrics ports too.
func checkOutsideTraffic(t *testing.T, b *bundle) {
	for _, w := range b.workloads() {
		dst := podOf(w)
		for _, cp := range dst.ports {
			gatewayAPI := w.name == "gateway" && cp.ContainerPort == 7000
			metrics := cp.Name == "metrics" && cp.ContainerPort == metricsPort
			for _, src := range []struct {
				name string
				pod  pod
				want bool
			}{{"another namespace", elsewhere, gatewayAPI}, {"prometheus", prometheus, gatewayAPI || metrics}} {
				if got := ingressAllowed(t, b.policies, src.pod, dst, corev1.ProtocolTCP, cp.ContainerPort); got != src.want {
					t.Errorf("%s -> %s:%d allowed: %v, want %v", src.name, w.name, cp.ContainerPort, got, src.want)
				}
			}
		}
	}
}

// Addresses no egress may reach: private ranges (the cluster itself), cloud
// metadata, loopback, CGNAT, and their IPv6 kin.
var forbidden = []string{
	"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "127.0.0.0/8",
	"169.254.0.0/16", "169.254.169.254/32", "0.0.0.0/8", "224.0.0.0/4", "240.0.0.0/4",
	"::1/128", "fc00::/7", "fd00:ec2::254/128", "fe80::/10",
}

// Two public addresses that stand for the web.
var public = []string{"1.1.1.1/32", "2606:4700:4700::1111/128"}

func checkEgress(t *testing.T, b *bundle) {
	browses := []string{"fetcher", "renderer"}
	exports := []string{"gateway", "fetcher", "renderer"}
	for _, w := range b.workloads() {
		src := podOf(w)
		rules, _ := policyRules(t, b.policies, src, networkingv1.PolicyTypeEgress)
		if w.name == "extractor" && len(rules) != 0 {
			t.Errorf("extractor: %d egress rules, want none", len(rules))
		}
		for _, r := range rules {
			for _, cidr := range forbidden {
				if reaches(t, r, mustPrefix(t, cidr)) {
					t.Errorf("%s: an egress rule reaches %s", w.name, cidr)
				}
			}
			for _, cidr := range public {
				if !reaches(t, r, mustPrefix(t, cidr)) {
					continue
				}
				if !slices.Contains(browses, w.name) {
					t.Errorf("%s: an egress rule reaches the internet (%s)", w.name, cidr)
				}
				if len(r.ports) == 0 || slices.ContainsFunc(r.ports, func(p networkingv1.NetworkPolicyPort) bool {
					return p.Port == nil || p.EndPort != nil || (p.Port.IntVal != 80 && p.Port.IntVal != 443)
				}) {
					t.Errorf("%s: web egress is not limited to ports 80 and 443", w.name)
				}
			}
		}
		browsesWeb := slices.ContainsFunc(rules, func(r rule) bool {
			return reaches(t, r, mustPrefix(t, public[0])) && reaches(t, r, mustPrefix(t, public[1]))
		})
		if want := slices.Contains(browses, w.name); browsesWeb != want {
			t.Errorf("%s reaches the web over IPv4 and IPv6: %v, want %v", w.name, browsesWeb, want)
		}
		for _, proto := range []corev1.Protocol{corev1.ProtocolUDP, corev1.ProtocolTCP} {
			if got, want := egressAllowed(t, b.policies, src, kubeDNS, proto, 53), w.name != "extractor"; got != want {
				t.Errorf("%s -> DNS over %s allowed: %v, want %v", w.name, proto, got, want)
			}
		}
		if got, want := egressAllowed(t, b.policies, src, otel, corev1.ProtocolTCP, 4317), slices.Contains(exports, w.name); got != want {
			t.Errorf("%s -> OTLP collector allowed: %v, want %v", w.name, got, want)
		}
	}
}

// serviceAt names the Service that a host:port or nats://host:port seen from
// clientNS reaches, or says why none does.
func (b *bundle) serviceAt(clientNS, addr string) (string, error) {
	host, port, err := net.SplitHostPort(strings.TrimPrefix(addr, "nats://"))
	if err != nil {
		return "", err
	}
	name, domain, _ := strings.Cut(host, ".")
	ns := clientNS
	if domain != "" {
		var rest string
		ns, rest, _ = strings.Cut(domain, ".")
		if rest != "" && rest != "svc" && rest != "svc.cluster.local" {
			return "", fmt.Errorf("%s is not a Service name", host)
		}
	}
	for _, s := range b.services {
		if s.Name == name && s.Namespace == ns &&
			slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return strconv.Itoa(int(p.Port)) == port }) {
			return name, nil
		}
	}
	return "", fmt.Errorf("no Service %s/%s with port %s", ns, name, port)
}

// env resolves a variable from the container's env or from a ConfigMap of
// the build that it takes whole.
func (b *bundle) env(t *testing.T, w workload, c corev1.Container, name string) string {
	t.Helper()
	if e := envVar(c, name); e != nil {
		return envValue(t, c, name)
	}
	for _, from := range c.EnvFrom {
		for _, cm := range b.configMaps {
			if from.ConfigMapRef != nil && cm.Namespace == w.namespace && cm.Name == from.ConfigMapRef.Name {
				if v, ok := cm.Data[strings.TrimPrefix(name, from.Prefix)]; ok {
					return v
				}
			}
		}
	}
	return ""
}

func container(t *testing.T, w workload, name string) corev1.Container {
	t.Helper()
	for _, c := range w.containers() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("%s has no container %q", w.name, name)
	return corev1.Container{}
}

func envVar(c corev1.Container, name string) *corev1.EnvVar {
	for i, e := range c.Env {
		if e.Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// envValue is a variable's literal value; it fails the test when the
// variable is missing or comes from elsewhere.
func envValue(t *testing.T, c corev1.Container, name string) string {
	t.Helper()
	e := envVar(c, name)
	if e == nil || e.ValueFrom != nil {
		t.Fatalf("container %s: no literal %s", c.Name, name)
	}
	return e.Value
}

func checkEnv(t *testing.T, c corev1.Container, name, want string) {
	t.Helper()
	if got := envValue(t, c, name); got != want {
		t.Errorf("container %s: %s=%q, want %q", c.Name, name, got, want)
	}
}

func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
