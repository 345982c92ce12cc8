package gateway

import (
	"reflect"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestTranslateRetry(t *testing.T) {
	withRetry := func(r gwv1.HTTPRouteRetry, timeouts *gwv1.HTTPRouteTimeouts) *gwv1.HTTPRoute {
		rule := proxyRule()
		rule.Retry, rule.Timeouts = &r, timeouts
		return newHTTPRoute("r", rule)
	}
	codes := func(cs ...int) []gwv1.HTTPRouteRetryStatusCode {
		var out []gwv1.HTTPRouteRetryStatusCode
		for _, c := range cs {
			out = append(out, gwv1.HTTPRouteRetryStatusCode(c))
		}
		return out
	}
	backoff := func(d string) *gwv1.Duration { return routePtr(gwv1.Duration(d)) }
	want := func(w model.Retry) func(*testing.T, *RouteRules, []model.Problem) {
		return func(t *testing.T, r *RouteRules, ps []model.Problem) {
			t.Helper()
			if len(ps) > 0 {
				t.Errorf("problems: %v", ps)
			}
			p := onlyRule(t, r).Policy
			if p == nil || !reflect.DeepEqual(p.Retry, w) {
				t.Errorf("policy %+v, want retry %+v", p, w)
			}
		}
	}
	route := func(attempts int, cs ...model.RetryCode) *model.RouteRetry {
		return &model.RouteRetry{Codes: cs, Attempts: attempts}
	}
	runRows(t, []routeRow{
		// HTTPRouteRetry.Codes and Attempts (httproute-retry).
		{"codes and attempts", withRetry(gwv1.HTTPRouteRetry{Codes: codes(500), Attempts: routePtr(3)}, nil),
			want(model.Retry{Route: route(3, 500)})},
		{"every 5xx nginx knows", withRetry(gwv1.HTTPRouteRetry{Codes: codes(504, 500, 503, 502, 500), Attempts: routePtr(2)}, nil),
			want(model.Retry{Route: route(2, 500, 502, 503, 504)})},
		// 4xx codes nginx can retry on (the spec's MAY).
		{"4xx", withRetry(gwv1.HTTPRouteRetry{Codes: codes(429, 404, 403)}, nil), want(model.Retry{Route: route(1, 403, 404, 429)})},
		// No codes: connection errors and timeouts only (the spec's SHOULD); attempts unset: 1.
		{"empty", withRetry(gwv1.HTTPRouteRetry{}, nil), want(model.Retry{Route: route(1)})},
		// Timeouts.Request bounds the whole (HTTPRouteRetryBackendTimeout).
		{"with timeouts", withRetry(gwv1.HTTPRouteRetry{Codes: codes(503), Attempts: routePtr(2)},
			&gwv1.HTTPRouteTimeouts{Request: routePtr(gwv1.Duration("10s")), BackendRequest: routePtr(gwv1.Duration("1s"))}),
			want(model.Retry{Timeout: 10 * time.Second, Route: route(2, 503)})},
		{"backoff 0", withRetry(gwv1.HTTPRouteRetry{Backoff: backoff("0s")}, nil), want(model.Retry{Route: route(1)})},
		{"max attempts", withRetry(gwv1.HTTPRouteRetry{Attempts: routePtr(model.MaxRetryAttempts)}, nil), want(model.Retry{Route: route(model.MaxRetryAttempts)})},
		// A code nginx cannot retry on leaves the rule out, naming it.
		{"code 501", withRetry(gwv1.HTTPRouteRetry{Codes: codes(500, 501)}, nil), refused(routeReasonUnsupportedValue, "retry.codes[1] 501: nginx retries only on 403, 404, 429, 500, 502, 503 and 504")},
		{"code 408", withRetry(gwv1.HTTPRouteRetry{Codes: codes(408)}, nil), refused(routeReasonUnsupportedValue, "retry.codes[0] 408")},
		{"too many attempts", withRetry(gwv1.HTTPRouteRetry{Attempts: routePtr(model.MaxRetryAttempts + 1)}, nil), refused(routeReasonUnsupportedValue, "retry.attempts 11")},
		{"zero attempts", withRetry(gwv1.HTTPRouteRetry{Attempts: routePtr(0)}, nil), refused(routeReasonUnsupportedValue, "retry.attempts 0")},
		// nginx cannot wait between tries, and the spec forbids retrying before the backoff.
		{"backoff", withRetry(gwv1.HTTPRouteRetry{Backoff: backoff("100ms")}, nil), refused(routeReasonUnsupportedValue, "retry.backoff 100ms: nginx retries at once")},
		{"bad backoff", withRetry(gwv1.HTTPRouteRetry{Backoff: backoff("1.5s")}, nil), refused(routeReasonUnsupportedValue, "not a Gateway API duration")},
	})
}

// Rules sharing a location must agree on retry, as on timeouts.
func TestComposeRetryDiffers(t *testing.T) {
	headerV2 := gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("version", "two")}}
	a := toBackend("v2", proxyRule(headerV2))
	a.Retry = &gwv1.HTTPRouteRetry{Attempts: routePtr(2)}
	locs, ps := composeLocations(t, translateRoutes(t, newHTTPRoute("r", a, toBackend("v1", proxyRule()))))
	hasProblem(t, ps, routeCondPartiallyInvalid, routeReasonUnsupportedValue, "filters, timeouts or retry differ")
	if p := locs[0].Policy; p == nil || p.Retry.Route == nil || p.Retry.Route.Attempts != 2 {
		t.Errorf("location policy %+v, want the first rule's retry", p)
	}
}

// FuzzTranslateRetry: whatever retry is written, a rule that is served
// holds a valid model.RouteRetry and render takes its location.
func FuzzTranslateRetry(f *testing.F) {
	f.Add(500, 502, 3, "0s")
	f.Add(501, 429, 0, "100ms")
	f.Add(-1, 1<<40, 1<<31, "1h1m1s1ms")
	f.Fuzz(func(t *testing.T, c1, c2, attempts int, backoff string) {
		rule := proxyRule()
		rule.Retry = &gwv1.HTTPRouteRetry{Codes: []gwv1.HTTPRouteRetryStatusCode{gwv1.HTTPRouteRetryStatusCode(c1), gwv1.HTTPRouteRetryStatusCode(c2)},
			Attempts: &attempts, Backoff: routePtr(gwv1.Duration(backoff))}
		r := newHTTPRoute("r", rule)
		tr, _ := TranslateHTTPRoute(r, testEnv)
		if tr == nil {
			return
		}
		rr := onlyRule(t, tr).Policy.Retry.Route
		if err := rr.Validate(); err != nil {
			t.Fatalf("retry %+v: %v", rr, err)
		}
		var locs []*model.Location
		for _, pe := range Compose([]*RouteRules{tr}) {
			loc, _ := pe.Location(testListener)
			locs = append(locs, loc)
		}
		if _, err := renderLocations(locs, tr.Ref); err != nil {
			t.Errorf("render: %v", err)
		}
	})
}
