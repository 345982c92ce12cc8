package gateway

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestResolve: only Causeway's classes, their Gateways and the routes
// that name those get status; attachedRoutes are counted.
func TestResolve(t *testing.T) {
	classes := []*gwv1.GatewayClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "causeway"}, Spec: gwv1.GatewayClassSpec{ControllerName: ControllerName}},
		{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: gwv1.GatewayClassSpec{ControllerName: "example.net/gateway-controller"}},
	}
	ours := gateway("same-namespace", listener("http", 80, "HTTP", from("Same")))
	theirs := gateway("theirs", listener("http", 80, "HTTP", from("All")))
	theirs.Spec.GatewayClassName = "other"
	unknownClass := gateway("no-class", listener("http", 80, "HTTP"))
	unknownClass.Spec.GatewayClassName = "missing"
	routes := []Route{
		httpRouteOf(infra, nil, "same-namespace", "theirs"),
		httpRouteOf(infra, nil, "theirs"),
		httpRouteOf(infra, []string{"a.example.com"}, "no-class", "same-namespace"),
	}
	addrs := func(ns, name string) []string { return []string{"10.0.0.1"} }
	res, problems := Resolve(classes, []*gwv1.Gateway{ours, theirs, unknownClass}, nil, routes,
		[]gwv1.FeatureName{"HTTPRoute", "Gateway"}, addrs, testInputs())
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	if len(res.Classes) != 1 || res.Classes["causeway"] == nil || len(res.Classes["causeway"].Status.SupportedFeatures) != 2 {
		t.Errorf("classes: %v", res.Classes)
	}
	if len(res.Gateways) != 1 || res.Gateways[infra+"/same-namespace"] == nil {
		t.Fatalf("gateways: %v", res.Gateways)
	}
	if len(res.Routes) != 2 || res.Routes[0].Attachments[0].Index != 0 || res.Routes[1].Attachments[0].Index != 1 {
		t.Errorf("routes: %+v", res.Routes)
	}
	if got := res.Gateways[infra+"/same-namespace"].Status.Listeners[0].AttachedRoutes; got != 2 {
		t.Errorf("attachedRoutes = %d, want 2", got)
	}
}
