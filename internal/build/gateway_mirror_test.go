package build

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
)

// TestGatewayRequestMirror: an HTTPRoute rule's RequestMirrors become its
// location's mirrors, whose backends reach the model with their endpoints
// like the rule's own; a mirror whose Service does not exist is left out
// with a ResolvedRefs Problem while the rule is served; nothing says
// "not served".
func TestGatewayRequestMirror(t *testing.T) {
	s := world(3) // svc-a (the rule's), svc-b and svc-c (mirrors)
	s.GatewayClasses = []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "causeway"}, Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}}}
	s.Gateways = []*gwv1.Gateway{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gw"}, Spec: gwv1.GatewaySpec{GatewayClassName: "causeway",
		Listeners: []gwv1.Listener{{Name: "http", Port: 9000, Protocol: gwv1.HTTPProtocolType}}}}}
	ref := func(name string) gwv1.BackendObjectReference {
		return gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: new(gwv1.PortNumber(80))}
	}
	mirror := func(name string, percent *int32) gwv1.HTTPRouteFilter {
		return gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestMirror, RequestMirror: &gwv1.HTTPRequestMirrorFilter{BackendRef: ref(name), Percent: percent}}
	}
	rule := func(path string, filters ...gwv1.HTTPRouteFilter) gwv1.HTTPRouteRule {
		return gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: new(gwv1.PathMatchPathPrefix), Value: new(path)}}},
			Filters: filters, BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: ref("svc-a")}}}}
	}
	s.HTTPRoutes = []*gwv1.HTTPRoute{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "r"}, Spec: gwv1.HTTPRouteSpec{
		CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw"}}},
		Rules: []gwv1.HTTPRouteRule{
			rule("/two", mirror("svc-b", nil), mirror("svc-c", new(int32(20)))),
			rule("/missing", mirror("nope", nil)),
		}}}}
	m, problems := Build(s, testOpts)
	for _, p := range problems {
		if strings.Contains(p.Message, "not served") {
			t.Errorf("Problem %s", p)
		}
	}
	var resolved bool
	for _, p := range problems {
		resolved = resolved || p.Condition != nil && p.Condition.Type == "ResolvedRefs" && strings.Contains(p.Message, "spec.rules[1].filters[0].requestMirror.backendRef") &&
			strings.Contains(p.Message, "the mirror is left out")
	}
	if !resolved {
		t.Errorf("no ResolvedRefs Problem for the missing mirror in %v", problems)
	}
	mirrors := map[string][]model.Mirror{}
	for _, srv := range m.Servers {
		for _, l := range srv.Locations {
			if l.Action.Proxy == nil || l.Action.Proxy.Backend != "default/svc-a/80" {
				t.Errorf("%s: action %+v, want the rule's backend", l.Match.Path, l.Action)
			}
			if l.Policy != nil {
				mirrors[l.Match.Path] = l.Policy.Mirrors
			}
		}
	}
	want := map[string][]model.Mirror{
		"/two": {{Backend: "default/svc-b/80", RequestBody: true, Percent: 100}, {Backend: "default/svc-c/80", RequestBody: true, Percent: 20}},
	}
	if !reflect.DeepEqual(mirrors, want) {
		t.Errorf("mirrors %+v, want %+v", mirrors, want)
	}
	backends := map[string]int{}
	for _, b := range m.Backends {
		backends[b.Key] = len(b.Endpoints)
	}
	for _, key := range []string{"default/svc-a/80", "default/svc-b/80", "default/svc-c/80"} {
		if backends[key] != 1 {
			t.Errorf("backend %s: %d endpoints, want 1 (backends %v)", key, backends[key], backends)
		}
	}
}
