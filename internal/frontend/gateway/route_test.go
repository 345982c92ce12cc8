package gateway

import (
	"reflect"
	"strings"
	"testing"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// routeRow is one rule of httproute_types.go (the field it cites), as
// the conformance suite's HTTPRoute tests exercise it.
type routeRow struct {
	name  string
	route *gwv1.HTTPRoute
	check func(t *testing.T, r *RouteRules, ps []model.Problem)
}

func runRows(t *testing.T, rows []routeRow) {
	t.Helper()
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r, ps := TranslateHTTPRoute(row.route, testEnv)
			row.check(t, r, ps)
		})
	}
}

// wantPath checks the one rule's one match's path and conditions.
func wantPath(want model.Match, conds ...model.Condition) func(*testing.T, *RouteRules, []model.Problem) {
	return func(t *testing.T, r *RouteRules, ps []model.Problem) {
		t.Helper()
		if len(ps) > 0 {
			t.Errorf("problems: %v", ps)
		}
		rule := onlyRule(t, r)
		if len(rule.Matches) != 1 || rule.Matches[0].Path != want || !reflect.DeepEqual(rule.Matches[0].Conditions, conds) {
			t.Errorf("matches %+v, want path %+v conditions %+v", rule.Matches, want, conds)
		}
	}
}

// refused checks that the route is not served, with an Accepted False
// Problem of reason holding msg.
func refused(reason, msg string) func(*testing.T, *RouteRules, []model.Problem) {
	return func(t *testing.T, r *RouteRules, ps []model.Problem) {
		t.Helper()
		if r != nil {
			t.Errorf("route served: %+v", r)
		}
		hasProblem(t, ps, routeCondAccepted, reason, msg)
		for _, p := range ps {
			if p.Condition != nil && p.Condition.Type == routeCondAccepted && !p.Rejected {
				t.Errorf("Accepted Problem not Rejected: %v", p)
			}
		}
	}
}

