package model

import (
	"regexp"
	"strings"
	"testing"
)

func TestCanaryRuleValidate(t *testing.T) {
	ok := func(f func(r *CanaryRule)) CanaryRule {
		r := CanaryRule{WeightTotal: 100}
		f(&r)
		return r
	}
	for _, tc := range []struct {
		name  string
		rule  CanaryRule
		valid bool
	}{
		{"weight only", ok(func(r *CanaryRule) { r.Weight = 20 }), true},
		{"all", ok(func(r *CanaryRule) {
			r.Header, r.HeaderValue, r.Cookie, r.Weight = "X-Canary_2", "v2.1/a:b~c", "use.canary-2", 100
		}), true},
		{"pattern", ok(func(r *CanaryRule) { r.Header, r.HeaderPattern = "h", `^(v2|v3)-\d+` }), true},
		{"weight total 1", CanaryRule{Weight: 1, WeightTotal: 1}, true},
		{"weight over total", ok(func(r *CanaryRule) { r.Weight = 101 }), false},
		{"negative weight", ok(func(r *CanaryRule) { r.Weight = -1 }), false},
		{"zero total", CanaryRule{}, false},
		{"total too big", CanaryRule{WeightTotal: MaxCanaryWeightTotal + 1}, false},
		{"value without header", ok(func(r *CanaryRule) { r.HeaderValue = "v" }), false},
		{"pattern without header", ok(func(r *CanaryRule) { r.HeaderPattern = "v" }), false},
		{"header with dot", ok(func(r *CanaryRule) { r.Header = "a.b" }), false},
		{"header with colon", ok(func(r *CanaryRule) { r.Header = "a:b" }), false},
		{"header too long", ok(func(r *CanaryRule) { r.Header = strings.Repeat("h", MaxCanaryNameLen+1) }), false},
		{"header at limit", ok(func(r *CanaryRule) { r.Header = strings.Repeat("h", MaxCanaryNameLen) }), true},
		{"value with space", ok(func(r *CanaryRule) { r.Header, r.HeaderValue = "h", "a b" }), false},
		{"value with quote", ok(func(r *CanaryRule) { r.Header, r.HeaderValue = "h", `a"b` }), false},
		{"value with dollar", ok(func(r *CanaryRule) { r.Header, r.HeaderValue = "h", "$host" }), false},
		{"value too long", ok(func(r *CanaryRule) { r.Header, r.HeaderValue = "h", strings.Repeat("v", MaxCanaryHeaderValueLen+1) }), false},
		{"pattern with dollar", ok(func(r *CanaryRule) { r.Header, r.HeaderPattern = "h", "a$" }), false},
		{"pattern with flags", ok(func(r *CanaryRule) { r.Header, r.HeaderPattern = "h", "(?i)a" }), false},
		{"pattern backreference", ok(func(r *CanaryRule) { r.Header, r.HeaderPattern = "h", `(a)\1` }), false},
		{"pattern unbalanced", ok(func(r *CanaryRule) { r.Header, r.HeaderPattern = "h", "(a" }), false},
		{"cookie with =", ok(func(r *CanaryRule) { r.Cookie = "a=b" }), false},
		{"cookie with ;", ok(func(r *CanaryRule) { r.Cookie = "a;b" }), false},
		{"cookie non-ASCII", ok(func(r *CanaryRule) { r.Cookie = "caf\xc3\xa9" }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.rule.Validate(); (err == nil) != tc.valid {
				t.Fatalf("Validate() = %v, want valid=%v", err, tc.valid)
			}
		})
	}
}

// splitKeyGrammar is the balancer's backend key grammar
// (balancer.ValidateKey).
var splitKeyGrammar = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@-]*$`)

// canaryOf is the weight-only canary split of primary by source.
func canaryOf(source ObjectRef, primary, canary string) *Split {
	r := CanaryRule{WeightTotal: DefaultCanaryWeightTotal}
	return r.Split(source, primary, canary)
}

func TestSplitKey(t *testing.T) {
	c := canaryOf(ObjectRef{Kind: "Ingress", Namespace: "shop", Name: "web-canary"}, "shop/web/http", "shop/web-canary/80")
	if got := c.Key(); got != "split@shop/web-canary@shop/web/http@shop/web-canary/80" {
		t.Fatalf("Key = %q", got)
	}
	long := canaryOf(ObjectRef{Namespace: "ns", Name: strings.Repeat("n", 253)}, "ns/"+strings.Repeat("p", 63)+"/80", "ns/"+strings.Repeat("c", 63)+"/80")
	k1 := long.Key()
	if len(k1) > maxSplitKeyLen || !splitKeyGrammar.MatchString(k1) {
		t.Fatalf("long Key %q does not fit the key grammar", k1)
	}
	long = canaryOf(long.Source, long.Primary, "ns/other/80")
	if k2 := long.Key(); k2 == k1 {
		t.Fatal("two different splits share a digest key")
	}
	// The rule is not part of the key.
	r := CanaryRule{Header: "h", Weight: 50, WeightTotal: 100}
	if r.Split(c.Source, c.Primary, c.Canary()).Key() != c.Key() {
		t.Fatal("the rule changed the split key")
	}
}

// TestSplitKeyPerRoute: one object splitting two routes between the same
// backends gets a split per route, so their rules never overwrite each
// other in the balancer; an Ingress canary's key does not change.
func TestSplitKeyPerRoute(t *testing.T) {
	vs := ObjectRef{Kind: "VirtualServer", Namespace: "shop", Name: "cafe"}
	routed := func(route string) string {
		s := canaryOf(vs, "shop/tea/80", "shop/coffee/80")
		s.Route = route
		return s.Key()
	}
	a, b := routed("/"), routed("/v")
	ing := canaryOf(ObjectRef{Kind: "Ingress", Namespace: "shop", Name: "canary"}, "shop/tea/80", "shop/coffee/80").Key()
	if a == b || ing != "split@shop/canary@shop/tea/80@shop/coffee/80" {
		t.Errorf("keys %q, %q, %q", a, b, ing)
	}
	for _, k := range []string{a, b} {
		if !strings.HasPrefix(k, "split@shop/cafe.") {
			t.Errorf("key %q", k)
		}
	}
}
