package gateway

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

func routePtr[T any](v T) *T { return &v }

// testEnv knows every Service but "nonexistent", with port 8080 only, in
// every namespace, and permits references to namespace "granted".
var testEnv = RouteEnv{
	Permitted: func(from, to RefEnd) bool {
		return to.Namespace == "granted" && from.Kind == "HTTPRoute" && to.Kind == "Service"
	},
	ServicePort: func(ns, name string, port int32) (bool, bool) {
		if name == "nonexistent" {
			return false, false
		}
		return true, port == 8080
	},
}

// route makes an HTTPRoute in namespace "infra" of the rules.
func newHTTPRoute(name string, rules ...gwv1.HTTPRouteRule) *gwv1.HTTPRoute {
	return &gwv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1000, 0))},
		Spec:       gwv1.HTTPRouteSpec{Rules: rules},
	}
}

func backendRef(name string, weight ...int32) gwv1.HTTPBackendRef {
	b := gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{
		Name: gwv1.ObjectName(name), Port: routePtr(gwv1.PortNumber(8080))}}}
	if len(weight) > 0 {
		b.Weight = routePtr(weight[0])
	}
	return b
}

func pathMatch(t gwv1.PathMatchType, v string) gwv1.HTTPRouteMatch {
	return gwv1.HTTPRouteMatch{Path: &gwv1.HTTPPathMatch{Type: routePtr(t), Value: routePtr(v)}}
}

func headerMatch(name, value string) gwv1.HTTPHeaderMatch {
	return gwv1.HTTPHeaderMatch{Name: gwv1.HTTPHeaderName(name), Value: value}
}

// rule makes a rule of matches proxying to infra-backend-v1.
func proxyRule(matches ...gwv1.HTTPRouteMatch) gwv1.HTTPRouteRule {
	return gwv1.HTTPRouteRule{Matches: matches, BackendRefs: []gwv1.HTTPBackendRef{backendRef("infra-backend-v1")}}
}

func withFilters(r gwv1.HTTPRouteRule, fs ...gwv1.HTTPRouteFilter) gwv1.HTTPRouteRule {
	r.Filters = fs
	return r
}

// hasProblem fails unless ps has a Problem of condition and reason whose
// message holds msg.
func hasProblem(t *testing.T, ps []model.Problem, cond, reason, msg string) {
	t.Helper()
	for _, p := range ps {
		if c := p.Condition; c != nil && c.Type == cond && c.Reason == reason && strings.Contains(p.Message, msg) {
			return
		}
	}
	t.Errorf("no %s/%s Problem holding %q in %v", cond, reason, msg, ps)
}

// onlyRule returns the route's one rule.
func onlyRule(t *testing.T, r *RouteRules) *Rule {
	t.Helper()
	if r == nil || len(r.Rules) != 1 {
		t.Fatalf("want one rule, got %+v", r)
	}
	return &r.Rules[0]
}