func TestTranslateMatches(t *testing.T) {
	long := make([]gwv1.HTTPRouteMatch, 65)
	var many []gwv1.HTTPRouteRule
	for range 3 {
		many = append(many, proxyRule(long[:50]...))
	}
	var sixteenHeaders []gwv1.HTTPHeaderMatch
	for i := range 16 {
		sixteenHeaders = append(sixteenHeaders, headerMatch("h"+strings.Repeat("x", i), "v"))
	}
	runRows(t, []routeRow{
		// HTTPRouteSpec.Rules default: one rule, PathPrefix "/", no
		// backendRefs (so 500, HTTPRouteRule.BackendRefs).
		{"rules default", newHTTPRoute("r"), func(t *testing.T, r *RouteRules, ps []model.Problem) {
			rule := onlyRule(t, r)
			if rule.Matches[0].Path != (model.Match{Type: model.Prefix, Path: "/"}) || !reflect.DeepEqual(rule.Targets, []Target{{Status: 500, Weight: 1}}) {
				t.Errorf("got %+v", rule)
			}
		}},
		// HTTPRouteRule.Matches default: PathPrefix "/".
		{"matches default", newHTTPRoute("r", proxyRule()), wantPath(model.Match{Type: model.Prefix, Path: "/"})},
		// HTTPRouteMatch.Path default (a match of headers only).
		{"path default", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("version", "one")}})),
			wantPath(model.Match{Type: model.Prefix, Path: "/"}, model.Condition{Kind: model.ConditionHeader, Name: "version", Match: model.MatchExact, Value: "one"})},
		// PathMatchExact (httproute-exact-path-matching).
		{"exact", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchExact, "/exact"))), wantPath(model.Match{Type: model.Exact, Path: "/exact"})},
		// PathMatchPathPrefix: a trailing "/" is ignored (httproute-path-match-order's /match/).
		{"prefix trailing slash", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchPathPrefix, "/match/"))), wantPath(model.Match{Type: model.Prefix, Path: "/match"})},
		// PathMatchRegularExpression: the whole path, ParseRegex's grammar.
		{"regex", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchRegularExpression, "^/v[0-9]+/.*"))), wantPath(model.Match{Type: model.Regex, Path: "/v[0-9]+/.*$"})},
		{"regex anchored", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchRegularExpression, "/a$"))), wantPath(model.Match{Type: model.Regex, Path: "/a$"})},
		// HTTPPathMatch's character set allows ; $ ' and %XX, which the model's path grammar does not.
		{"path semicolon", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchPathPrefix, "/a;b"))), refused(routeReasonUnsupportedValue, "matches[0].path.value")},
		{"path dollar", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchExact, "/a$host"))), refused(routeReasonUnsupportedValue, "path.value")},
		{"path percent", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchExact, "/a%2e"))), refused(routeReasonUnsupportedValue, "path.value")},
		{"regex brace", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchRegularExpression, "/a{"))), refused(routeReasonUnsupportedValue, "path.value")},
		{"regex block", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchRegularExpression, "/a;} location / {"))), refused(routeReasonUnsupportedValue, "path.value")},
		{"regex lookahead", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchRegularExpression, "/(?=a)"))), refused(routeReasonUnsupportedValue, "path.value")},
		// PathMatchType: unknown values are UnsupportedValue.
		{"path type unknown", newHTTPRoute("r", proxyRule(pathMatch("Glob", "/a"))), refused(routeReasonUnsupportedValue, `type "Glob"`)},
		// HTTPHeaderMatch: Exact and RegularExpression (httproute-header-matching).
		{"header regex", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{{Name: "Version", Type: routePtr(gwv1.HeaderMatchRegularExpression), Value: "^v[12]"}}})),
			wantPath(model.Match{Type: model.Prefix, Path: "/"}, model.Condition{Kind: model.ConditionHeader, Name: "Version", Match: model.MatchRegex, Value: "^v[12]"})},
		// HTTPHeaderMatch.Name: only the first of equivalent names counts.
		{"header duplicate", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("Version", "one"), headerMatch("version", "two")}})),
			wantPath(model.Match{Type: model.Prefix, Path: "/"}, model.Condition{Kind: model.ConditionHeader, Name: "Version", Match: model.MatchExact, Value: "one"})},
		// An RFC 9110 token name nginx drops (ignore_invalid_headers).
		{"header name token", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("x.y!", "v")}})), refused(routeReasonUnsupportedValue, "headers[0]")},
		{"header value CRLF", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("x", "a\r\nb: c")}})), refused(routeReasonUnsupportedValue, "headers[0]")},
		{"header value quote", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("x", `a"b`)}})), refused(routeReasonUnsupportedValue, "headers[0]")},
		{"header value long", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("x", strings.Repeat("a", 300))}})), refused(routeReasonUnsupportedValue, "headers[0]")},
		{"header regex dollar", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{{Name: "x", Type: routePtr(gwv1.HeaderMatchRegularExpression), Value: "a${x}"}}})), refused(routeReasonUnsupportedValue, "headers[0]")},
		{"header type unknown", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{{Name: "x", Type: routePtr(gwv1.HeaderMatchType("Prefix")), Value: "a"}}})), refused(routeReasonUnsupportedValue, `type "Prefix"`)},
		// HTTPQueryParamMatch (httproute-query-param-matching); names are exact, so "a" and "A" are two.
		{"query", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{QueryParams: []gwv1.HTTPQueryParamMatch{{Name: "animal", Value: "whale"}, {Name: "animal", Value: "dolphin"}}})),
			wantPath(model.Match{Type: model.Prefix, Path: "/"}, model.Condition{Kind: model.ConditionArgument, Name: "animal", Match: model.MatchExact, Value: "whale"})},
		{"query name dash", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{QueryParams: []gwv1.HTTPQueryParamMatch{{Name: "a-b", Value: "v"}}})), refused(routeReasonUnsupportedValue, "queryParams[0]")},
		// HTTPRouteMatch.Method (httproute-method-matching).
		{"method", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{Method: routePtr(gwv1.HTTPMethodPost)})),
			wantPath(model.Match{Type: model.Prefix, Path: "/"}, model.Condition{Kind: model.ConditionVariable, Name: "request_method", Match: model.MatchExact, Value: "POST"})},
		{"method unknown", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{Method: routePtr(gwv1.HTTPMethod("BREW"))})), refused(routeReasonUnsupportedValue, "method")},
		// 16 headers, 16 query parameters and a method exceed one split rule's conditions.
		{"too many conditions", newHTTPRoute("r", proxyRule(gwv1.HTTPRouteMatch{Headers: sixteenHeaders, Method: routePtr(gwv1.HTTPMethodGet)})), refused(routeReasonUnsupportedValue, "at most 16")},
		// HTTPRouteRule.Matches MaxItems=64; HTTPRouteSpec.Rules: at most 128 matches in all.
		{"64 matches", newHTTPRoute("r", proxyRule(long...)), refused(routeReasonUnsupportedValue, "at most 64")},
		{"128 matches", newHTTPRoute("r", many...), refused(routeReasonUnsupportedValue, "at most 128")},
		// Some rules invalid: PartiallyInvalid, the others served.
		{"partially invalid", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchExact, "/ok")), proxyRule(pathMatch(gwv1.PathMatchExact, "/a;b"))),
			func(t *testing.T, r *RouteRules, ps []model.Problem) {
				if rule := onlyRule(t, r); rule.Index != 0 {
					t.Errorf("served rule %d", rule.Index)
				}
				hasProblem(t, ps, routeCondPartiallyInvalid, routeReasonUnsupportedValue, "spec.rules[1]")
			}},
		// HTTPRouteRule.Name must be unique.
		{"rule names", newHTTPRoute("r", gwv1.HTTPRouteRule{Name: routePtr(gwv1.SectionName("a"))}, gwv1.HTTPRouteRule{Name: routePtr(gwv1.SectionName("a"))}),
			func(t *testing.T, r *RouteRules, ps []model.Problem) {
				if rule := onlyRule(t, r); rule.Name != "a" {
					t.Errorf("rule %+v", rule)
				}
				hasProblem(t, ps, routeCondPartiallyInvalid, routeReasonUnsupportedValue, "another rule's")
			}},
	})
}

