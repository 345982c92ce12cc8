package gateway

import (
	"reflect"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// filtered is backendRef name with filters of its own.
func filtered(name string, weight int32, fs ...gwv1.HTTPRouteFilter) gwv1.HTTPBackendRef {
	b := backendRef(name, weight)
	b.Filters = fs
	return b
}

func setHeader(name, value string) gwv1.HTTPRouteFilter {
	return reqHeaders(gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{{Name: gwv1.HTTPHeaderName(name), Value: value}}})
}

// HTTPBackendRef.Filters: RequestHeaderModifier served
// (HTTPRouteBackendRequestHeaderModification), after the rule's own; the
// rule's policy applies the edits when every backend has the same, the
// targets carry them otherwise; every other filter type is refused.
func TestTranslateBackendFilters(t *testing.T) {
	v1 := &Backend{Namespace: "infra", Service: "infra-backend-v1", Port: 8080}
	v2 := &Backend{Namespace: "infra", Service: "infra-backend-v2", Port: 8080}
	set := func(n, v string) model.HeaderEdit {
		return model.HeaderEdit{Name: n, Action: model.HeaderSet, Value: model.HeaderValue(v)}
	}
	rule := func(refs ...gwv1.HTTPBackendRef) gwv1.HTTPRouteRule { return gwv1.HTTPRouteRule{BackendRefs: refs} }
	route := func(r gwv1.HTTPRouteRule) *gwv1.HTTPRoute { return newHTTPRoute("r", r) }
	targets := func(pol *model.Policy, want ...Target) func(*testing.T, *RouteRules, []model.Problem) {
		return func(t *testing.T, r *RouteRules, ps []model.Problem) {
			t.Helper()
			if len(ps) > 0 {
				t.Errorf("problems: %v", ps)
			}
			rl := onlyRule(t, r)
			if !reflect.DeepEqual(rl.Targets, want) {
				t.Errorf("targets %+v, want %+v", rl.Targets, want)
			}
			if !reflect.DeepEqual(rl.Policy, pol) {
				t.Errorf("policy %#v, want %#v", rl.Policy, pol)
			}
		}
	}
	setSnippet := func(n, v string) *model.Policy {
		return &model.Policy{Snippet: &model.Snippet{ProxySetHeaders: []model.TemplateHeader{{Name: n, Value: lit(v)}}}}
	}
	runRows(t, []routeRow{
		// One backendRef with the filter (httproute-request-header-modifier-backend):
		// the location applies it, as a rule's.
		{"one backend", route(rule(filtered("infra-backend-v1", 1, setHeader("X-Header-Set", "v")))),
			targets(setSnippet("X-Header-Set", "v"), Target{Backend: v1, Weight: 1})},
		// The rule's, then the backend's: a set and a later add are one set.
		{"after the rule's", route(withFilters(rule(filtered("infra-backend-v1", 1, reqHeaders(gwv1.HTTPHeaderFilter{
			Add: []gwv1.HTTPHeader{{Name: "x-a", Value: "2"}}}))), setHeader("X-A", "1"))),
			targets(setSnippet("X-A", "1,2"), Target{Backend: v1, Weight: 1})},
		// The same filter on every backend: the location applies it.
		{"same on each", route(rule(filtered("infra-backend-v1", 1, setHeader("X", "v")), filtered("infra-backend-v2", 1, setHeader("X", "v")))),
			targets(setSnippet("X", "v"), Target{Backend: v1, Weight: 1}, Target{Backend: v2, Weight: 1})},
		// Different filters (httproute-request-header-modifier-backend-weights):
		// each target carries its own, the policy none.
		{"each its own", route(rule(filtered("infra-backend-v1", 10, setHeader("Backend", "infra-backend-v1")),
			filtered("infra-backend-v2", 10, setHeader("Backend", "infra-backend-v2")))),
			targets(nil, Target{Backend: v1, Weight: 10, Headers: model.RequestHeaders{set("Backend", "infra-backend-v1")}},
				Target{Backend: v2, Weight: 10, Headers: model.RequestHeaders{set("Backend", "infra-backend-v2")}})},
		// The rule's filters stay the location's (its requests to every
		// backend, and its mirrors' copies); each target carries only its
		// own edits, a backend without any none.
		{"rule's and their own", route(withFilters(rule(filtered("infra-backend-v1", 1, setHeader("B", "1")), backendRef("infra-backend-v2")),
			setHeader("A", "r"), respHeaders(gwv1.HTTPHeaderFilter{Remove: []string{"Server"}}))),
			targets(&model.Policy{Snippet: &model.Snippet{ProxySetHeaders: []model.TemplateHeader{{Name: "A", Value: lit("r")}}, ProxyHideHeaders: []string{"Server"}}},
				Target{Backend: v1, Weight: 1, Headers: model.RequestHeaders{set("B", "1")}},
				Target{Backend: v2, Weight: 1})},
		// An invalid backendRef's share answers 500; the other backend alone
		// keeps the location's path.
		{"invalid other", route(rule(filtered("infra-backend-v1", 1, setHeader("X", "v")), filtered("nonexistent", 1, setHeader("X", "w")))),
			func(t *testing.T, r *RouteRules, ps []model.Problem) {
				hasProblem(t, ps, routeCondResolvedRefs, routeReasonBackendNotFound, "does not exist")
				if rl := onlyRule(t, r); !reflect.DeepEqual(rl.Policy, setSnippet("X", "v")) || rl.Targets[0].Headers != nil {
					t.Errorf("rule %+v", rl)
				}
			}},
		// Refused: other filter types, twice, hostile values.
		{"response", route(rule(filtered("infra-backend-v1", 1, respHeaders(gwv1.HTTPHeaderFilter{Remove: []string{"X"}})))),
			refused(routeReasonUnsupportedValue, "ResponseHeaderModifier filters of one backendRef are not supported")},
		{"mirror", route(rule(filtered("infra-backend-v1", 1, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestMirror,
			RequestMirror: &gwv1.HTTPRequestMirrorFilter{BackendRef: backendRef("infra-backend-v2").BackendObjectReference}}))),
			refused(routeReasonUnsupportedValue, "RequestMirror filters of one backendRef")},
		{"extension", route(rule(filtered("infra-backend-v1", 1, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterExtensionRef,
			ExtensionRef: &gwv1.LocalObjectReference{Name: "x"}}))), refused(routeReasonUnsupportedValue, "ExtensionRef filters of one backendRef")},
		{"twice", route(rule(filtered("infra-backend-v1", 1, setHeader("X", "1"), setHeader("Y", "2")))), refused(routeReasonUnsupportedValue, "a second")},
		{"no modifier", route(rule(filtered("infra-backend-v1", 1, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestHeaderModifier}))),
			refused(routeReasonUnsupportedValue, "requestHeaderModifier is required")},
		{"value CRLF", route(rule(filtered("infra-backend-v1", 1, setHeader("X", "a\r\nInjected: 1")))), refused(routeReasonUnsupportedValue, "set[0]")},
		{"value dollar", route(rule(filtered("infra-backend-v1", 1, setHeader("X", "$remote_addr")))), refused(routeReasonUnsupportedValue, "'$'")},
		{"name", route(rule(filtered("infra-backend-v1", 1, setHeader("X y", "v")))), refused(routeReasonUnsupportedValue, "set[0]")},
	})
}

