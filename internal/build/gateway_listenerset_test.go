package build

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/source"
)

// TestGatewayListenerSets: an attached ListenerSet's listeners are served
// beside the Gateway's own, on the same port or a port of their own; the
// routes of a ListenerSet parentRef are served on its listeners' hosts
// only, those of the Gateway on the Gateway's; and a ListenerSet listener
// the data plane cannot serve says so in the ListenerSet's status, with a
// Problem naming the ListenerSet.
func TestGatewayListenerSets(t *testing.T) {
	opts := testOpts
	opts.HTTPPort, opts.HTTPSPort = 8080, 8443
	all := gwv1.NamespacesFromAll
	listener := func(name, host string, port int) gwv1.Listener {
		h := gwv1.Hostname(host)
		return gwv1.Listener{Name: gwv1.SectionName(name), Port: gwv1.PortNumber(port), Protocol: gwv1.HTTPProtocolType, Hostname: &h,
			AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: &all}}}
	}
	entry := func(l gwv1.Listener) gwv1.ListenerEntry {
		return gwv1.ListenerEntry{Name: l.Name, Port: l.Port, Protocol: l.Protocol, Hostname: l.Hostname, AllowedRoutes: l.AllowedRoutes}
	}
	route := func(name, path string, parent gwv1.ParentReference) *gwv1.HTTPRoute {
		pt := gwv1.PathMatchPathPrefix
		return &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: name}, Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{parent}},
			Rules:           []gwv1.HTTPRouteRule{{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: &pt, Value: &path}}}}}}}
	}
	lsKind, grp := gwv1.Kind("ListenerSet"), gwv1.Group(gwv1.GroupName)
	snap := &source.Snapshot{
		GatewayClasses: []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "causeway"}, Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}}},
		Gateways: []*gwv1.Gateway{{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw"}, Spec: gwv1.GatewaySpec{GatewayClassName: "causeway",
			Listeners:        []gwv1.Listener{listener("gw", "gw.example.com", 9000)},
			AllowedListeners: &gwv1.AllowedListeners{Namespaces: &gwv1.ListenerNamespaces{From: &all}}}}},
		ListenerSets: []*gwv1.ListenerSet{{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "ls"}, Spec: gwv1.ListenerSetSpec{
			ParentRef: gwv1.ParentGatewayReference{Name: "gw", Namespace: new(gwv1.Namespace("infra"))},
			Listeners: []gwv1.ListenerEntry{entry(listener("same-port", "ls.example.com", 9000)), entry(listener("own-port", "own.example.com", 9001)),
				entry(listener("ingress-port", "i.example.com", 8080))}}}},
		HTTPRoutes: []*gwv1.HTTPRoute{
			route("to-gateway", "/gateway", gwv1.ParentReference{Name: "gw"}),
			route("to-set", "/set", gwv1.ParentReference{Group: &grp, Kind: &lsKind, Name: "ls", Namespace: new(gwv1.Namespace("team"))}),
		},
	}
	res := Run(snap, opts)
	paths := map[string][]string{}
	for _, s := range res.Model.Servers {
		for _, l := range s.Locations {
			paths[s.Host+" "+s.Scope] = append(paths[s.Host+" "+s.Scope], l.Match.Path)
		}
	}
	want := map[string][]string{
		"gw.example.com gateway port 9000":  {"/gateway"},
		"ls.example.com gateway port 9000":  {"/set"},
		"own.example.com gateway port 9001": {"/set"},
	}
	for k, v := range want {
		if !slices.Equal(paths[k], v) {
			t.Errorf("%s: paths %v, want %v", k, paths[k], v)
		}
	}
	if len(paths) != len(want) {
		t.Errorf("servers %v, want %v", paths, want)
	}
	ls := res.Gateway.ListenerSets["team/ls"]
	if ls == nil || !ls.Accepted {
		t.Fatalf("ListenerSet not accepted: %+v", ls)
	}
	c := meta.FindStatusCondition(ls.Status.Listeners[2].Conditions, "Programmed")
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "Invalid" || !strings.Contains(c.Message, "controller's own HTTP") {
		t.Errorf("listener ingress-port's Programmed: %+v, want False Invalid naming the port's user", c)
	}
	if got := ls.Status.Listeners[1].AttachedRoutes; got != 1 {
		t.Errorf("own-port attachedRoutes = %d, want 1", got)
	}
	found := false
	for _, p := range res.Problems {
		found = found || (p.Object.Kind == "ListenerSet" && p.Object.Name == "ls" && strings.Contains(p.Message, `"ingress-port"`))
	}
	if !found {
		t.Errorf("no Problem names the ListenerSet's listener not served: %v", res.Problems)
	}
}
