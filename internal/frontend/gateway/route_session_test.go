package gateway

import (
	"strings"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// persistent is a rule of matches over backendRefs with sp.
func persistent(sp gwv1.SessionPersistence, refs []gwv1.HTTPBackendRef, matches ...gwv1.HTTPRouteMatch) gwv1.HTTPRouteRule {
	return gwv1.HTTPRouteRule{Matches: matches, BackendRefs: refs, SessionPersistence: &sp}
}

// wantSession checks the one rule's cookie, and that each of its backends
// carries it (so their keys are the rule's own).
func wantSession(want model.StickyCookie) func(*testing.T, *RouteRules, []model.Problem) {
	return func(t *testing.T, r *RouteRules, ps []model.Problem) {
		t.Helper()
		if len(ps) > 0 {
			t.Errorf("problems: %v", ps)
		}
		rule := onlyRule(t, r)
		if rule.Session == nil || *rule.Session != want {
			t.Fatalf("session %+v, want %+v", rule.Session, want)
		}
		for _, tg := range rule.Targets {
			if tg.Backend != nil && tg.Backend.Session != rule.Session {
				t.Errorf("backend %s: session %+v, want the rule's", tg.Backend.Key(), tg.Backend.Session)
			}
		}
	}
}

// The rows follow GEP-1619 and the SessionPersistence godoc of v1.6.3.
func TestTranslateSessionPersistence(t *testing.T) {
	one := []gwv1.HTTPBackendRef{backendRef("infra-backend-v1")}
	named := func(n string) *string { return &n }
	lifetime := func(l gwv1.CookieLifetimeType) *gwv1.CookieConfig {
		return &gwv1.CookieConfig{LifetimeType: &l}
	}
	dur := func(d string) *gwv1.Duration { v := gwv1.Duration(d); return &v }
	typ := func(s gwv1.SessionPersistenceType) *gwv1.SessionPersistenceType { return &s }
	// The default name: sessionPrefix and a digest of the route and rule.
	def := func(route, rule string) string {
		r, _ := TranslateHTTPRoute(newHTTPRoute(route, persistent(gwv1.SessionPersistence{}, one)), testEnv)
		n := onlyRule(t, r).Session.Name
		if !strings.HasPrefix(n, sessionPrefix) {
			t.Fatalf("default name %q", n)
		}
		return n
	}
	if def("a", "0") == def("b", "0") {
		t.Errorf("two routes share a default cookie name")
	}
	runRows(t, []routeRow{
		// Type Cookie is the default; Session the default lifetime (no Max-Age).
		{"defaults", newHTTPRoute("a", persistent(gwv1.SessionPersistence{}, one)),
			wantSession(model.StickyCookie{Name: def("a", "0"), Path: "/", SameSite: "Lax"})},
		{"sessionName", newHTTPRoute("r", persistent(gwv1.SessionPersistence{SessionName: named("JSESSIONID"), Type: typ(gwv1.CookieBasedSessionPersistence)}, one)),
			wantSession(model.StickyCookie{Name: "JSESSIONID", Path: "/", SameSite: "Lax"})},
		{"session lifetime", newHTTPRoute("r", persistent(gwv1.SessionPersistence{SessionName: named("s"), CookieConfig: lifetime(gwv1.SessionCookieLifetimeType)}, one)),
			wantSession(model.StickyCookie{Name: "s", Path: "/", SameSite: "Lax"})},
		// Permanent: absoluteTimeout is Max-Age, in whole seconds.
		{"permanent", newHTTPRoute("r", persistent(gwv1.SessionPersistence{SessionName: named("s"), AbsoluteTimeout: dur("5m"),
			CookieConfig: lifetime(gwv1.PermanentCookieLifetimeType)}, one)),
			wantSession(model.StickyCookie{Name: "s", Path: "/", MaxAge: 300, SameSite: "Lax"})},
		{"permanent, fraction of a second dropped", newHTTPRoute("r", persistent(gwv1.SessionPersistence{SessionName: named("s"), AbsoluteTimeout: dur("1s500ms"),
			CookieConfig: lifetime(gwv1.PermanentCookieLifetimeType)}, one)),
			wantSession(model.StickyCookie{Name: "s", Path: "/", MaxAge: 1, SameSite: "Lax"})},
		// Path: the route's path (GEP-1619), the longest shared by every match.
		{"prefix path", newHTTPRoute("r", persistent(gwv1.SessionPersistence{SessionName: named("s")}, one, pathMatch(gwv1.PathMatchPathPrefix, "/app/"))),
			wantSession(model.StickyCookie{Name: "s", Path: "/app", SameSite: "Lax"})},
		{"exact paths", newHTTPRoute("r", persistent(gwv1.SessionPersistence{SessionName: named("s")}, one,
			pathMatch(gwv1.PathMatchExact, "/app/a"), pathMatch(gwv1.PathMatchExact, "/app/b"))),
			wantSession(model.StickyCookie{Name: "s", Path: "/app", SameSite: "Lax"})},
		{"element-wise", newHTTPRoute("r", persistent(gwv1.SessionPersistence{SessionName: named("s")}, one,
			pathMatch(gwv1.PathMatchPathPrefix, "/app"), pathMatch(gwv1.PathMatchPathPrefix, "/apple"))),
			wantSession(model.StickyCookie{Name: "s", Path: "/", SameSite: "Lax"})},
		{"regex literal prefix", newHTTPRoute("r", persistent(gwv1.SessionPersistence{SessionName: named("s")}, one,
			pathMatch(gwv1.PathMatchRegularExpression, "/p1/p2/[a-z]+/p3"))),
			wantSession(model.StickyCookie{Name: "s", Path: "/p1/p2", SameSite: "Lax"})},
		{"several backendRefs", newHTTPRoute("r", persistent(gwv1.SessionPersistence{SessionName: named("s")},
			[]gwv1.HTTPBackendRef{backendRef("infra-backend-v1", 70), backendRef("infra-backend-v2", 30)})),
			wantSession(model.StickyCookie{Name: "s", Path: "/", SameSite: "Lax"})},

		{"header", newHTTPRoute("r", persistent(gwv1.SessionPersistence{Type: typ(gwv1.HeaderBasedSessionPersistence)}, one)),
			refused(routeReasonUnsupportedValue, "type Header: not supported")},
		{"unknown type", newHTTPRoute("r", persistent(gwv1.SessionPersistence{Type: typ("Ticket")}, one)),
			refused(routeReasonUnsupportedValue, "want Cookie")},
		{"session cookie with absoluteTimeout", newHTTPRoute("r", persistent(gwv1.SessionPersistence{AbsoluteTimeout: dur("1h")}, one)),
			refused(routeReasonUnsupportedValue, "absoluteTimeout: not supported by Causeway with a Session cookie")},
		{"permanent without absoluteTimeout", newHTTPRoute("r", persistent(gwv1.SessionPersistence{CookieConfig: lifetime(gwv1.PermanentCookieLifetimeType)}, one)),
			refused(routeReasonUnsupportedValue, "needs an absoluteTimeout")},
		{"permanent, under a second", newHTTPRoute("r", persistent(gwv1.SessionPersistence{AbsoluteTimeout: dur("500ms"),
			CookieConfig: lifetime(gwv1.PermanentCookieLifetimeType)}, one)),
			refused(routeReasonUnsupportedValue, "shorter than 1s")},
		{"permanent, bad duration", newHTTPRoute("r", persistent(gwv1.SessionPersistence{AbsoluteTimeout: dur("1d"),
			CookieConfig: lifetime(gwv1.PermanentCookieLifetimeType)}, one)),
			refused(routeReasonUnsupportedValue, "not a Gateway API duration")},
		{"unknown lifetime", newHTTPRoute("r", persistent(gwv1.SessionPersistence{CookieConfig: lifetime("Forever")}, one)),
			refused(routeReasonUnsupportedValue, "want Session or Permanent")},
		{"name outside the cookie grammar", newHTTPRoute("r", persistent(gwv1.SessionPersistence{SessionName: named("a b;c")}, one)),
			refused(routeReasonUnsupportedValue, "sessionName")},
		{"empty name", newHTTPRoute("r", persistent(gwv1.SessionPersistence{SessionName: named("")}, one)),
			refused(routeReasonUnsupportedValue, "sessionName")},
		{"long name", newHTTPRoute("r", persistent(gwv1.SessionPersistence{SessionName: named(strings.Repeat("a", 65))}, one)),
			refused(routeReasonUnsupportedValue, "sessionName")},
		{"with a redirect", newHTTPRoute("r", gwv1.HTTPRouteRule{SessionPersistence: &gwv1.SessionPersistence{},
			Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{StatusCode: routePtr(302)}}}}),
			refused(routeReasonIncompatibleFilters, "RequestRedirect")},
	})
}

