package model

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestParseConditionName(t *testing.T) {
	for _, tc := range []struct {
		kind     ConditionKind
		in, want string
		ok       bool
	}{
		{ConditionHeader, "X-Version", "X-Version", true},
		{ConditionHeader, "x_v", "x_v", true},
		{ConditionHeader, "X.Version", "", false},
		{ConditionHeader, "", "", false},
		{ConditionHeader, strings.Repeat("a", 65), "", false},
		{ConditionCookie, "user_1", "user_1", true},
		{ConditionCookie, "user-1", "", false}, // NGINX Ingress Controller: [_A-Za-z0-9]+
		{ConditionArgument, "v", "v", true},
		{ConditionArgument, "a;b", "", false},
		{ConditionVariable, "$request_method", "request_method", true},
		{ConditionVariable, "$scheme", "scheme", true},
		{ConditionVariable, "scheme", "", false}, // needs "$"
		{ConditionVariable, "$host", "", false},  // not in the allowed set
		{ConditionVariable, "$http_x", "", false},
		{"path", "x", "", false},
	} {
		got, err := ParseConditionName(tc.kind, tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseConditionName(%s, %q) = %q, %v; want %q, ok %v", tc.kind, tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestParseMatchValue(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		negate   bool
		ok       bool
	}{
		{"v2", "v2", false, true},
		{"!v2", "v2", true, true},
		{"", "", false, true},
		{"!", "", true, true},
		{"!!x", "!x", true, true},
		{"a b/c?d=e", "a b/c?d=e", false, true},
		{`a"b`, "", false, false},
		{`a\b`, "", false, false},
		{"a\nb", "", false, false},
		{"caf\xc3\xa9", "", false, false},
		{strings.Repeat("a", 256), strings.Repeat("a", 256), false, true},
		{strings.Repeat("a", 257), "", false, false},
	} {
		got, neg, err := ParseMatchValue(tc.in)
		if (err == nil) != tc.ok || (tc.ok && (got != tc.want || neg != tc.negate)) {
			t.Errorf("ParseMatchValue(%q) = %q, %v, %v; want %q, %v, ok %v", tc.in, got, neg, err, tc.want, tc.negate, tc.ok)
		}
	}
}

// FuzzParsedCondition: a condition NGINX Ingress Controller's grammar
// (ParseConditionName, ParseMatchValue) accepts, Validate accepts too, and
// it holds only what causeway/validate.lua accepts, and nothing that
// could end a string or reach nginx's syntax. Run with
//
//	go test ./internal/model -run=XXX -fuzz=FuzzParsedCondition -fuzztime=60s
func FuzzParsedCondition(f *testing.F) {
	for _, e := range injectionCorpus {
		f.Add("header", e, e)
		f.Add("variable", e, "!"+e)
	}
	f.Add("header", "X-Version", "!v2")
	f.Add("variable", "$request_uri", "/a?b=c")
	lua := map[ConditionKind]*regexp.Regexp{
		ConditionHeader:   regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`),
		ConditionCookie:   regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`),
		ConditionArgument: regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`),
	}
	luaValue := regexp.MustCompile(`^[ -!#-\[\]-~]{0,256}$`)
	f.Fuzz(func(t *testing.T, kind, name, value string) {
		n, err := ParseConditionName(ConditionKind(kind), name)
		if err != nil {
			return
		}
		v, neg, err := ParseMatchValue(value)
		if err != nil {
			return
		}
		c := Condition{Kind: ConditionKind(kind), Name: n, Match: MatchCaseless, Value: v, Negate: neg}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed %q %q but Validate refuses: %v", name, value, err)
		}
		if re := lua[c.Kind]; re != nil && !re.MatchString(n) {
			t.Fatalf("accepted name %q, which validate.lua refuses", n)
		}
		if c.Kind == ConditionVariable && !ConditionVariables[n] {
			t.Fatalf("accepted variable %q", n)
		}
		if !luaValue.MatchString(v) {
			t.Fatalf("accepted value %q, which validate.lua refuses", v)
		}
	})
}

// luaConditionAlphabet is what causeway/validate.lua checks of a
// condition's name (by kind) and value (by match): whatever
// Condition.Validate accepts must pass it, or nginx would refuse the push.
var luaConditionAlphabet = map[string]*regexp.Regexp{
	"header":   regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`),
	"cookie":   regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`),
	"argument": regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`),
	"exact":    regexp.MustCompile(`^[ -!#-\[\]-~]{0,256}$`),
	"caseless": regexp.MustCompile(`^[ -!#-\[\]-~]{0,256}$`),
	"regex":    regexp.MustCompile(`^[A-Za-z0-9/._~!*()+,=:@&?|\[\]^\\{} -]{1,256}$`),
}

// FuzzCondition: a condition Validate accepts holds only what
// causeway/validate.lua accepts, a variable from the allowed set, and a
// regex that compiles (in Go; the grammar is shared with PCRE) without
// "$". Run with
//
//	go test ./internal/model -run=XXX -fuzz=FuzzCondition -fuzztime=60s
func FuzzCondition(f *testing.F) {
	for _, e := range injectionCorpus {
		for _, m := range []string{"exact", "caseless", "regex"} {
			f.Add("header", e, m, e)
			f.Add("cookie", "c", m, e)
			f.Add("variable", e, m, "v")
		}
	}
	f.Add("header", "X-Canary", "regex", `^(v2|v3)-\d{1,3}`)
	f.Add("argument", "v", "exact", "2")
	f.Add("variable", "request_method", "exact", "GET")
	f.Fuzz(func(t *testing.T, kind, name, match, value string) {
		c := Condition{Kind: ConditionKind(kind), Name: name, Match: MatchKind(match), Value: value}
		if c.Validate() != nil {
			return
		}
		if re := luaConditionAlphabet[kind]; kind != "variable" && (re == nil || !re.MatchString(name)) {
			t.Fatalf("Validate accepted the %s name %q, which validate.lua refuses", kind, name)
		}
		if kind == "variable" && !ConditionVariables[name] {
			t.Fatalf("Validate accepted the variable %q", name)
		}
		if re := luaConditionAlphabet[match]; re == nil || !re.MatchString(value) {
			t.Fatalf("Validate accepted the %s value %q, which validate.lua refuses", match, value)
		}
		if match == "regex" {
			if _, err := regexp.Compile(value); err != nil || strings.Contains(value, "$") {
				t.Fatalf("Validate accepted the regex %q", value)
			}
		}
	})
}

func TestSplitValidate(t *testing.T) {
	to := []Target{{Backend: "a", Weight: 60}, {Backend: "b", Weight: 40}}
	ret := []Answer{{Return: &Return{Status: 204}}}
	cond := func(kind ConditionKind, name string, m MatchKind, v string) []Condition {
		return []Condition{{Kind: kind, Name: name, Match: m, Value: v}}
	}
	rule := func(c []Condition) []SplitRule { return []SplitRule{{Conditions: c, Targets: to}} }
	for _, tc := range []struct {
		name string
		s    Split
		ok   bool
	}{
		{"weights", Split{Default: to}, true},
		{"weights of any sum", Split{Default: []Target{{Backend: "a", Weight: 3}, {Backend: "b", Weight: 1000000}}}, true},
		{"one target of weight 1", Split{Default: []Target{{Backend: "a", Weight: 1}}}, true},
		{"weights sum to 0", Split{Default: []Target{{Backend: "a"}, {Backend: "b"}}}, false},
		{"weight over the bound", Split{Default: []Target{{Backend: "a", Weight: MaxSplitWeight + 1}}}, false},
		{"negative weight", Split{Default: []Target{{Backend: "a", Weight: 2}, {Backend: "b", Weight: -1}}}, false},
		{"no default", Split{}, false},
		{"too many targets", Split{Default: make([]Target, MaxSplitTargets+1)}, false},
		{"exact header", Split{Rules: rule(cond(ConditionHeader, "X-Canary", MatchExact, "always")), Default: to}, true},
		{"caseless argument", Split{Rules: rule(cond(ConditionArgument, "v", MatchCaseless, "")), Default: to}, true},
		{"regex header", Split{Rules: rule(cond(ConditionHeader, "h", MatchRegex, `^v[2-3]\.`)), Default: to}, true},
		{"method", Split{Rules: rule(cond(ConditionVariable, "request_method", MatchExact, "GET")), Default: to}, true},
		{"cookie with dot", Split{Rules: rule(cond(ConditionCookie, "a.b", MatchExact, "always")), Default: to}, true},
		{"no match kind", Split{Rules: rule(cond(ConditionHeader, "h", "", "x")), Default: to}, false},
		{"empty regex", Split{Rules: rule(cond(ConditionHeader, "h", MatchRegex, "")), Default: to}, false},
		{"regex with dollar", Split{Rules: rule(cond(ConditionHeader, "h", MatchRegex, "a$")), Default: to}, false},
		{"value with quote", Split{Rules: rule(cond(ConditionHeader, "h", MatchExact, `a"b`)), Default: to}, false},
		{"header with dot", Split{Rules: rule(cond(ConditionHeader, "a.b", MatchExact, "x")), Default: to}, false},
		{"argument with dash", Split{Rules: rule(cond(ConditionArgument, "a-b", MatchExact, "x")), Default: to}, false},
		{"unknown variable", Split{Rules: rule(cond(ConditionVariable, "host", MatchExact, "x")), Default: to}, false},
		{"unknown kind", Split{Rules: rule(cond("path", "x", MatchExact, "x")), Default: to}, false},
		{"rule without conditions", Split{Rules: []SplitRule{{Targets: to}}, Default: to}, false},
		{"an answer", Split{Default: []Target{{Backend: "a", Weight: 50}, AnswerTarget(0, 50)}, Answers: ret}, true},
		{"an answer out of range", Split{Default: []Target{{Backend: "a", Weight: 50}, AnswerTarget(1, 50)}, Answers: ret}, false},
		{"a backend and an answer", Split{Default: []Target{{Backend: "a", Answer: 1, Weight: 100}}, Answers: ret}, false},
		{"an empty answer", Split{Default: []Target{AnswerTarget(0, 100)}, Answers: []Answer{{}}}, false},
		{"an answer without answers", Split{Default: []Target{{Backend: "a", Weight: 50}, AnswerTarget(0, 50)}}, false},
		{"an answer both redirect and return", Split{Default: []Target{AnswerTarget(0, 100)},
			Answers: []Answer{{Return: &Return{Status: 204}, Redirect: &Redirect{Code: 301, URL: "http://x/"}}}}, false},
		{"a redirect with headers", Split{Default: []Target{AnswerTarget(0, 100)},
			Answers: []Answer{{Redirect: &Redirect{Code: 301, URL: "http://x/"}, Headers: []Header{{Name: "X", Value: "y"}}}}}, false},
		{"a canary", Split{Default: to, Primary: "b"}, true},
		{"a canary of a backend it does not pick", Split{Default: to, Primary: "c"}, false},
		{"a canary of three backends", Split{Default: append([]Target{{Backend: "c", Weight: 1}}, to...), Primary: "a"}, false},
		{"a canary with answers", Split{Default: append([]Target{AnswerTarget(0, 1)}, to...), Answers: ret, Primary: "a"}, false},
	} {
		if err := tc.s.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// A canary rule is ingress-nginx's precedence as a split's rules, in
// order: the header (always/never, a value or a pattern), the cookie
// (always/never), then the weight.
func TestCanaryRuleSplit(t *testing.T) {
	src := ObjectRef{Kind: "Ingress", Namespace: "ns", Name: "c"}
	on := func(kind ConditionKind, name string, m MatchKind, v, to string) SplitRule {
		return SplitRule{Conditions: []Condition{{Kind: kind, Name: name, Match: m, Value: v}}, Targets: []Target{{Backend: to, Weight: 1}}}
	}
	weights := func(c, total int) []Target {
		return []Target{{Backend: "can", Weight: c}, {Backend: "main", Weight: total - c}}
	}
	for _, tc := range []struct {
		name string
		rule CanaryRule
		want []SplitRule
	}{
		{"weight", CanaryRule{Weight: 20, WeightTotal: 100}, nil},
		{"header", CanaryRule{Header: "X-Canary", WeightTotal: 100}, []SplitRule{
			on(ConditionHeader, "X-Canary", MatchExact, "always", "can"), on(ConditionHeader, "X-Canary", MatchExact, "never", "main")}},
		{"header value", CanaryRule{Header: "h", HeaderValue: "v2", WeightTotal: 100}, []SplitRule{on(ConditionHeader, "h", MatchExact, "v2", "can")}},
		{"header pattern", CanaryRule{Header: "h", HeaderPattern: "^v", WeightTotal: 100}, []SplitRule{on(ConditionHeader, "h", MatchRegex, "^v", "can")}},
		{"all three", CanaryRule{Header: "h", Cookie: "c", Weight: 7, WeightTotal: 7}, []SplitRule{
			on(ConditionHeader, "h", MatchExact, "always", "can"), on(ConditionHeader, "h", MatchExact, "never", "main"),
			on(ConditionCookie, "c", MatchExact, "always", "can"), on(ConditionCookie, "c", MatchExact, "never", "main")}},
	} {
		s := tc.rule.Split(src, "main", "can")
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(s.Rules, tc.want) || !reflect.DeepEqual(s.Default, weights(tc.rule.Weight, tc.rule.WeightTotal)) ||
			s.Primary != "main" || s.Canary() != "can" || s.Source != src {
			t.Errorf("%s: split %+v", tc.name, s)
		}
	}
}

// Backends lists backends, never answers.
func TestSplitBackendsSkipAnswers(t *testing.T) {
	s := Split{Default: []Target{AnswerTarget(0, 50), {Backend: "a", Weight: 50}},
		Rules:   []SplitRule{{Targets: []Target{{Backend: "b", Weight: 100}}}},
		Answers: []Answer{{Return: &Return{Status: 204}}}}
	if got := s.Backends(); strings.Join(got, ",") != "b,a" {
		t.Fatalf("Backends() = %q, want [b a]", got)
	}
}

// A route's split key depends on the route, not on what the route
// picks.
func TestSplitKeyOfRoute(t *testing.T) {
	src := ObjectRef{Kind: "VirtualServer", Namespace: "ns", Name: "vs"}
	a := (&Split{Source: src, Route: "/a", Default: []Target{{Backend: "x", Weight: 100}}}).Key()
	b := (&Split{Source: src, Route: "/a", Default: []Target{{Backend: "y", Weight: 100}}}).Key()
	c := (&Split{Source: src, Route: "/b"}).Key()
	if a != b || a == c || !strings.HasPrefix(a, "choice@ns/vs.") {
		t.Fatalf("keys %q %q %q", a, b, c)
	}
}
