package k8s

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The kustomizations a user applies, and the namespace distill runs in.
const (
	baseDir    = "base"
	devDir     = "overlays/dev"
	prodDir    = "overlays/prod"
	sidecarDir = "examples/mcp-sidecar"
	namespace  = "distill"
)

// distillBuilds deploy distill itself; the sidecar example deploys an agent.
var distillBuilds = []string{baseDir, devDir, prodDir}

// bundle is one kustomize build, each object decoded into its API type.
type bundle struct {
	deployments  []appsv1.Deployment
	statefulSets []appsv1.StatefulSet
	services     []corev1.Service
	configMaps   []corev1.ConfigMap
	secrets      []corev1.Secret
	namespaces   []corev1.Namespace
	policies     []networkingv1.NetworkPolicy
	hpas         []autoscalingv2.HorizontalPodAutoscaler
	pdbs         []policyv1.PodDisruptionBudget
}

// render builds the kustomization in dir as `kubectl apply -k` would, and
// fails the test on an object that does not decode strictly (an unknown or
// misspelt field, a wrong type) or of a kind no check here knows.
func render(t *testing.T, dir string) *bundle {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	b := &bundle{}
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatalf("%s: %s %s as YAML: %v", dir, r.GetKind(), r.GetName(), err)
		}
		if err := b.add(r.GetApiVersion(), r.GetKind(), y); err != nil {
			t.Fatalf("%s: %s %s: %v", dir, r.GetKind(), r.GetName(), err)
		}
	}
	return b
}

func (b *bundle) add(apiVersion, kind string, y []byte) error {
	switch apiVersion + " " + kind {
	case "apps/v1 Deployment":
		return decode(y, &b.deployments)
	case "apps/v1 StatefulSet":
		return decode(y, &b.statefulSets)
	case "v1 Service":
		return decode(y, &b.services)
	case "v1 ConfigMap":
		return decode(y, &b.configMaps)
	case "v1 Secret":
		return decode(y, &b.secrets)
	case "v1 Namespace":
		return decode(y, &b.namespaces)
	case "networking.k8s.io/v1 NetworkPolicy":
		return decode(y, &b.policies)
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return decode(y, &b.hpas)
	case "policy/v1 PodDisruptionBudget":
		return decode(y, &b.pdbs)
	}
	return fmt.Errorf("kind %s %s is not checked by these tests: teach render_test.go about it", apiVersion, kind)
}

func decode[T any](y []byte, into *[]T) error {
	var v T
	if err := yaml.UnmarshalStrict(y, &v); err != nil {
		return fmt.Errorf("strict decode: %w", err)
	}
	*into = append(*into, v)
	return nil
}

// workload is what the checks need of a Deployment or a StatefulSet.
type workload struct {
	kind, name, namespace string
	replicas              *int32
	selector              *metav1.LabelSelector
	template              corev1.PodTemplateSpec
}

func (b *bundle) workloads() []workload {
	var ws []workload
	for _, d := range b.deployments {
		ws = append(ws, workload{"Deployment", d.Name, d.Namespace, d.Spec.Replicas, d.Spec.Selector, d.Spec.Template})
	}
	for _, s := range b.statefulSets {
		ws = append(ws, workload{"StatefulSet", s.Name, s.Namespace, s.Spec.Replicas, s.Spec.Selector, s.Spec.Template})
	}
	return ws
}

func (b *bundle) workload(t *testing.T, name string) workload {
	t.Helper()
	for _, w := range b.workloads() {
		if w.name == name {
			return w
		}
	}
	t.Fatalf("no workload %q", name)
	return workload{}
}

// containers lists the regular and the init (sidecar) containers.
func (w workload) containers() []corev1.Container {
	return append(append([]corev1.Container{}, w.template.Spec.InitContainers...), w.template.Spec.Containers...)
}

// port finds a declared container port by name or number.
func (w workload) port(p corev1.Protocol, name string, number int32) (corev1.ContainerPort, bool) {
	for _, c := range w.containers() {
		for _, cp := range c.Ports {
			proto := cp.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			if proto != p {
				continue
			}
			if (name != "" && cp.Name == name) || (name == "" && cp.ContainerPort == number) {
				return cp, true
			}
		}
	}
	return corev1.ContainerPort{}, false
}

// selects reports whether a label selector selects these labels. A nil
// selector selects nothing, an empty one everything.
func selects(t *testing.T, sel *metav1.LabelSelector, l map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("label selector %v: %v", sel, err)
	}
	return s.Matches(labels.Set(l))
}

// selected lists the workloads in ns whose pods a selector selects.
func (b *bundle) selected(t *testing.T, ns string, sel *metav1.LabelSelector) []workload {
	t.Helper()
	var ws []workload
	for _, w := range b.workloads() {
		if w.namespace == ns && selects(t, sel, w.template.Labels) {
			ws = append(ws, w)
		}
	}
	return ws
}
