package annotations

import (
	"reflect"
	"testing"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

func TestCanary(t *testing.T) {
	on := func(kv ...string) map[string]string {
		m := map[string]string{"canary": "true"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	rule := func(f func(r *model.CanaryRule)) *model.CanaryRule {
		r := &model.CanaryRule{WeightTotal: 100}
		f(r)
		return r
	}
	none := func(*model.CanaryRule) {}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		want     *model.CanaryRule
		problems []problem
	}{
		// good
		{"canary alone sends nothing", on(), rule(none), nil},
		{"TRUE in any case", map[string]string{"canary": "True"}, rule(none), nil},
		{"weight", on("canary-weight", "20"), rule(func(r *model.CanaryRule) { r.Weight = 20 }), nil},
		{"weight all", on("canary-weight", "100"), rule(func(r *model.CanaryRule) { r.Weight = 100 }), nil},
		{"weight total", on("canary-weight", "5", "canary-weight-total", "1000"),
			rule(func(r *model.CanaryRule) { r.Weight, r.WeightTotal = 5, 1000 }), nil},
		{"weight total below 100 is honoured", on("canary-weight", "5", "canary-weight-total", "10"),
			rule(func(r *model.CanaryRule) { r.Weight, r.WeightTotal = 5, 10 }), nil},
		{"header", on("canary-by-header", "X-Canary"), rule(func(r *model.CanaryRule) { r.Header = "X-Canary" }), nil},
		{"header value", on("canary-by-header", "X-Canary", "canary-by-header-value", "v2.1/beta:x~y_z"),
			rule(func(r *model.CanaryRule) { r.Header, r.HeaderValue = "X-Canary", "v2.1/beta:x~y_z" }), nil},
		{"header pattern", on("canary-by-header", "X-Canary", "canary-by-header-pattern", "^(v2|v3)-.*"),
			rule(func(r *model.CanaryRule) { r.Header, r.HeaderPattern = "X-Canary", "^(v2|v3)-.*" }), nil},
		{"cookie", on("canary-by-cookie", "use_canary"), rule(func(r *model.CanaryRule) { r.Cookie = "use_canary" }), nil},
		{"all three", on("canary-by-header", "h", "canary-by-cookie", "c", "canary-weight", "1"),
			rule(func(r *model.CanaryRule) { r.Header, r.Cookie, r.Weight = "h", "c", 1 }), nil},

		// edge: ingress-nginx's rules of precedence among the settings
		{"value wins over pattern", on("canary-by-header", "h", "canary-by-header-value", "v", "canary-by-header-pattern", "p"),
			rule(func(r *model.CanaryRule) { r.Header, r.HeaderValue = "h", "v" }), []problem{ignored("canary-by-header-pattern")}},
		{"value without header", on("canary-by-header-value", "v"), rule(none), []problem{ignored("canary-by-header-value")}},
		{"pattern without header", on("canary-by-header-pattern", "p"), rule(none), []problem{ignored("canary-by-header-pattern")}},
		{"not a canary", map[string]string{"canary": "false", "canary-weight": "10", "canary-by-header": "h"}, nil,
			[]problem{ignored("canary-by-header"), ignored("canary-weight")}},
		{"rules without canary", map[string]string{"canary-by-cookie": "c"}, nil, []problem{ignored("canary-by-cookie")}},

		// bad: the setting is dropped, the canary stays
		{"bad canary", map[string]string{"canary": "yes", "canary-weight": "10"}, nil,
			[]problem{invalid("canary"), ignored("canary-weight")}},
		{"weight above total", on("canary-weight", "101"), rule(none), []problem{invalid("canary-weight")}},
		{"weight above a lower total", on("canary-weight", "11", "canary-weight-total", "10"),
			rule(func(r *model.CanaryRule) { r.WeightTotal = 10 }), []problem{invalid("canary-weight")}},
		{"negative weight", on("canary-weight", "-1"), rule(none), []problem{invalid("canary-weight")}},
		{"fraction weight", on("canary-weight", "2.5"), rule(none), []problem{invalid("canary-weight")}},
		{"zero total", on("canary-weight-total", "0"), rule(none), []problem{invalid("canary-weight-total")}},
		{"huge total", on("canary-weight-total", "1000001"), rule(none), []problem{invalid("canary-weight-total")}},
		{"header with dot", on("canary-by-header", "X.Canary"), rule(none), []problem{invalid("canary-by-header")}},
		{"header with space", on("canary-by-header", "X Canary"), rule(none), []problem{invalid("canary-by-header")}},
		{"header too long", on("canary-by-header", string(make([]byte, 65))), rule(none), []problem{invalid("canary-by-header")}},
		{"bad value drops the header rule", on("canary-by-header", "h", "canary-by-header-value", "a b"), rule(none),
			[]problem{invalid("canary-by-header-value"), ignored("canary-by-header")}},
		{"bad pattern drops the header rule", on("canary-by-header", "h", "canary-by-header-pattern", "(?i)x"), rule(none),
			[]problem{invalid("canary-by-header-pattern"), ignored("canary-by-header")}},
		{"pattern with $", on("canary-by-header", "h", "canary-by-header-pattern", "x$"), rule(none),
			[]problem{invalid("canary-by-header-pattern"), ignored("canary-by-header")}},
		{"cookie with =", on("canary-by-cookie", "a=b"), rule(none), []problem{invalid("canary-by-cookie")}},
		{"cookie with ;", on("canary-by-cookie", "a;b"), rule(none), []problem{invalid("canary-by-cookie")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.ann)
			checkProblems(t, problems, tc.problems)
			if !reflect.DeepEqual(res.Canary, tc.want) {
				t.Fatalf("Canary = %+v, want %+v", res.Canary, tc.want)
			}
		})
	}
}

// TestCanaryIgnoresOtherAnnotations: a canary borrows its main Ingress's
// location, so its other annotations are each reported and have no
// effect, security ones included (the main's protection applies); its
// Service's balancing annotations apply, as in ingress-nginx.
func TestCanaryIgnoresOtherAnnotations(t *testing.T) {
	res, problems := parseNames(map[string]string{
		"canary": "true", "canary-weight": "10",
		"rewrite-target": "/x", "auth-url": "http://auth.example/", "auth-type": "basic",
		"load-balance": "ewma", "enable-modsecurity": "true",
	})
	checkProblems(t, problems, []problem{ignored("auth-type"), ignored("auth-url"), ignored("enable-modsecurity"), ignored("rewrite-target")})
	if len(res.FailClosed) != 0 || res.Location.Rewrite != nil || res.Location.BasicAuth != nil || res.UseRegex {
		t.Fatalf("a canary's other annotations reached the Result: %+v", res)
	}
	if res.Balance == nil || res.Balance.Method != model.EWMA {
		t.Fatalf("Balance = %+v, want ewma", res.Balance)
	}
	if res.Canary == nil || res.Canary.Weight != 10 {
		t.Fatalf("Canary = %+v", res.Canary)
	}
}

// TestCanaryInjection: the shared corpus reaches no rule field unless it
// is inert under that field's grammar.
func TestCanaryInjection(t *testing.T) {
	for _, name := range []string{"canary-by-header", "canary-by-header-value", "canary-by-header-pattern", "canary-by-cookie", "canary-weight", "canary-weight-total"} {
		for _, v := range testcorpus.Injection {
			ann := map[string]string{"canary": "true", "canary-by-header": "h", name: v}
			res, _ := parseNames(ann)
			if res.Canary == nil {
				t.Fatalf("%s=%q: the canary was dropped", name, v)
			}
			if err := res.Canary.Validate(); err != nil {
				t.Fatalf("%s=%q: the rule does not validate: %v", name, v, err)
			}
		}
	}
}
