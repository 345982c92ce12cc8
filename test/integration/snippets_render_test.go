package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/snippet"
)

// snippetParams are renderParamsFor with the headers-more module, where
// the data plane under test has it (the vendored Angie build does not).
func snippetParams(t *testing.T, plane string) render.Params {
	p := renderParamsFor(plane)
	if optionalModule(t, headersMoreModule) {
		p.HeadersMoreModule = filepath.Join(dataPlane.modules, headersMoreModule)
	}
	return p
}

const headersMoreModule = "ngx_http_headers_more_filter_module.so"

// skipWithoutHeadersMore skips a case whose snippet uses more_* where the
// data plane under test cannot load headers-more: the controller refuses
// such a snippet there (with a Problem, see TestSnippetGates).
func skipWithoutHeadersMore(t *testing.T, src string) {
	t.Helper()
	if strings.Contains(src, "more_") && !optionalModule(t, headersMoreModule) {
		t.Skipf("the snippet uses headers-more, which %s cannot load", dataPlane.binary)
	}
}

// withSnippets gives every location of the base model's safe.test the
// location snippet src, and the host the server snippet srv.
func withSnippets(t *testing.T, src, srv string) *model.Model {
	t.Helper()
	m := baseModel(t)
	safe := m.Servers[1]
	if srv != "" {
		s, err := snippet.Parse(srv, snippet.Server)
		if err != nil {
			t.Fatal(err)
		}
		safe.Policy = &model.ServerPolicy{Snippet: s}
	}
	s, err := snippet.Parse(src, snippet.Location)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range safe.Locations {
		if l.Policy == nil {
			l.Policy = &model.Policy{}
		}
		l.Policy.Snippet = s
	}
	return m
}

// TestPolicyRenderSnippetsPass: every accepted snippet of the corpus
// (internal/snippet/testdata/corpus, all but cve-*), as a location and a
// server snippet, renders a configuration nginx -t accepts on both data
// planes, with the ConfigMap's headers beside it.
func TestPolicyRenderSnippetsPass(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("../../internal/snippet/testdata/corpus/*.conf")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, p := range paths {
		if strings.HasPrefix(filepath.Base(p), "cve-") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, plane := range dataPlanes {
			t.Run(filepath.Base(p)+"/"+plane, func(t *testing.T) {
				skipWithoutHeadersMore(t, string(src))
				m := withSnippets(t, string(src), string(src))
				m.Config.AddHeaders = []model.Header{{Name: "X-Global", Value: "g"}}
				m.Config.HideHeaders = []string{"X-Debug"}
				out, err := render.Render(m, snippetParams(t, plane))
				if err != nil {
					t.Fatal(err)
				}
				nginxTest(t, out.Files, m)
			})
		}
	}
}

// TestPolicyRenderSnippetInert: a value holding a quote, semicolons, a
// brace and "#" renders the same directive structure, as nginx reads it,
// as a plain value does: it cannot end its directive.
func TestPolicyRenderSnippetInert(t *testing.T) {
	t.Parallel()
	for _, plane := range dataPlanes {
		benign := withSnippets(t, `add_header X "plain"; set $v "a"; return 200 "b";`, `rewrite ^/a$ /b last;`)
		hostile := withSnippets(t, `add_header X "a\"; include /etc/passwd; #"; set $v "}{;"; return 200 "';\"{";`,
			`rewrite "^/a{1,2}$" "/b;{}#" last;`)
		want := skeleton(t, mustRenderSnippets(t, benign, plane))
		out := mustRenderSnippets(t, hostile, plane)
		if got := skeleton(t, out); got != want {
			t.Fatalf("%s: the hostile values changed the structure:\n%s\nwant\n%s", plane, got, want)
		}
		nginxTest(t, out, hostile)
	}
}

func mustRenderSnippets(t *testing.T, m *model.Model, plane string) render.Files {
	t.Helper()
	out, err := render.Render(m, snippetParams(t, plane))
	if err != nil {
		t.Fatal(err)
	}
	return out.Files
}