func TestTranslateBackendRefs(t *testing.T) {
	withRefs := func(refs ...gwv1.HTTPBackendRef) *gwv1.HTTPRoute {
		return newHTTPRoute("r", gwv1.HTTPRouteRule{BackendRefs: refs})
	}
	targets := func(want ...Target) func(*testing.T, *RouteRules, []model.Problem) {
		return func(t *testing.T, r *RouteRules, ps []model.Problem) {
			t.Helper()
			if got := onlyRule(t, r).Targets; !reflect.DeepEqual(got, want) {
				t.Errorf("targets %+v, want %+v", got, want)
			}
		}
	}
	v1 := &Backend{Namespace: "infra", Service: "infra-backend-v1", Port: 8080}
	v2 := &Backend{Namespace: "infra", Service: "infra-backend-v2", Port: 8080}
	other := backendRef("infra-backend-v1")
	other.Namespace = routePtr(gwv1.Namespace("other"))
	granted := backendRef("infra-backend-v1")
	granted.Namespace = routePtr(gwv1.Namespace("granted"))
	kind := backendRef("infra-backend-v1")
	kind.Kind = routePtr(gwv1.Kind("ServiceImport"))
	kind.Group = routePtr(gwv1.Group("multicluster.x-k8s.io"))
	noPort := backendRef("infra-backend-v1")
	noPort.Port = routePtr(gwv1.PortNumber(9090))
	both := func(check ...func(*testing.T, *RouteRules, []model.Problem)) func(*testing.T, *RouteRules, []model.Problem) {
		return func(t *testing.T, r *RouteRules, ps []model.Problem) {
			for _, c := range check {
				c(t, r, ps)
			}
		}
	}
	problem := func(cond, reason, msg string) func(*testing.T, *RouteRules, []model.Problem) {
		return func(t *testing.T, _ *RouteRules, ps []model.Problem) { hasProblem(t, ps, cond, reason, msg) }
	}
	runRows(t, []routeRow{
		// BackendRef.Weight default 1 (httproute-weight).
		{"weights", withRefs(backendRef("infra-backend-v1", 70), backendRef("infra-backend-v2")), targets(Target{Backend: v1, Weight: 70}, Target{Backend: v2, Weight: 1})},
		// Weight 0: never picked.
		// A backend of weight 0 stays, with no share: a new weight is no new location.
		{"weight zero", withRefs(backendRef("infra-backend-v1", 0), backendRef("infra-backend-v2", 3)), targets(Target{Backend: v1, Weight: 0}, Target{Backend: v2, Weight: 3})},
		// All weights 0: 500.
		{"all zero", withRefs(backendRef("infra-backend-v1", 0)), targets(Target{Status: 500, Weight: 1})},
		// No backendRefs: 500 (httproute-omitted-backendrefs).
		{"none", withRefs(), targets(Target{Status: 500, Weight: 1})},
		// A missing Service: its share answers 500, BackendNotFound (httproute-invalid-nonexistent-backendref).
		{"missing service", withRefs(backendRef("nonexistent", 1), backendRef("infra-backend-v2", 1)),
			both(targets(Target{Status: 500, Weight: 1}, Target{Backend: v2, Weight: 1}), problem(routeCondResolvedRefs, routeReasonBackendNotFound, "does not exist"))},
		{"missing port", withRefs(noPort), both(targets(Target{Status: 500, Weight: 1}), problem(routeCondResolvedRefs, routeReasonBackendNotFound, "no port 9090"))},
		// Another kind: InvalidKind (httproute-invalid-backendref-unknown-kind).
		{"kind", withRefs(kind), both(targets(Target{Status: 500, Weight: 1}), problem(routeCondResolvedRefs, routeReasonInvalidKind, "ServiceImport"))},
		// Another namespace without a ReferenceGrant: RefNotPermitted (httproute-invalid-cross-namespace-backend-ref).
		{"not permitted", withRefs(other), both(targets(Target{Status: 500, Weight: 1}), problem(routeCondResolvedRefs, routeReasonRefNotPermitted, "ReferenceGrant"))},
		// With one (httproute-reference-grant).
		{"permitted", withRefs(granted), targets(Target{Backend: &Backend{Namespace: "granted", Service: "infra-backend-v1", Port: 8080}, Weight: 1})},
		// HTTPBackendRef.Filters: see route_backend_filters_test.go.
		{"backend filters", withRefs(gwv1.HTTPBackendRef{BackendRef: backendRef("infra-backend-v1").BackendRef,
			Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterURLRewrite}}}), refused(routeReasonUnsupportedValue, "filters of one backendRef")},
		// BackendRef.Weight bound (1,000,000).
		{"weight bound", withRefs(backendRef("infra-backend-v1", 1000001)), refused(routeReasonUnsupportedValue, "weight")},
	})
}

