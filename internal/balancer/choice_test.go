package balancer_test

import (
	"math"
	"testing"

	"github.com/causeway/causeway/internal/balancer"
)

// A choice's default targets share the requests by weight: N backends,
// not two.
func TestChoiceWeights(t *testing.T) {
	const choice, total = "choice@ns/vs.0123456789ab", 1000
	n := startNginx(t, nginxOptions{keys: []string{choice}})
	names := []string{"a", "b", "c"}
	weights := []int{20, 30, 50}
	backends := []balancer.Backend{}
	var targets []balancer.Target
	for i, name := range names {
		b := startBackend(t, "127.0.0."+string(rune('2'+i)), name)
		key := "ns/" + name + "/80"
		backends = append(backends, balancer.Backend{Key: key, Endpoints: []balancer.Endpoint{b.endpoint()}})
		targets = append(targets, balancer.Target{Backend: key, Weight: weights[i]})
	}
	n.replace(t, balancer.State{Generation: 1, Backends: append(backends,
		balancer.Backend{Key: choice, Endpoints: []balancer.Endpoint{}, Choice: &balancer.Choice{Targets: targets}})})
	got := n.counts(t, n.url(0, "/"), total, 4, nil)
	t.Logf("%v", got)
	// Binomial(1000, p): within 5 standard deviations of 1000p each.
	for i, name := range names {
		p := float64(weights[i]) / 100
		sd := math.Sqrt(total * p * (1 - p))
		if math.Abs(float64(got[name])-total*p) > 5*sd {
			t.Errorf("%s served %d of %d, want %.0f ± %.0f", name, got[name], total, total*p, 5*sd)
		}
	}
}

// Matches in the balancer: the first match whose conditions all hold
// chooses, values compare ignoring case, "negate" inverts, an absent
// attribute reads as "".
func TestChoiceMatches(t *testing.T) {
	const choice = "choice@ns/vs.0123456789ab"
	n := startNginx(t, nginxOptions{keys: []string{choice}})
	var backends []balancer.Backend
	for i, name := range []string{"def", "one", "two"} {
		b := startBackend(t, "127.0.0."+string(rune('2'+i)), name)
		backends = append(backends, balancer.Backend{Key: "ns/" + name + "/80", Endpoints: []balancer.Endpoint{b.endpoint()}})
	}
	to := func(name string) []balancer.Target {
		return []balancer.Target{{Backend: "ns/" + name + "/80", Weight: 100}}
	}
	for i, tc := range []struct {
		name    string
		matches []balancer.ChoiceMatch
		path    string
		hdr     map[string]string
		want    string
	}{
		{"header", []balancer.ChoiceMatch{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Value: "v2"}}, Targets: to("one")}},
			"/", map[string]string{"X-Version": "V2"}, "one"},
		{"header differs", []balancer.ChoiceMatch{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Value: "v2"}}, Targets: to("one")}},
			"/", map[string]string{"X-Version": "v3"}, "def"},
		{"negated header, absent", []balancer.ChoiceMatch{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Value: "v2", Negate: true}}, Targets: to("one")}},
			"/", nil, "one"},
		{"negated header, equal", []balancer.ChoiceMatch{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Value: "v2", Negate: true}}, Targets: to("one")}},
			"/", map[string]string{"X-Version": "v2"}, "def"},
		{"empty value matches an absent header", []balancer.ChoiceMatch{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-None", Value: ""}}, Targets: to("one")}},
			"/", nil, "one"},
		{"cookie", []balancer.ChoiceMatch{{Conditions: []balancer.Condition{{Kind: "cookie", Name: "user", Value: "beta"}}, Targets: to("two")}},
			"/", map[string]string{"Cookie": "a=b; user=beta"}, "two"},
		{"argument", []balancer.ChoiceMatch{{Conditions: []balancer.Condition{{Kind: "argument", Name: "v", Value: "2"}}, Targets: to("two")}},
			"/?x=1&v=2", nil, "two"},
		{"variable", []balancer.ChoiceMatch{{Conditions: []balancer.Condition{{Kind: "variable", Name: "request_method", Value: "get"}}, Targets: to("two")}},
			"/", nil, "two"},
		{"every condition must hold", []balancer.ChoiceMatch{{Conditions: []balancer.Condition{
			{Kind: "header", Name: "X-Version", Value: "v2"}, {Kind: "argument", Name: "v", Value: "2"}}, Targets: to("one")}},
			"/", map[string]string{"X-Version": "v2"}, "def"},
		{"first match wins", []balancer.ChoiceMatch{
			{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Value: "v2"}}, Targets: to("two")},
			{Conditions: []balancer.Condition{{Kind: "variable", Name: "scheme", Value: "http"}}, Targets: to("one")}},
			"/", map[string]string{"X-Version": "v2"}, "two"},
		{"second match", []balancer.ChoiceMatch{
			{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Value: "v2"}}, Targets: to("two")},
			{Conditions: []balancer.Condition{{Kind: "variable", Name: "scheme", Value: "http"}}, Targets: to("one")}},
			"/", nil, "one"},
	} {
		n.replace(t, balancer.State{Generation: int64(i + 1), Backends: append(append([]balancer.Backend{}, backends...),
			balancer.Backend{Key: choice, Endpoints: []balancer.Endpoint{}, Choice: &balancer.Choice{Matches: tc.matches, Targets: to("def")}})})
		got := n.counts(t, n.url(0, tc.path), 4, 2, func(int) map[string]string { return tc.hdr })
		if got[tc.want] != 4 {
			t.Errorf("%s: served %v, want all by %s", tc.name, got, tc.want)
		}
	}
}
