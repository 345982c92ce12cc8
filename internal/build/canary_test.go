package build

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// canaryIngress is a canary of svc-b for a.com/ with the given
// annotations besides canary "true".
func canaryIngress(name string, age int, ann map[string]string, rules ...networkingv1.IngressRule) *networkingv1.Ingress {
	if len(rules) == 0 {
		rules = []networkingv1.IngressRule{rule("a.com", path("/", "Prefix", svcName(1), 80))}
	}
	ing := mkIngress("default", name, age, rules...)
	ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/canary": "true"}
	for k, v := range ann {
		ing.Annotations["nginx.ingress.kubernetes.io/"+k] = v
	}
	return ing
}

// TestCanarySplitsTheMainLocation: one row per rule of ingress-nginx's
// merge of a canary Ingress into its main Ingress.
func TestCanarySplitsTheMainLocation(t *testing.T) {
	main := func() *networkingv1.Ingress {
		return mkIngress("default", "main", 0, rule("a.com", path("/", "Prefix", svcName(0), 80), path("/x", "Exact", svcName(0), 80)))
	}
	weight := map[string]string{"canary-weight": "20"}
	for _, tc := range []struct {
		name    string
		ings    []*networkingv1.Ingress
		canary  string // the canary backend of a.com/, "" for none
		source  string // the canary Ingress applied
		problem string // the Problem's reason on a canary, "" for none
		naming  string
	}{
		{"canary borrows the main's host and path", []*networkingv1.Ingress{main(), canaryIngress("c1", 1, weight)}, "default/svc-b/80", "c1", "", ""},
		{"an older canary still waits for its main", []*networkingv1.Ingress{canaryIngress("c1", 0, weight), main()}, "default/svc-b/80", "c1", "", ""},
		{"no main Ingress", []*networkingv1.Ingress{canaryIngress("c1", 1, weight)}, "", "", ReasonCanary, "no main (non-canary) Ingress serves it"},
		{"other path of the host", []*networkingv1.Ingress{main(), canaryIngress("c1", 1, weight, rule("a.com", path("/y", "Prefix", svcName(1), 80)))},
			"", "", ReasonCanary, `path "/y"`},
		{"other path type", []*networkingv1.Ingress{main(), canaryIngress("c1", 1, weight, rule("a.com", path("/x", "Prefix", svcName(1), 80)))},
			"", "", ReasonCanary, `path "/x" (Prefix)`},
		{"two canaries: the oldest wins", []*networkingv1.Ingress{main(), canaryIngress("c1", 1, weight), canaryIngress("c2", 2, weight,
			rule("a.com", path("/", "Prefix", svcName(2), 80)))}, "default/svc-b/80", "c1", model.ReasonCollision, "already has the canary Ingress default/c1"},
		{"canary of the main's own Service", []*networkingv1.Ingress{main(), canaryIngress("c1", 1, weight, rule("a.com", path("/", "Prefix", svcName(0), 80)))},
			"", "", ReasonCanary, "nothing to split"},
		{"missing canary Service", []*networkingv1.Ingress{main(), canaryIngress("c1", 1, weight, rule("a.com", path("/", "Prefix", "gone", 80)))},
			"", "", model.ReasonMissingService, "service default/gone not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(3)
			s.Ingresses = tc.ings
			m, problems := Build(s, testOpts)
			srv := server(m, "a.com")
			if srv == nil {
				if tc.canary != "" {
					t.Fatal("no server a.com")
				}
			} else if l := srv.Match("/"); l != nil && l.Action.Proxy != nil {
				c := l.Action.Proxy.Split
				switch {
				case tc.canary == "" && c != nil:
					t.Fatalf("canary %+v, want none", c)
				case tc.canary != "" && (c == nil || c.Canary() != tc.canary || c.Source.Name != tc.source || c.Default[0].Weight != 20):
					t.Fatalf("canary %+v, want %s from %s", c, tc.canary, tc.source)
				}
				if l.Backend() != "default/svc-a/80" || l.Source.Name != "main" {
					t.Fatalf("the canary changed the main location: %+v", l)
				}
			}
			var got []model.Problem
			for _, p := range problems {
				if strings.HasPrefix(p.Object.Name, "c") {
					got = append(got, p)
				}
			}
			if tc.problem == "" {
				if len(got) != 0 {
					t.Fatalf("problems %v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Reason != tc.problem || !strings.Contains(got[0].Message, tc.naming) || got[0].Rejected {
				t.Fatalf("problems %v, want one %s naming %q", got, tc.problem, tc.naming)
			}
			if tc.canary == "" {
				for _, b := range m.Backends {
					if b.Key != "default/svc-a/80" {
						t.Fatalf("backend %s kept for a canary that does nothing", b.Key)
					}
				}
			}
		})
	}
}

// TestCanaryWithoutProxyingMain: a main that answers 503 (a security
// setting it cannot enforce) stays closed; the canary does nothing.
func TestCanaryWithoutProxyingMain(t *testing.T) {
	s := world(2)
	main := mkIngress("default", "main", 0, rule("a.com", path("/", "Prefix", svcName(0), 80)))
	main.Annotations = map[string]string{"nginx.ingress.kubernetes.io/auth-type": "digest"}
	s.Ingresses = append(s.Ingresses, main, canaryIngress("c1", 1, map[string]string{"canary-weight": "100"}))
	m, problems := Build(s, testOpts)
	l := server(m, "a.com").Match("/")
	if l.Action.Return == nil || l.Action.Return.Status != 503 {
		t.Fatalf("location %+v, want 503", l)
	}
	found := false
	for _, p := range problems {
		found = found || (p.Object.Name == "c1" && p.Reason == ReasonCanary && strings.Contains(p.Message, "without proxying"))
	}
	if !found {
		t.Fatalf("no CanaryNotApplied Problem: %v", problems)
	}
}

// TestCanaryRuleIsNotInTheSplitKey: the location names the split by the
// canary Ingress and the two backends only, so that a change of rule is
// a state push and not a new configuration.
func TestCanaryRuleIsNotInTheSplitKey(t *testing.T) {
	keys := map[string]bool{}
	for _, ann := range []map[string]string{{"canary-weight": "10"}, {"canary-weight": "90"}, {"canary-by-header": "X-Canary"}, {"canary-by-cookie": "c"}} {
		s := world(2)
		s.Ingresses = append(s.Ingresses, mkIngress("default", "main", 0, rule("a.com", path("/", "Prefix", svcName(0), 80))), canaryIngress("c1", 1, ann))
		m, _ := Build(s, testOpts)
		p := server(m, "a.com").Match("/").Action.Proxy
		keys[p.Split.Key()] = true
	}
	if len(keys) != 1 {
		t.Fatalf("split keys %v, want one", keys)
	}
}

// TestCanaryOfRegexMain: a main Ingress with use-regex claims its paths as
// written, and a canary (whose own use-regex is ignored) still finds them,
// as ingress-nginx compares the paths as written.
func TestCanaryOfRegexMain(t *testing.T) {
	s := world(2)
	main := mkIngress("default", "main", 0, rule("a.com", path("/api/v[0-9]+", "ImplementationSpecific", svcName(0), 80)))
	main.Annotations = map[string]string{"nginx.ingress.kubernetes.io/use-regex": "true"}
	s.Ingresses = append(s.Ingresses, main, canaryIngress("c1", 1, map[string]string{"canary-weight": "5"},
		rule("a.com", path("/api/v[0-9]+", "ImplementationSpecific", svcName(1), 80))))
	m, problems := Build(s, testOpts)
	srv := server(m, "a.com")
	var c *model.Split
	for _, l := range srv.Locations {
		if l.Match.Type == model.Regex && l.Action.Proxy != nil {
			c = l.Action.Proxy.Split
		}
	}
	if c == nil || c.Canary() != "default/svc-b/80" || len(problems) != 0 {
		t.Fatalf("canary %+v, problems %v", c, problems)
	}
}

// TestCanaryInheritsAffinity: a main with cookie affinity passes it to its
// canary's Service (ingress-nginx's default "sticky" canary behaviour),
// replacing the canary Ingress's own balancing; a Service whose balancing
// another Ingress set keeps it, with a Problem.
func TestCanaryInheritsAffinity(t *testing.T) {
	affinity := map[string]string{"nginx.ingress.kubernetes.io/affinity": "cookie", "nginx.ingress.kubernetes.io/session-cookie-name": "route"}
	for _, tc := range []struct {
		name    string
		other   bool // another Ingress sets svc-b's balancing
		canary  map[string]string
		sticky  bool
		problem string
	}{
		{"inherited", false, map[string]string{"canary-weight": "10"}, true, ""},
		{"replaces the canary's own balancing", false, map[string]string{"canary-weight": "10", "load-balance": "ewma"}, true, ""},
		{"another Ingress's balancing stays", true, map[string]string{"canary-weight": "10"}, false, model.ReasonCollision},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(2)
			main := mkIngress("default", "main", 0, rule("a.com", path("/", "Prefix", svcName(0), 80)))
			main.Annotations = affinity
			s.Ingresses = append(s.Ingresses, main, canaryIngress("c1", 2, tc.canary))
			if tc.other {
				other := mkIngress("default", "other", 1, rule("b.com", path("/", "Prefix", svcName(1), 80)))
				other.Annotations = map[string]string{"nginx.ingress.kubernetes.io/load-balance": "ewma"}
				s.Ingresses = append(s.Ingresses, other)
			}
			m, problems := Build(s, testOpts)
			var be *model.Backend
			for _, b := range m.Backends {
				if b.Key == "default/svc-b/80" {
					be = b
				}
			}
			if sticky := be.Balance.Method == model.Sticky && be.Balance.Sticky != nil && be.Balance.Sticky.Name == "route"; sticky != tc.sticky {
				t.Fatalf("canary balance %+v, want sticky=%v", be.Balance, tc.sticky)
			}
			var got []string
			for _, p := range problems {
				if p.Object.Name == "c1" && p.Reason != model.ReasonUnsupportedAnnotation {
					got = append(got, p.Reason)
				}
			}
			if want := []string{tc.problem}; tc.problem == "" && len(got) != 0 || tc.problem != "" && (len(got) != 1 || got[0] != want[0]) {
				t.Fatalf("problems %v, want %q", problems, tc.problem)
			}
		})
	}
}

