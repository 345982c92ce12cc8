package build

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/source"
)

// TestGatewayAPIOnlyOursIsReported: the Problems of Gateway API objects
// name only objects of Causeway's classes (a route naming a Gateway of
// another controller, or one that does not exist, gets none), and the
// kinds not served yet say so.
func TestGatewayAPIOnlyOursIsReported(t *testing.T) {
	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	parent := func(ns, name string) []gwv1.ParentReference {
		p := gwv1.ParentReference{Name: gwv1.ObjectName(name)}
		if ns != "" {
			p.Namespace = new(gwv1.Namespace(ns))
		}
		return []gwv1.ParentReference{p}
	}
	snap := &source.Snapshot{
		GatewayClasses: []*gwv1.GatewayClass{
			{ObjectMeta: meta("", "causeway"), Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}},
			{ObjectMeta: meta("", "envoy"), Spec: gwv1.GatewayClassSpec{ControllerName: "gateway.envoyproxy.io/gatewayclass-controller"}},
		},
		Gateways: []*gwv1.Gateway{
			{ObjectMeta: meta("infra", "ours"), Spec: gwv1.GatewaySpec{GatewayClassName: "causeway", Listeners: []gwv1.Listener{
				{Name: "http", Port: 8000, Protocol: gwv1.HTTPProtocolType,
					AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: new(gwv1.NamespacesFromAll)}}},
				{Name: "tcp", Port: 9000, Protocol: gwv1.TCPProtocolType}}}},
			{ObjectMeta: meta("infra", "theirs"), Spec: gwv1.GatewaySpec{GatewayClassName: "envoy"}},
		},
		HTTPRoutes: []*gwv1.HTTPRoute{
			{ObjectMeta: meta("infra", "same-ns"), Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("", "ours")}}},
			{ObjectMeta: meta("shop", "cross-ns"), Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("infra", "ours")}}},
			{ObjectMeta: meta("shop", "wrong-ns"), Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("", "ours")}}},
			{ObjectMeta: meta("infra", "envoys"), Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("", "theirs")}}},
		},
		TCPRoutes: []*gwv1.TCPRoute{
			{ObjectMeta: meta("infra", "tcp"), Spec: gwv1.TCPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("", "ours")}}},
		},
	}
	_, problems := Build(snap, testOpts)
	got := map[string]bool{}
	for _, p := range problems {
		got[p.Object.Kind+" "+p.Object.Namespace+"/"+p.Object.Name] = true
		if p.Object.Name == "theirs" || p.Object.Name == "envoys" || p.Object.Name == "envoy" || p.Object.Name == "wrong-ns" {
			t.Errorf("%s: not ours to report", p)
		}
	}
	// The routes without rules answer 500 (no backendRefs): ResolvedRefs
	// is fine, so the HTTPRoutes have no Problem; the TCPRoute is not
	// served yet, nor the TCP listener.
	for _, want := range []string{"TCPRoute infra/tcp", "Gateway infra/ours"} {
		if !got[want] {
			t.Errorf("no Problem on %s; got %v", want, problems)
		}
	}
}
