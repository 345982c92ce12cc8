package build

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/source"
)

// TestGatewayAPINotServedIsReported: until Gateway API is served, every
// object of ours (our GatewayClass, its Gateways, the routes naming those
// Gateways) is a Problem saying so, and no other implementation's object
// is.
func TestGatewayAPINotServedIsReported(t *testing.T) {
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
			{ObjectMeta: meta("infra", "ours"), Spec: gwv1.GatewaySpec{GatewayClassName: "causeway"}},
			{ObjectMeta: meta("infra", "theirs"), Spec: gwv1.GatewaySpec{GatewayClassName: "envoy"}},
		},
		HTTPRoutes: []*gwv1.HTTPRoute{
			{ObjectMeta: meta("infra", "same-ns"), Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("", "ours")}}},
			{ObjectMeta: meta("shop", "cross-ns"), Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("infra", "ours")}}},
			{ObjectMeta: meta("shop", "wrong-ns"), Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("", "ours")}}},
			{ObjectMeta: meta("infra", "envoys"), Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("", "theirs")}}},
		},
		GRPCRoutes: []*gwv1.GRPCRoute{
			{ObjectMeta: meta("infra", "grpc"), Spec: gwv1.GRPCRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("", "ours")}}},
		},
		TCPRoutes: []*gwv1.TCPRoute{
			{ObjectMeta: meta("infra", "tcp"), Spec: gwv1.TCPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("", "ours")}}},
		},
	}
	_, problems := Build(snap, testOpts)
	var got []string
	for _, p := range problems {
		if !p.Rejected {
			t.Errorf("%s: not rejected", p)
		}
		got = append(got, p.Object.Kind+" "+p.Object.Namespace+"/"+p.Object.Name)
	}
	slices.Sort(got)
	want := []string{"GRPCRoute infra/grpc", "Gateway infra/ours", "GatewayClass /causeway", "HTTPRoute infra/same-ns",
		"HTTPRoute shop/cross-ns", "TCPRoute infra/tcp"}
	if !slices.Equal(got, want) {
		t.Errorf("Problems on %q, want %q", got, want)
	}
}