// A persistent rule's backends are its own: their keys are the Service
// port's and a digest of the cookie, so that another rule, or an Ingress,
// on the same Service port keeps its own balancing; two rules of one
// cookie share them. In the location, the rule's targets keep a client
// on the backendRef its cookie names (Affinity); others do not.
func TestSessionBackendsAndAffinity(t *testing.T) {
	sp := func(name string) gwv1.SessionPersistence { return gwv1.SessionPersistence{SessionName: &name} }
	two := []gwv1.HTTPBackendRef{backendRef("infra-backend-v1", 70), backendRef("infra-backend-v2", 30)}
	r, ps := TranslateHTTPRoute(newHTTPRoute("r",
		persistent(sp("a"), two, gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("x", "1")}}),
		persistent(sp("b"), two),
		proxyRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("x", "2")}}),
	), testEnv)
	if len(ps) > 0 || r == nil || len(r.Rules) != 3 {
		t.Fatalf("route %+v, problems %v", r, ps)
	}
	keyA, keyB, plain := r.Rules[0].Targets[0].Backend.Key(), r.Rules[1].Targets[0].Backend.Key(), r.Rules[2].Targets[0].Backend.Key()
	if plain != "infra/infra-backend-v1/8080" || !strings.HasPrefix(keyA, plain+sessionSuffix) || !strings.HasPrefix(keyB, plain+sessionSuffix) || keyA == keyB {
		t.Errorf("keys: a %q, b %q, plain %q", keyA, keyB, plain)
	}
	same, _ := TranslateHTTPRoute(newHTTPRoute("other", persistent(sp("a"), two, gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("x", "1")}})), testEnv)
	if k := onlyRule(t, same).Targets[0].Backend.Key(); k != keyA {
		t.Errorf("the same cookie of another route: key %q, want %q", k, keyA)
	}
	pes := Compose([]*RouteRules{r})
	if len(pes) != 1 {
		t.Fatalf("locations: %+v", pes)
	}
	loc, ps := pes[0].Location(testListener)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	s := loc.Action.Proxy.Split
	if len(s.Rules) != 2 || !s.Rules[0].Affinity || s.Rules[1].Affinity || !s.DefaultAffinity {
		t.Fatalf("split affinity: rules %+v, default %v", s.Rules, s.DefaultAffinity)
	}
	if s.Rules[0].Targets[0].Backend != keyA || s.Default[0].Backend != keyB || s.Rules[1].Targets[0].Backend != plain {
		t.Errorf("split targets: %+v default %+v", s.Rules, s.Default)
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}
}

