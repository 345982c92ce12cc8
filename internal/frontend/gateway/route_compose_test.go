package gateway

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

var testListener = RouteListener{Owner: model.ObjectRef{Kind: "Gateway", Namespace: "infra", Name: "same-namespace"}, Name: "http", Host: "example.com", Port: 80}

func translateRoutes(t *testing.T, rs ...*gwv1.HTTPRoute) []*RouteRules {
	t.Helper()
	var out []*RouteRules
	for _, r := range rs {
		tr, ps := TranslateHTTPRoute(r, testEnv)
		if tr == nil {
			t.Fatalf("%s not served: %v", r.Name, ps)
		}
		out = append(out, tr)
	}
	return out
}

func toBackend(backend string, rule gwv1.HTTPRouteRule) gwv1.HTTPRouteRule {
	rule.BackendRefs = []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{
		Name: gwv1.ObjectName(backend), Port: routePtr(gwv1.PortNumber(8080))}}}}
	return rule
}

// pick is the backend key (or "status N", or "redirect") the location
// gives a request whose conditions hold as holds says.
func pickTarget(loc *model.Location, holds func(model.Condition) bool) string {
	target := func(ts []model.Target, s *model.Split) string {
		t := ts[0]
		if t.Answer == 0 {
			return t.Backend
		}
		a := s.Answers[t.Answer-1]
		if a.Redirect != nil {
			return "redirect"
		}
		return fmt.Sprint("status ", a.Return.Status)
	}
	a := loc.Action
	switch {
	case a.Redirect != nil:
		return "redirect"
	case a.Return != nil:
		return fmt.Sprint("status ", a.Return.Status)
	case a.Proxy.Split == nil:
		return a.Proxy.Backend
	}
	s := a.Proxy.Split
	for _, r := range s.Rules {
		all := true
		for _, c := range r.Conditions {
			all = all && holds(c)
		}
		if all {
			return target(r.Targets, s)
		}
	}
	return target(s.Default, s)
}

// request holds the conditions of headers and method.
func requestHolds(method string, headers ...string) func(model.Condition) bool {
	return func(c model.Condition) bool {
		switch c.Kind {
		case model.ConditionVariable:
			return c.Value == method
		case model.ConditionHeader:
			for _, h := range headers {
				n, v, _ := strings.Cut(h, "=")
				if strings.EqualFold(n, c.Name) && v == c.Value {
					return true
				}
			}
		}
		return false
	}
}

// serve is the server's answer for path: nginx's location choice (the
// model's Server.Match), then the split.
func serveLocations(locs []*model.Location, path string, holds func(model.Condition) bool) string {
	srv := &model.Server{Locations: locs}
	l := srv.Match(path)
	if l == nil {
		return "no location"
	}
	return pickTarget(l, holds)
}

func composeLocations(t *testing.T, routes []*RouteRules) ([]*model.Location, []model.Problem) {
	t.Helper()
	var locs []*model.Location
	var problems []model.Problem
	for _, pe := range Compose(routes) {
		l, ps := pe.Location(testListener)
		problems = append(problems, ps...)
		if l != nil {
			locs = append(locs, l)
		}
	}
	return locs, problems
}

