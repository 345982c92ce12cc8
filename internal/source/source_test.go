package source

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
)

func TestTrimTargetRef(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *corev1.ObjectReference
		want string // the kept Pod name, "" for nil
	}{
		{"none", nil, ""},
		{"a Pod", &corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "web-1", UID: "u", ResourceVersion: "9"}, "web-1"},
		{"another kind", &corev1.ObjectReference{Kind: "Node", Name: "n1"}, ""},
		{"a Pod without a name", &corev1.ObjectReference{Kind: "Pod"}, ""},
	} {
		got := TrimTargetRef(tc.in)
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: %+v, want nil", tc.name, got)
		case tc.want != "" && (got == nil || *got != corev1.ObjectReference{Kind: "Pod", Name: tc.want}):
			t.Errorf("%s: %+v, want Pod %s only", tc.name, got, tc.want)
		}
	}
}

// Ahead leaves out every kind of object that makes servers but the
// Ingresses it keeps, and keeps the others whole.
func TestAheadKeepsNoOtherServers(t *testing.T) {
	snap := &Snapshot{
		VirtualServers: []*nicv1.VirtualServer{{}}, VirtualServerRoutes: []*nicv1.VirtualServerRoute{{}},
		Gateways: []*gwv1.Gateway{{}}, ListenerSets: []*gwv1.ListenerSet{{}}, HTTPRoutes: []*gwv1.HTTPRoute{{}},
		GRPCRoutes: []*gwv1.GRPCRoute{{}}, TLSRoutes: []*gwv1.TLSRoute{{}}, TCPRoutes: []*gwv1.TCPRoute{{}}, UDPRoutes: []*gwv1.UDPRoute{{}},
		TransportServers: []*nicv1.TransportServer{{}}, GatewayClasses: []*gwv1.GatewayClass{{}},
		Secrets: []*corev1.Secret{{}}, ConfigMaps: []*corev1.ConfigMap{{}}, IngressClasses: []*networkingv1.IngressClass{{}},
	}
	out := Ahead(snap, map[string]bool{"a/b": true}, func([]*networkingv1.Ingress) map[string]bool { return nil })
	if len(out.VirtualServers)+len(out.VirtualServerRoutes)+len(out.Gateways)+len(out.ListenerSets)+len(out.HTTPRoutes)+
		len(out.GRPCRoutes)+len(out.TLSRoutes)+len(out.TCPRoutes)+len(out.UDPRoutes) != 0 {
		t.Errorf("objects that make servers kept: %+v", out)
	}
	if len(out.TransportServers) != 1 || len(out.GatewayClasses) != 1 || len(out.Secrets) != 1 || len(out.ConfigMaps) != 1 || len(out.IngressClasses) != 1 {
		t.Errorf("other objects not kept whole: %+v", out)
	}
	if len(snap.VirtualServers) != 1 {
		t.Error("Ahead changed the snapshot it was given")
	}
}
