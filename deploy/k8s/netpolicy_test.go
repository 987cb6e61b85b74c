package k8s

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// A small evaluator of NetworkPolicy semantics, enough to ask "may A reach
// B on this port?" of a build. A packet passes when the sender's egress and
// the receiver's ingress both allow it; a side that no policy of that type
// selects is open. Pods are matched by selectors only: their addresses are
// taken to be private, which the ipBlocks here exclude.

// pod is one end of a connection: a pod of a workload, or a stand-in for a
// pod elsewhere (Prometheus, an agent, the cluster DNS).
type pod struct {
	namespace string
	labels    map[string]string
	ports     []corev1.ContainerPort
}

func podOf(w workload) pod {
	var ports []corev1.ContainerPort
	for _, c := range w.containers() {
		ports = append(ports, c.Ports...)
	}
	return pod{w.namespace, w.template.Labels, ports}
}

// rule is an ingress or an egress rule: the ports it opens, and the peers
// it opens them from or to.
type rule struct {
	ports []networkingv1.NetworkPolicyPort
	peers []networkingv1.NetworkPolicyPeer
}

// policyRules lists the rules of one direction that apply to a pod, and
// whether any policy isolates the pod in that direction.
func policyRules(t *testing.T, pols []networkingv1.NetworkPolicy, self pod, typ networkingv1.PolicyType) (rules []rule, isolated bool) {
	t.Helper()
	for _, p := range pols {
		if p.Namespace != self.namespace || !hasType(p, typ) || !selects(t, &p.Spec.PodSelector, self.labels) {
			continue
		}
		isolated = true
		if typ == networkingv1.PolicyTypeIngress {
			for _, r := range p.Spec.Ingress {
				rules = append(rules, rule{r.Ports, r.From})
			}
		} else {
			for _, r := range p.Spec.Egress {
				rules = append(rules, rule{r.Ports, r.To})
			}
		}
	}
	return rules, isolated
}

// ingressAllowed reports whether dst's ingress admits a TCP or UDP packet
// from src to its port.
func ingressAllowed(t *testing.T, pols []networkingv1.NetworkPolicy, src, dst pod, proto corev1.Protocol, port int32) bool {
	t.Helper()
	return allowedBy(t, pols, networkingv1.PolicyTypeIngress, src, dst, proto, port)
}

// egressAllowed reports whether src's egress lets a TCP or UDP packet out
// to dst's port.
func egressAllowed(t *testing.T, pols []networkingv1.NetworkPolicy, src, dst pod, proto corev1.Protocol, port int32) bool {
	t.Helper()
	return allowedBy(t, pols, networkingv1.PolicyTypeEgress, src, dst, proto, port)
}

// allowedBy judges the packet by the receiver's ingress rules or the
// sender's egress rules; the peer is the other end.
func allowedBy(t *testing.T, pols []networkingv1.NetworkPolicy, typ networkingv1.PolicyType, src, dst pod, proto corev1.Protocol, port int32) bool {
	t.Helper()
	self, peer := src, dst
	if typ == networkingv1.PolicyTypeIngress {
		self, peer = dst, src
	}
	rules, isolated := policyRules(t, pols, self, typ)
	return !isolated || slices.ContainsFunc(rules, func(r rule) bool {
		return portsMatch(r.ports, dst, proto, port) && peersMatch(t, r.peers, self.namespace, peer)
	})
}

// hasType applies the API's default: Ingress always, Egress when the policy
// has egress rules.
func hasType(p networkingv1.NetworkPolicy, typ networkingv1.PolicyType) bool {
	if len(p.Spec.PolicyTypes) > 0 {
		return slices.Contains(p.Spec.PolicyTypes, typ)
	}
	return typ == networkingv1.PolicyTypeIngress || len(p.Spec.Egress) > 0
}

func peersMatch(t *testing.T, peers []networkingv1.NetworkPolicyPeer, policyNS string, other pod) bool {
	t.Helper()
	if len(peers) == 0 {
		return true
	}
	for _, peer := range peers {
		if peer.IPBlock != nil {
			continue
		}
		inNamespace := other.namespace == policyNS
		if peer.NamespaceSelector != nil {
			inNamespace = selects(t, peer.NamespaceSelector, map[string]string{corev1.LabelMetadataName: other.namespace})
		}
		if inNamespace && (peer.PodSelector == nil || selects(t, peer.PodSelector, other.labels)) {
			return true
		}
	}
	return false
}

// portsMatch resolves a named port against the destination pod's ports.
func portsMatch(ports []networkingv1.NetworkPolicyPort, dst pod, proto corev1.Protocol, port int32) bool {
	if len(ports) == 0 {
		return true
	}
	for _, np := range ports {
		p := corev1.ProtocolTCP
		if np.Protocol != nil {
			p = *np.Protocol
		}
		switch {
		case p != proto:
		case np.Port == nil:
			return true
		case np.Port.StrVal != "":
			for _, cp := range dst.ports {
				if cp.Name == np.Port.StrVal && cp.ContainerPort == port {
					return true
				}
			}
		case np.Port.IntVal == port, np.EndPort != nil && np.Port.IntVal <= port && port <= *np.EndPort:
			return true
		}
	}
	return false
}

// reaches reports whether an egress rule lets any address of target through,
// on any port: a rule with no peers reaches everything, an ipBlock whatever
// part of target its excepts leave.
func reaches(t *testing.T, r rule, target netip.Prefix) bool {
	t.Helper()
	if len(r.peers) == 0 {
		return true
	}
	for _, peer := range r.peers {
		if peer.IPBlock == nil {
			continue
		}
		cidr := mustPrefix(t, peer.IPBlock.CIDR)
		if !cidr.Overlaps(target) {
			continue
		}
		// CIDRs nest or are apart, so the overlap is the narrower one.
		overlap := target
		if cidr.Bits() > target.Bits() {
			overlap = cidr
		}
		if !slices.ContainsFunc(peer.IPBlock.Except, func(e string) bool {
			ex := mustPrefix(t, e)
			return ex.Bits() <= overlap.Bits() && ex.Contains(overlap.Addr())
		}) {
			return true
		}
	}
	return false
}

func mustPrefix(t *testing.T, s string) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	if err != nil {
		t.Fatalf("CIDR %q: %v", s, err)
	}
	return p.Masked()
}

// isDefaultDeny: every pod, both directions, no rule.
func isDefaultDeny(p networkingv1.NetworkPolicy) bool {
	empty := len(p.Spec.PodSelector.MatchLabels) == 0 && len(p.Spec.PodSelector.MatchExpressions) == 0
	return empty && hasType(p, networkingv1.PolicyTypeIngress) && hasType(p, networkingv1.PolicyTypeEgress) &&
		len(p.Spec.Ingress) == 0 && len(p.Spec.Egress) == 0
}

// Stand-ins for pods outside the namespace.
var (
	prometheus = pod{"monitoring", map[string]string{"app.kubernetes.io/name": "prometheus"}, nil}
	otel       = pod{"monitoring", map[string]string{"app.kubernetes.io/name": "otel-collector"}, nil}
	kubeDNS    = pod{"kube-system", map[string]string{"k8s-app": "kube-dns"}, nil}
	elsewhere  = pod{"default", map[string]string{"app.kubernetes.io/name": "someone"}, nil}
)
