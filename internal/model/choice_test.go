package model

import (
	"regexp"
	"strings"
	"testing"
)

func TestChoiceValidate(t *testing.T) {
	to := []Target{{Backend: "a", Weight: 60}, {Backend: "b", Weight: 40}}
	ret := []ChoiceAnswer{{Return: &Return{Status: 204}}}
	cond := []Condition{{Kind: ConditionHeader, Name: "X", Match: MatchCaseless, Value: "1"}}
	for _, tc := range []struct {
		name string
		c    Choice
		ok   bool
	}{
		{"weights", Choice{Default: to}, true},
		{"a match", Choice{Matches: []ChoiceMatch{{Conditions: cond, Targets: to}}, Default: to}, true},
		{"no default", Choice{}, false},
		{"weights not 100", Choice{Default: []Target{{Backend: "a", Weight: 60}}}, false},
		{"negative weight", Choice{Default: []Target{{Backend: "a", Weight: 101}, {Backend: "b", Weight: -1}}}, false},
		{"match without conditions", Choice{Matches: []ChoiceMatch{{Targets: to}}, Default: to}, false},
		{"bad variable", Choice{Matches: []ChoiceMatch{{Conditions: []Condition{{Kind: ConditionVariable, Name: "host"}}, Targets: to}}, Default: to}, false},
		{"an answer", Choice{Default: []Target{{Backend: "a", Weight: 50}, AnswerTarget(0, 50)}, Answers: ret}, true},
		{"an answer out of range", Choice{Default: []Target{{Backend: "a", Weight: 50}, AnswerTarget(1, 50)}, Answers: ret}, false},
		{"an answer without answers", Choice{Default: []Target{{Backend: "a", Weight: 50}, AnswerTarget(0, 50)}}, false},
		{"a backend and an answer", Choice{Default: []Target{{Backend: "a", Answer: 1, Weight: 100}}, Answers: ret}, false},
		{"an answer both redirect and return", Choice{Default: []Target{AnswerTarget(0, 100)},
			Answers: []ChoiceAnswer{{Return: &Return{Status: 204}, Redirect: &Redirect{Code: 301, URL: "http://x/"}}}}, false},
		{"an empty answer", Choice{Default: []Target{AnswerTarget(0, 100)}, Answers: []ChoiceAnswer{{}}}, false},
	} {
		if err := tc.c.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// Backends lists backends, never answers.
func TestChoiceBackendsSkipAnswers(t *testing.T) {
	c := Choice{Default: []Target{AnswerTarget(0, 50), {Backend: "a", Weight: 50}},
		Matches: []ChoiceMatch{{Targets: []Target{{Backend: "b", Weight: 100}}}},
		Answers: []ChoiceAnswer{{Return: &Return{Status: 204}}}}
	if got := c.Backends(); strings.Join(got, ",") != "b,a" {
		t.Fatalf("Backends() = %q, want [b a]", got)
	}
}

// ChoiceKey depends on the route, not on what the route chooses.
func TestChoiceKey(t *testing.T) {
	src := ObjectRef{Kind: "VirtualServer", Namespace: "ns", Name: "vs"}
	a := ChoiceKey(&Choice{Source: src, Route: "/a", Default: []Target{{Backend: "x", Weight: 100}}})
	b := ChoiceKey(&Choice{Source: src, Route: "/a", Default: []Target{{Backend: "y", Weight: 100}}})
	c := ChoiceKey(&Choice{Source: src, Route: "/b"})
	if a != b || a == c || !strings.HasPrefix(a, "choice@ns/vs.") {
		t.Fatalf("keys %q %q %q", a, b, c)
	}
}

func TestParseVariableTemplate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		vs   VariableSet
		want string // Template.String(), or "" for an error
	}{
		{`Hello ${host}!`, ReturnBodyVariables, "Hello ${host}!"},
		{`a\"b\\c\n`, ReturnBodyVariables, "a\"b\\c\n"},
		{`keep \x`, ReturnBodyVariables, `keep \x`},
		{`${http_X_Y}${cookie_s}${arg_q}`, ReturnBodyVariables, "${http_x_y}${cookie_s}${arg_q}"},
		{`${http_}`, ReturnBodyVariables, ""},
		{`${http_a-b}`, ReturnBodyVariables, ""},
		{`${upstream_addr}`, ReturnBodyVariables, ""},
		{`$host`, ReturnBodyVariables, ""},
		{`${host`, ReturnBodyVariables, ""},
		{`a"b`, ReturnBodyVariables, ""},
		{`a\`, ReturnBodyVariables, ""},
		{"a\nb", ReturnBodyVariables, "a\nb"},
		{"a\nb", RedirectVariables, ""},
		{"a\x00b", ReturnBodyVariables, ""},
		{"a\u0085b", ReturnBodyVariables, ""},
		{`${upstream_status}`, ErrorPageVariables, "${upstream_status}"},
		{`${host}`, ErrorPageVariables, ""},
		{strings.Repeat("a", MaxTemplateLen+1), ReturnBodyVariables, ""},
	} {
		got, err := ParseVariableTemplate(tc.in, tc.vs)
		if (err == nil) != (tc.want != "") || err == nil && got.String() != tc.want {
			t.Errorf("ParseVariableTemplate(%q) = %q, %v; want %q", tc.in, got.String(), err, tc.want)
		}
	}
}

func TestParseRedirectTemplate(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"${scheme}://${host}${request_uri}", true},
		{"https://example.com/new?from=${request_uri}", true},
		{"${http_x_forwarded_proto}://example.com/", true},
		{"${request_uri}", false},
		{"//${host}/", false},
		{"https://${host} /", false},
		{"https://${remote_addr}/", false},
	} {
		if _, err := ParseRedirectTemplate(tc.in, RedirectVariables); (err == nil) != tc.ok {
			t.Errorf("ParseRedirectTemplate(%q): %v, want ok %v", tc.in, err, tc.ok)
		}
	}
}

// FuzzVariableTemplate: what ParseVariableTemplate accepts holds only
// allowed variables, and literals without "$" or control characters
// other than those response text may hold. Run with
//
//	go test ./internal/model -run=XXX -fuzz=FuzzVariableTemplate -fuzztime=60s
func FuzzVariableTemplate(f *testing.F) {
	for _, e := range injectionCorpus {
		f.Add(e, true)
		f.Add("${host}"+e, false)
	}
	f.Add(`a\"${request_uri}\n`, true)
	f.Fuzz(func(t *testing.T, s string, text bool) {
		vs := RedirectVariables
		if text {
			vs = ReturnBodyVariables
		}
		tmpl, err := ParseVariableTemplate(s, vs)
		if err != nil {
			return
		}
		for _, p := range tmpl {
			if p.Variable != "" {
				if _, ok := vs.allows(p.Variable); !ok || p.Literal != "" || !regexp.MustCompile(`^[a-z0-9_]{1,80}$`).MatchString(p.Variable) {
					t.Fatalf("variable %q from %q", p.Variable, s)
				}
				continue
			}
			for _, r := range p.Literal {
				if r == '$' || r < 0x20 && !(text && (r == '\n' || r == '\t' || r == '\r')) || r == 0x7f || r >= 0x80 && r < 0xa0 {
					t.Fatalf("literal %q from %q", p.Literal, s)
				}
			}
		}
	})
}