// A location whose targets carry edits splits with them: the same edits
// share a header set, a target without edits has none.
func TestComposeBackendHeaders(t *testing.T) {
	r := newHTTPRoute("r", gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{
		filtered("v1", 10, setHeader("Backend", "v1")), filtered("v2", 10, setHeader("Backend", "v2")),
		filtered("v3", 10, setHeader("Backend", "v1")), backendRef("v4")}})
	locs, ps := composeLocations(t, translateRoutes(t, r))
	if len(ps) > 0 || len(locs) != 1 {
		t.Fatalf("locations %v problems %v", locs, ps)
	}
	p := locs[0].Action.Proxy
	if p == nil || p.Split == nil {
		t.Fatalf("action %+v", locs[0].Action)
	}
	s := p.Split
	want := []model.Target{{Backend: "infra/v1/8080", Weight: 10, Headers: 1}, {Backend: "infra/v2/8080", Weight: 10, Headers: 2},
		{Backend: "infra/v3/8080", Weight: 10, Headers: 1}, {Backend: "infra/v4/8080", Weight: 1}}
	if !reflect.DeepEqual(s.Default, want) || len(s.Headers) != 2 || s.Headers[1][0].Value != "v2" {
		t.Errorf("split %+v", s)
	}
	if locs[0].Policy != nil {
		t.Errorf("policy %+v", locs[0].Policy)
	}

	// One backend of one rule: no split, the location's policy.
	locs, _ = composeLocations(t, translateRoutes(t, newHTTPRoute("r", gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{
		filtered("v1", 1, setHeader("Backend", "v1"))}})))
	if a := locs[0].Action; a.Proxy == nil || a.Proxy.Split != nil || locs[0].Policy == nil {
		t.Errorf("action %+v policy %+v", a, locs[0].Policy)
	}
}

// GRPCBackendRef.Filters: the same.
func TestTranslateGRPCBackendFilters(t *testing.T) {
	ref := func(name, value string) gwv1.GRPCBackendRef {
		return gwv1.GRPCBackendRef{BackendRef: backendRef(name).BackendRef, Filters: []gwv1.GRPCRouteFilter{{Type: gwv1.GRPCRouteFilterRequestHeaderModifier,
			RequestHeaderModifier: &gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{{Name: "Backend", Value: value}}}}}}
	}
	r, ps := TranslateGRPCRoute(newGRPCRoute(gwv1.GRPCRouteRule{BackendRefs: []gwv1.GRPCBackendRef{ref("v1", "one"), ref("v2", "two")}}), testEnv)
	if len(ps) > 0 {
		t.Fatalf("problems %v", ps)
	}
	rl := onlyRule(t, r)
	if len(rl.Targets) != 2 || rl.Targets[1].Headers[0].Value != "two" {
		t.Errorf("targets %+v", rl.Targets)
	}
}
