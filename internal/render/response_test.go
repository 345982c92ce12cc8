package render

import (
	"regexp"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// FuzzTemplateRender: whatever ParseVariableTemplate accepts for a
// return body or a redirect prints as one nginx quoted token: no raw
// control character, no unescaped quote, and "$" only before an allowed
// ${name}. Run with
//
//	go test ./internal/render -run=XXX -fuzz=FuzzTemplateRender -fuzztime=60s
func FuzzTemplateRender(f *testing.F) {
	f.Add(`\"${request_uri}\" is gone;\n{${http_x_user}} \\ ;`, true)
	f.Add("${scheme}://${host}/a?b=${request_uri}", false)
	f.Add("a\"b$c\n", true)
	token := regexp.MustCompile(`^"(?:[^"\\$\x00-\x1f\x7f]|\\["\\ntr]|\$\{[a-z0-9_]+\})*"$`)
	varRe := regexp.MustCompile(`\$\{([a-z0-9_]+)\}`)
	f.Fuzz(func(t *testing.T, s string, text bool) {
		vs := model.RedirectVariables
		if text {
			vs = model.ReturnBodyVariables
		}
		tmpl, err := model.ParseVariableTemplate(s, vs)
		if err != nil {
			return
		}
		q, err := quoteTextTemplate(tmpl)
		if err != nil {
			if strings.Contains(err.Error(), "longer than") {
				return
			}
			t.Fatalf("%q parsed but does not print: %v", s, err)
		}
		if !token.MatchString(q) {
			t.Fatalf("%q prints as %s", s, q)
		}
		for _, m := range varRe.FindAllStringSubmatch(q, -1) {
			allowed := vs.Names[m[1]]
			for _, p := range vs.Prefixes {
				allowed = allowed || strings.HasPrefix(m[1], p)
			}
			if !allowed {
				t.Fatalf("%q prints the variable %s", s, m[1])
			}
		}
	})
}
