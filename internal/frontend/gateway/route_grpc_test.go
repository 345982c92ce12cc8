package gateway

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

func newGRPCRoute(rules ...gwv1.GRPCRouteRule) *gwv1.GRPCRoute {
	return &gwv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "g"}, Spec: gwv1.GRPCRouteSpec{Rules: rules}}
}

func grpcMethodRule(typ gwv1.GRPCMethodMatchType, service, method string) gwv1.GRPCRouteRule {
	mm := &gwv1.GRPCMethodMatch{Type: routePtr(typ)}
	if service != "" {
		mm.Service = routePtr(service)
	}
	if method != "" {
		mm.Method = routePtr(method)
	}
	return gwv1.GRPCRouteRule{Matches: []gwv1.GRPCRouteMatch{{Method: mm, Headers: []gwv1.GRPCHeaderMatch{{Name: "version", Value: "two"}}}},
		BackendRefs: []gwv1.GRPCBackendRef{{BackendRef: backendRef("grpc-infra-backend-v1").BackendRef}}}
}

// GRPCMethodMatch: Exact service and method, service alone, method alone,
// RegularExpression (grpcroute-exact-method-matching, -header-matching).
func TestTranslateGRPCRoute(t *testing.T) {
	for _, row := range []struct {
		name string
		rule gwv1.GRPCRouteRule
		want model.Match
	}{
		{"service and method", grpcMethodRule(gwv1.GRPCMethodMatchExact, "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho", "Echo"),
			model.Match{Type: model.Exact, Path: "/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/Echo"}},
		{"service", grpcMethodRule(gwv1.GRPCMethodMatchExact, "a.B", ""), model.Match{Type: model.Prefix, Path: "/a.B"}},
		{"method", grpcMethodRule(gwv1.GRPCMethodMatchExact, "", "Echo"), model.Match{Type: model.Regex, Path: "/[^/]+/Echo$"}},
		{"regex", grpcMethodRule(gwv1.GRPCMethodMatchRegularExpression, "a\\.[A-Z]+", ""), model.Match{Type: model.Regex, Path: "/a\\.[A-Z]+/[^/]+$"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			r, ps := TranslateGRPCRoute(newGRPCRoute(row.rule), testEnv)
			if len(ps) > 0 {
				t.Fatalf("problems %v", ps)
			}
			rule := onlyRule(t, r)
			if r.Ref.Kind != "GRPCRoute" || rule.Matches[0].Path != row.want || rule.Matches[0].Headers != 1 || rule.Policy.Protocol != model.ProtocolGRPC {
				t.Errorf("got %+v %+v", r.Ref, rule)
			}
		})
	}
	t.Run("hostile service", func(t *testing.T) {
		r, ps := TranslateGRPCRoute(newGRPCRoute(grpcMethodRule(gwv1.GRPCMethodMatchExact, "a;b", "Echo"), grpcMethodRule(gwv1.GRPCMethodMatchExact, "a", "B")), testEnv)
		if rule := onlyRule(t, r); rule.Index != 1 {
			t.Errorf("rule %+v", rule)
		}
		hasProblem(t, ps, routeCondPartiallyInvalid, routeReasonUnsupportedValue, "not a gRPC service name")
		if len(ps) != 1 || ps[0].Object.Kind != "GRPCRoute" {
			t.Errorf("problems %v", ps)
		}
	})
	// RequestMirror of a GRPCRoute: not served, the rule is.
	t.Run("mirror", func(t *testing.T) {
		rule := grpcMethodRule(gwv1.GRPCMethodMatchExact, "a.B", "")
		rule.Filters = []gwv1.GRPCRouteFilter{{Type: gwv1.GRPCRouteFilterRequestMirror,
			RequestMirror: &gwv1.HTTPRequestMirrorFilter{BackendRef: backendRef("grpc-infra-backend-v1").BackendObjectReference}}}
		r, ps := TranslateGRPCRoute(newGRPCRoute(rule), testEnv)
		if got := onlyRule(t, r); len(got.Mirrors) > 0 || len(got.Policy.Mirrors) > 0 || len(got.Targets) != 1 {
			t.Errorf("rule %+v", got)
		}
		hasProblem(t, ps, routeCondPartiallyInvalid, routeReasonUnsupportedValue, "RequestMirror is not served for GRPCRoutes")
	})
	t.Run("all refused", func(t *testing.T) {
		r, ps := TranslateGRPCRoute(newGRPCRoute(grpcMethodRule(gwv1.GRPCMethodMatchRegularExpression, "a{", "")), testEnv)
		if r != nil {
			t.Errorf("served %+v", r)
		}
		hasProblem(t, ps, routeCondAccepted, routeReasonUnsupportedValue, "path.value")
	})
}

// TestGRPCRouteRender: render takes a GRPCRoute's locations, gRPC to the
// backends, a split choosing on a header.
func TestGRPCRouteRender(t *testing.T) {
	catchAll := gwv1.GRPCRouteRule{BackendRefs: []gwv1.GRPCBackendRef{{BackendRef: backendRef("grpc-infra-backend-v2").BackendRef}}}
	r, ps := TranslateGRPCRoute(newGRPCRoute(grpcMethodRule(gwv1.GRPCMethodMatchExact, "a.B", ""), catchAll), testEnv)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	locs, ps := composeLocations(t, []*RouteRules{r})
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	out, err := renderLocations(locs, r.Ref)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, data := range out.Files {
		all.Write(data)
	}
	if n := strings.Count(all.String(), "grpc_pass"); n < 2 {
		t.Errorf("%d grpc_pass, want one per location", n)
	}
}

// A GRPCRoute's cross-namespace backendRef is permitted by a
// ReferenceGrant from GRPCRoutes, never by one from HTTPRoutes: the
// translation goes through HTTPRoute's, under the GRPCRoute's own kind.
func TestGRPCRouteReferenceGrantKind(t *testing.T) {
	rule := gwv1.GRPCRouteRule{BackendRefs: []gwv1.GRPCBackendRef{{BackendRef: backendRef("svc").BackendRef}}}
	rule.BackendRefs[0].Namespace = routePtr(gwv1.Namespace("granted"))
	for _, row := range []struct {
		fromKind string
		want     int // status of the share: 0 when proxied
	}{{"GRPCRoute", 0}, {"HTTPRoute", 500}} {
		env := testEnv
		env.Permitted = func(from, to RefEnd) bool { return to.Namespace == "granted" && from.Kind == row.fromKind }
		out, _ := TranslateGRPCRoute(newGRPCRoute(rule), env)
		if out == nil || len(out.Rules) != 1 || len(out.Rules[0].Targets) != 1 {
			t.Fatalf("grant from %s: %+v", row.fromKind, out)
		}
		if got := out.Rules[0].Targets[0]; got.Status != row.want || (row.want == 0) != (got.Backend != nil) {
			t.Errorf("grant from %s: target %+v, want status %d", row.fromKind, got, row.want)
		}
	}
}