// TestCanaryKeepaliveDiffers: a canary whose Service port keeps idle
// connections differently from the main's (a VirtualServer upstream's
// keepalive owns one of them) still splits, and the split's shared pool
// is reported on the canary Ingress.
func TestCanaryKeepaliveDiffers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		keepalive map[int]int // upstream index of the VirtualServer to keepalive
		problem   bool
	}{
		{"the main's pool differs", map[int]int{0: 8}, true},
		{"the canary's pool differs", map[int]int{1: 0}, true},
		{"both the same", map[int]int{0: 8, 1: 8}, false},
		{"neither set", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(3)
			s.Ingresses = []*networkingv1.Ingress{
				mkIngress("default", "main", 0, rule("a.com", path("/", "Prefix", svcName(0), 80))),
				canaryIngress("c1", 1, map[string]string{"canary-weight": "20"}),
			}
			vs := mkVirtualServer("pools", "pools.test", 2, pass("/", "a"), pass("/b", "b"))
			for i, n := range tc.keepalive {
				vs.Spec.Upstreams[i].Keepalive = new(n)
			}
			s.VirtualServers = []*nicv1.VirtualServer{vs}
			m, problems := Build(s, testOpts)
			if c := server(m, "a.com").Match("/").Action.Proxy.Split; c == nil || c.Canary() != "default/"+svcName(1)+"/80" {
				t.Fatalf("canary %+v", c)
			}
			var found bool
			for _, p := range problems {
				found = found || p.Object.Name == "c1" && strings.Contains(p.Message, "keep idle connections differently")
			}
			if found != tc.problem {
				t.Errorf("problems %v: keepalive Problem on c1 %v, want %v", problems, found, tc.problem)
			}
		})
	}
}