func TestComposePrecedence(t *testing.T) {
	p := func(typ gwv1.PathMatchType, v string) gwv1.HTTPRouteRule { return proxyRule(pathMatch(typ, v)) }
	// httproute-path-match-order.yaml.
	order := newHTTPRoute("path-matching-order",
		toBackend("v1", p(gwv1.PathMatchExact, "/match")), toBackend("v2", p(gwv1.PathMatchExact, "/match/exact")),
		toBackend("v3", p(gwv1.PathMatchExact, "/match/exact/one")), toBackend("v3", p(gwv1.PathMatchPathPrefix, "/match/")),
		toBackend("v1", p(gwv1.PathMatchPathPrefix, "/match/prefix/")), toBackend("v2", p(gwv1.PathMatchPathPrefix, "/match/prefix/one")))
	// httproute-matching-across-routes.yaml: matching-part1 and -part2.
	part1 := newHTTPRoute("matching-part1", toBackend("v1", gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{pathMatch(gwv1.PathMatchPathPrefix, "/"),
		{Headers: []gwv1.HTTPHeaderMatch{headerMatch("version", "one")}}}}))
	part2 := newHTTPRoute("matching-part2", toBackend("v2", gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{pathMatch(gwv1.PathMatchPathPrefix, "/v2"),
		{Headers: []gwv1.HTTPHeaderMatch{headerMatch("version", "two")}}}}))
	// Method, then header count, then query count; then the oldest route.
	method := newHTTPRoute("method", toBackend("post", proxyRule(gwv1.HTTPRouteMatch{Method: routePtr(gwv1.HTTPMethodPost)})),
		toBackend("one-header", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("a", "1")}})),
		toBackend("two-headers", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("a", "1"), headerMatch("b", "2")}})))
	older := newHTTPRoute("zz-older", toBackend("older", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("c", "3")}})))
	older.CreationTimestamp = metav1.NewTime(time.Unix(10, 0))
	newer := newHTTPRoute("aa-newer", toBackend("newer", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("c", "3")}})))
	sameAge1 := newHTTPRoute("b", toBackend("b", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("d", "4")}})))
	sameAge2 := newHTTPRoute("a", toBackend("a", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("d", "4")}})))

	for _, row := range []struct {
		name   string
		routes []*gwv1.HTTPRoute
		path   string
		holds  func(model.Condition) bool
		want   string
	}{
		{"exact", []*gwv1.HTTPRoute{order}, "/match", requestHolds("GET"), "infra/v1/8080"},
		{"exact deeper", []*gwv1.HTTPRoute{order}, "/match/exact", requestHolds("GET"), "infra/v2/8080"},
		{"exact deepest", []*gwv1.HTTPRoute{order}, "/match/exact/one", requestHolds("GET"), "infra/v3/8080"},
		{"prefix below exact", []*gwv1.HTTPRoute{order}, "/match/exact/two", requestHolds("GET"), "infra/v3/8080"},
		{"longer prefix", []*gwv1.HTTPRoute{order}, "/match/prefix/one/x", requestHolds("GET"), "infra/v2/8080"},
		{"prefix element-wise", []*gwv1.HTTPRoute{order}, "/match/prefix/onex", requestHolds("GET"), "infra/v1/8080"},
		{"no match", []*gwv1.HTTPRoute{order}, "/other", requestHolds("GET"), "no location"},
		{"across routes v2 path", []*gwv1.HTTPRoute{part1, part2}, "/v2/example", requestHolds("GET"), "infra/v2/8080"},
		{"across routes v1", []*gwv1.HTTPRoute{part1, part2}, "/", requestHolds("GET"), "infra/v1/8080"},
		{"across routes header", []*gwv1.HTTPRoute{part1, part2}, "/", requestHolds("GET", "version=two"), "infra/v2/8080"},
		{"across routes header falls back", []*gwv1.HTTPRoute{part1, part2}, "/v2x", requestHolds("GET", "version=one"), "infra/v1/8080"},
		{"method first", []*gwv1.HTTPRoute{method}, "/", requestHolds("POST", "a=1", "b=2"), "infra/post/8080"},
		{"more headers", []*gwv1.HTTPRoute{method}, "/", requestHolds("GET", "a=1", "b=2"), "infra/two-headers/8080"},
		{"fewer headers", []*gwv1.HTTPRoute{method}, "/", requestHolds("GET", "a=1"), "infra/one-header/8080"},
		{"no rule holds: 404", []*gwv1.HTTPRoute{method}, "/", requestHolds("GET"), "status 404"},
		{"oldest route", []*gwv1.HTTPRoute{newer, older}, "/", requestHolds("GET", "c=3"), "infra/older/8080"},
		{"alphabetical", []*gwv1.HTTPRoute{sameAge1, sameAge2}, "/", requestHolds("GET", "d=4"), "infra/a/8080"},
	} {
		t.Run(row.name, func(t *testing.T) {
			locs, ps := composeLocations(t, translateRoutes(t, row.routes...))
			if len(ps) > 0 {
				t.Errorf("problems: %v", ps)
			}
			if got := serveLocations(locs, row.path, row.holds); got != row.want {
				t.Errorf("%s: got %s, want %s", row.path, got, row.want)
			}
		})
	}
}