// FuzzSessionPersistence: whatever the name and timeout, a served cookie
// holds to the model's grammar, and its backend key to the balancer's.
func FuzzSessionPersistence(f *testing.F) {
	f.Add("JSESSIONID", "5m", "/app/[a-z]+", true)
	f.Add("a;b", "1d", "^/(x)", false)
	f.Add("", "0s", "/a\\.b/c", true)
	f.Fuzz(func(t *testing.T, name, timeout, regex string, permanent bool) {
		sp := gwv1.SessionPersistence{SessionName: &name}
		if permanent {
			d := gwv1.Duration(timeout)
			l := gwv1.PermanentCookieLifetimeType
			sp.AbsoluteTimeout, sp.CookieConfig = &d, &gwv1.CookieConfig{LifetimeType: &l}
		}
		r, _ := TranslateHTTPRoute(newHTTPRoute("r", persistent(sp, []gwv1.HTTPBackendRef{backendRef("infra-backend-v1")},
			pathMatch(gwv1.PathMatchRegularExpression, regex))), testEnv)
		if r == nil {
			return
		}
		c := onlyRule(t, r).Session
		if err := c.Validate(); err != nil || c.Name == "" {
			t.Fatalf("cookie %+v: %v", c, err)
		}
		if !strings.HasPrefix(c.Path, "/") {
			t.Errorf("path %q", c.Path)
		}
		key := onlyRule(t, r).Targets[0].Backend.Key()
		for _, ch := range key {
			if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:/@-", ch) {
				t.Fatalf("key %q", key)
			}
		}
	})
}

// A GRPCRoute rule's sessionPersistence is translated as an HTTPRoute
// rule's: the cookie's Path is the method's path; the Header type is
// refused there too.
func TestTranslateGRPCSessionPersistence(t *testing.T) {
	rule := grpcMethodRule(gwv1.GRPCMethodMatchExact, "pkg.Echo", "Say")
	rule.SessionPersistence = &gwv1.SessionPersistence{SessionName: routePtr("g")}
	r, ps := TranslateGRPCRoute(newGRPCRoute(rule), testEnv)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	got := onlyRule(t, r)
	want := model.StickyCookie{Name: "g", Path: "/pkg.Echo/Say", SameSite: "Lax"}
	if got.Session == nil || *got.Session != want || got.Targets[0].Backend.Session != got.Session || got.Policy.Protocol != model.ProtocolGRPC {
		t.Errorf("rule %+v session %+v, want %+v", got, got.Session, want)
	}
	rule.SessionPersistence = &gwv1.SessionPersistence{Type: routePtr(gwv1.HeaderBasedSessionPersistence)}
	r, ps = TranslateGRPCRoute(newGRPCRoute(rule), testEnv)
	if r != nil {
		t.Errorf("Header type served: %+v", r)
	}
	hasProblem(t, ps, routeCondAccepted, routeReasonUnsupportedValue, "type Header")
}