func TestTranslateTimeouts(t *testing.T) {
	withTimeouts := func(req, be string) *gwv1.HTTPRoute {
		r := proxyRule()
		r.Timeouts = &gwv1.HTTPRouteTimeouts{}
		if req != "" {
			r.Timeouts.Request = routePtr(gwv1.Duration(req))
		}
		if be != "" {
			r.Timeouts.BackendRequest = routePtr(gwv1.Duration(be))
		}
		return newHTTPRoute("r", r)
	}
	policy := func(read, retry time.Duration) func(*testing.T, *RouteRules, []model.Problem) {
		return func(t *testing.T, r *RouteRules, ps []model.Problem) {
			p := onlyRule(t, r).Policy
			if p == nil || p.Timeouts.Read != read || p.Timeouts.Send != read || p.Retry.Timeout != retry {
				t.Errorf("policy %+v, want read %s retry %s", p, read, retry)
			}
		}
	}
	runRows(t, []routeRow{
		// HTTPRouteTimeouts.Request (httproute-timeout-request).
		{"request", withTimeouts("500ms", ""), policy(500*time.Millisecond, 500*time.Millisecond)},
		// HTTPRouteTimeouts.BackendRequest (httproute-timeout-backend-request).
		{"backend request", withTimeouts("10s", "1s"), policy(time.Second, 10*time.Second)},
		// "0s" disables: the longest the model holds.
		{"zero", withTimeouts("0s", ""), policy(maxTimeout, maxTimeout)},
		{"backend longer", withTimeouts("1s", "2s"), refused(routeReasonUnsupportedValue, "longer than request")},
		{"bad duration", withTimeouts("1.5s", ""), refused(routeReasonUnsupportedValue, "not a Gateway API duration")},
		{"huge", withTimeouts("99999h", ""), refused(routeReasonUnsupportedValue, "longer than")},
	})
}

func TestTranslateRegexDollar(t *testing.T) {
	runRows(t, []routeRow{
		// A trailing "\" must not escape the added "$"; render refuses a "$" that is not the final anchor.
		{"trailing backslash", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchRegularExpression, `/a\`))), refused(routeReasonUnsupportedValue, "path.value")},
		{"escaped dollar", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchRegularExpression, `/a\$`))), refused(routeReasonUnsupportedValue, "final anchor")},
		{"inner dollar", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchRegularExpression, `/a$/b`))), refused(routeReasonUnsupportedValue, "final anchor")},
		{"class dollar", newHTTPRoute("r", proxyRule(pathMatch(gwv1.PathMatchRegularExpression, `/a[$]`))), refused(routeReasonUnsupportedValue, "final anchor")},
	})
}