func TestComposeAnswers(t *testing.T) {
	rh := func(r gwv1.HTTPRouteRule, name string) gwv1.HTTPRouteRule {
		return withFilters(r, reqHeaders(gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{{Name: gwv1.HTTPHeaderName(name), Value: "v"}}}))
	}
	headerV2 := gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("version", "two")}}
	red := redirectRule(gwv1.HTTPRequestRedirectFilter{Hostname: routePtr(gwv1.PreciseHostname("example.org"))})
	red.Matches = []gwv1.HTTPRouteMatch{headerV2}

	t.Run("redirect rule", func(t *testing.T) {
		locs, ps := composeLocations(t, translateRoutes(t, newHTTPRoute("r", red, toBackend("v1", proxyRule()))))
		if len(ps) > 0 || len(locs) != 1 {
			t.Fatalf("locations %v problems %v", locs, ps)
		}
		if got := pickTarget(locs[0], requestHolds("GET", "version=two")); got != "redirect" {
			t.Errorf("got %s", got)
		}
		if got := pickTarget(locs[0], requestHolds("GET")); got != "infra/v1/8080" {
			t.Errorf("got %s", got)
		}
	})
	t.Run("invalid backend share", func(t *testing.T) {
		r := newHTTPRoute("r", gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{backendRef("infra-backend-v1"), backendRef("nonexistent")}})
		tr, _ := TranslateHTTPRoute(r, testEnv)
		locs, _ := composeLocations(t, []*RouteRules{tr})
		s := locs[0].Action.Proxy.Split
		want := []model.Target{{Backend: "infra/infra-backend-v1/8080", Weight: 1}, model.AnswerTarget(0, 1)}
		if !reflect.DeepEqual(s.Default, want) || s.Answers[0].Return.Status != 500 || locs[0].Action.Proxy.Backend != "infra/infra-backend-v1/8080" {
			t.Errorf("split %+v", s)
		}
	})
	t.Run("no backend", func(t *testing.T) {
		locs, _ := composeLocations(t, translateRoutes(t, newHTTPRoute("r")))
		if a := locs[0].Action; a.Return == nil || a.Return.Status != 500 {
			t.Errorf("action %+v", a)
		}
	})
	t.Run("filters differ", func(t *testing.T) {
		locs, ps := composeLocations(t, translateRoutes(t, newHTTPRoute("r", rh(toBackend("v2", proxyRule(headerV2)), "X-A"), rh(toBackend("v1", proxyRule()), "X-B"))))
		hasProblem(t, ps, routeCondPartiallyInvalid, routeReasonUnsupportedValue, "filters, timeouts or retry differ")
		if got := pickTarget(locs[0], requestHolds("GET")); got != "status 404" {
			t.Errorf("got %s", got)
		}
	})
	t.Run("split key", func(t *testing.T) {
		locs, _ := composeLocations(t, translateRoutes(t, newHTTPRoute("r", toBackend("v2", proxyRule(headerV2)), toBackend("v1", proxyRule()))))
		s := locs[0].Action.Proxy.Split
		if s.Source != testListener.Owner || s.Route != "http example.com Prefix /" {
			t.Errorf("split %+v", s)
		}
	})
	t.Run("too many rules", func(t *testing.T) {
		var rules []gwv1.HTTPRouteRule
		for i := range model.MaxSplitRules + 1 {
			rules = append(rules, toBackend("v1", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("h", fmt.Sprint(i))}})))
		}
		rs := translateRoutes(t, newHTTPRoute("r", rules[:16]...), newHTTPRoute("s", rules[16:32]...), newHTTPRoute("u", rules[32:]...))
		locs, ps := composeLocations(t, rs)
		hasProblem(t, ps, routeCondPartiallyInvalid, routeReasonUnsupportedValue, "more than 32")
		if n := len(locs[0].Action.Proxy.Split.Rules); n != model.MaxSplitRules {
			t.Errorf("%d rules", n)
		}
	})
}
