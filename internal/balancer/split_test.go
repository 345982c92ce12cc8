package balancer_test

import (
	"math"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/balancer"
)

// A split's default targets share the requests by weight: N backends,
// not two.
func TestSplitWeights(t *testing.T) {
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
		balancer.Backend{Key: choice, Endpoints: []balancer.Endpoint{}, Split: &balancer.Split{Targets: targets}})})
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

// Rules in the balancer: the first rule whose conditions all hold
// chooses; caseless values compare ignoring case, exact ones byte for
// byte, a regex is searched; "negate" inverts; an absent attribute reads
// as "" (and never matches a regex).
func TestSplitRules(t *testing.T) {
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
		matches []balancer.Rule
		path    string
		hdr     map[string]string
		want    string
	}{
		{"header", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Match: "caseless", Value: "v2"}}, Targets: to("one")}},
			"/", map[string]string{"X-Version": "V2"}, "one"},
		{"header differs", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Match: "caseless", Value: "v2"}}, Targets: to("one")}},
			"/", map[string]string{"X-Version": "v3"}, "def"},
		{"negated header, absent", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Match: "caseless", Value: "v2", Negate: true}}, Targets: to("one")}},
			"/", nil, "one"},
		{"negated header, equal", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Match: "caseless", Value: "v2", Negate: true}}, Targets: to("one")}},
			"/", map[string]string{"X-Version": "v2"}, "def"},
		{"empty value matches an absent header", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-None", Match: "caseless", Value: ""}}, Targets: to("one")}},
			"/", nil, "one"},
		{"cookie", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "cookie", Name: "user", Match: "caseless", Value: "beta"}}, Targets: to("two")}},
			"/", map[string]string{"Cookie": "a=b; user=beta"}, "two"},
		{"argument", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "argument", Name: "v", Match: "caseless", Value: "2"}}, Targets: to("two")}},
			"/?x=1&v=2", nil, "two"},
		{"variable", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "variable", Name: "request_method", Match: "caseless", Value: "get"}}, Targets: to("two")}},
			"/", nil, "two"},
		{"every condition must hold", []balancer.Rule{{Conditions: []balancer.Condition{
			{Kind: "header", Name: "X-Version", Match: "caseless", Value: "v2"}, {Kind: "argument", Name: "v", Match: "caseless", Value: "2"}}, Targets: to("one")}},
			"/", map[string]string{"X-Version": "v2"}, "def"},
		{"exact", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Match: "exact", Value: "v2"}}, Targets: to("one")}},
			"/", map[string]string{"X-Version": "v2"}, "one"},
		{"exact is case-sensitive", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Match: "exact", Value: "v2"}}, Targets: to("one")}},
			"/", map[string]string{"X-Version": "V2"}, "def"},
		{"method", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "variable", Name: "request_method", Match: "exact", Value: "GET"}}, Targets: to("two")}},
			"/", nil, "two"},
		{"regex", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "argument", Name: "v", Match: "regex", Value: `^[23]\.`}}, Targets: to("one")}},
			"/?v=3.1", nil, "one"},
		{"regex, no match", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "argument", Name: "v", Match: "regex", Value: `^[23]\.`}}, Targets: to("one")}},
			"/?v=4.1", nil, "def"},
		{"a regex never matches an absent header", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-None", Match: "regex", Value: ".*"}}, Targets: to("one")}},
			"/", nil, "def"},
		{"a negated regex holds of an absent header", []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-None", Match: "regex", Value: "^v", Negate: true}}, Targets: to("one")}},
			"/", nil, "one"},
		{"first match wins", []balancer.Rule{
			{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Match: "caseless", Value: "v2"}}, Targets: to("two")},
			{Conditions: []balancer.Condition{{Kind: "variable", Name: "scheme", Match: "caseless", Value: "http"}}, Targets: to("one")}},
			"/", map[string]string{"X-Version": "v2"}, "two"},
		{"second match", []balancer.Rule{
			{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Version", Match: "caseless", Value: "v2"}}, Targets: to("two")},
			{Conditions: []balancer.Condition{{Kind: "variable", Name: "scheme", Match: "caseless", Value: "http"}}, Targets: to("one")}},
			"/", nil, "one"},
	} {
		n.replace(t, balancer.State{Generation: int64(i + 1), Backends: append(append([]balancer.Backend{}, backends...),
			balancer.Backend{Key: choice, Endpoints: []balancer.Endpoint{}, Split: &balancer.Split{Rules: tc.matches, Targets: to("def")}})})
		got := n.counts(t, n.url(0, tc.path), 4, 2, func(int) map[string]string { return tc.hdr })
		if got[tc.want] != 4 {
			t.Errorf("%s: served %v, want all by %s", tc.name, got, tc.want)
		}
	}
}

// A split that may answer: the access hook picks once, by weight, a
// backend or an answer, whose named location (balancer.AnswerLocation)
// answers; a match may pick an answer. A location without the hook (the
// configuration behind the state) answers 503 for an answer, never
// another target's backend.
func TestSplitAnswers(t *testing.T) {
	const choice, total = "choice@ns/vs.0123456789ab", 1000
	named := balancer.AnswerLocation(choice, 1)
	n := startNginx(t, nginxOptions{keys: []string{choice, choice}, editConf: func(c string) string {
		return strings.Replace(c, "        location /0/ {\n",
			"        location "+named+" {\n            return 418 \"tea\";\n        }\n"+
				"        location /0/ {\n            access_by_lua_block { require(\"causeway.balancer\").access() }\n", 1)
	}})
	a := startBackend(t, "127.0.0.2", "a")
	web := balancer.Backend{Key: "ns/a/80", Endpoints: []balancer.Endpoint{a.endpoint()}}
	state := func(gen int64, c *balancer.Split) balancer.State {
		return balancer.State{Generation: gen, Backends: []balancer.Backend{web,
			{Key: choice, Endpoints: []balancer.Endpoint{}, Split: c}}}
	}
	n.replace(t, state(1, &balancer.Split{Answers: 1,
		Targets: []balancer.Target{{Backend: "ns/a/80", Weight: 50}, {Answer: 1, Weight: 50}}}))
	got := n.counts(t, n.url(0, "/"), total, 4, nil)
	// Binomial(1000, 0.5): within 5 standard deviations (±79) of 500.
	sd := math.Sqrt(total * 0.25)
	if len(got) != 2 || math.Abs(float64(got["a"])-total/2) > 5*sd || got["a"]+got["status 418"] != total {
		t.Errorf("served %v, want a and 418 %d ± %.0f each", got, total/2, 5*sd)
	}

	n.replace(t, state(2, &balancer.Split{Answers: 1, Targets: []balancer.Target{{Backend: "ns/a/80", Weight: 100}},
		Rules: []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Tea", Match: "caseless", Value: "yes"}},
			Targets: []balancer.Target{{Answer: 1, Weight: 100}}}}}))
	if got := n.counts(t, n.url(0, "/"), 10, 2, func(int) map[string]string { return map[string]string{"X-Tea": "yes"} }); got["status 418"] != 10 {
		t.Errorf("matching requests: served %v, want all 418", got)
	}
	if got := n.counts(t, n.url(0, "/"), 10, 2, nil); got["a"] != 10 {
		t.Errorf("other requests: served %v, want all by a", got)
	}

	n.replace(t, state(3, &balancer.Split{Answers: 1, Targets: []balancer.Target{{Answer: 1, Weight: 100}}}))
	if got := n.counts(t, n.url(1, "/"), 10, 2, nil); got["status 503"] != 10 {
		t.Errorf("without the hook: served %v, want all 503", got)
	}
}
