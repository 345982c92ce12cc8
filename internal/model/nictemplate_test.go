package model

import (
	"regexp"
	"strings"
	"testing"
)

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
