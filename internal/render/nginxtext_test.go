package render

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template/parse"
)

// nginxTextAllowed are the string literals outside internal/render that
// may look like nginx configuration, each for a reason that writes none:
// path (relative to the repository root) and a substring of the literal.
var nginxTextAllowed = []struct{ path, text, why string }{
	// Hostile values the fuzz and integration tests feed to every
	// grammar: input that must be refused, never output.
	{"internal/testcorpus/testcorpus.go", "", "hostile input for tests"},
	// Documentation of the snippet grammar, showing users what they may
	// write (docs/annotations.md and docs/configmap.md are generated
	// from these).
	{"internal/frontend/ingress/annotations/snippets.go", `location ~ /\.git { deny all; }`, "an example of a user's snippet in the docs"},
	{"internal/frontend/configmap/keys.go", `location ~ /\.git { deny all; }`, "an example of a user's snippet in the docs"},
}

// TestOnlyRenderWritesNginxText: no Go file outside internal/render (tests
// aside) holds a string literal that reads as nginx configuration: a
// directive that render's templates write, at the start of the literal or
// of a line or after ";" or "{", followed by at most four arguments and
// ";" or "{" that ends the literal or the line, or is followed by "}" or
// another directive. Configuration the runtime needs for itself (nginx -t
// probes) comes from render too (ProbeConfig), so that every value in
// nginx text passes through Quote or a grammar here.
func TestOnlyRenderWritesNginxText(t *testing.T) {
	directive := directivePattern(t)
	root := filepath.Join("..", "..")
	var files int
	used := map[int]bool{}
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel == "internal/render" || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
				return nil
			}
			files++
			for _, hit := range nginxLiterals(t, path, directive) {
				if i := allowedNginxText(rel, hit.text); i >= 0 {
					used[i] = true
				} else {
					t.Errorf("%s:%d: nginx configuration outside internal/render (print it from a template there): %q", rel, hit.line, hit.text)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 100 {
		t.Fatalf("scanned only %d files: is the repository root %s?", files, root)
	}
	for i, a := range nginxTextAllowed {
		if !used[i] {
			t.Errorf("nginxTextAllowed holds %s %q, which no longer matches: remove it", a.path, a.text)
		}
	}
}

// TestNginxTextPatternFinds: the scan's pattern catches what the runtime
// wrote before its probes moved here, and leaves prose alone.
func TestNginxTextPatternFinds(t *testing.T) {
	directive := directivePattern(t)
	for _, s := range []string{
		"load_module %s;\npid %s;\nerror_log stderr;\nevents {}\nhttp {\n  %s\n}\n",
		"access_log off;",
		"  server {\n    listen %s ssl;\n    ssl_certificate %s;\n  }\n",
		`set $causeway_backend "%s";`,
		"upstream x {",
		"x { proxy_pass http://a; }",
		"load_module ",
	} {
		if !directive.MatchString(s) {
			t.Errorf("not found in %q", s)
		}
	}
	for _, s := range []string{
		"proxy_set_header %s would replace a header the subrequest sets itself; the whole snippet is refused",
		"the location of the server",
		"add_header",
		"server",
		"upstream ",
		"listen %s: %w",
		"upstream %q: %v; its routes answer 503",
		"on every host; ignored",
		"set upstream-hash-by to hash; want round_robin",
	} {
		if directive.MatchString(s) {
			t.Errorf("prose %q taken for nginx text", s)
		}
	}
}

// allowedNginxText is the index of the entry of nginxTextAllowed that
// allows text in file rel, -1 for none.
func allowedNginxText(rel, text string) int {
	return slices.IndexFunc(nginxTextAllowed, func(a struct{ path, text, why string }) bool {
		return a.path == rel && strings.Contains(text, a.text)
	})
}

// directivePattern matches nginx text built from the names of the
// directives and blocks that render's templates write (the first word of
// each line of their text, comments aside), so it grows with them.
func directivePattern(t *testing.T) *regexp.Regexp {
	names := map[string]bool{}
	for _, tmpl := range templates.Templates() {
		if tmpl.Tree == nil {
			continue
		}
		collectDirectives(tmpl.Tree.Root, names)
	}
	for _, must := range []string{"http", "events", "server", "location", "load_module", "pid", "listen", "lua_package_path"} {
		if !names[must] {
			t.Fatalf("the templates write no %s: the directive list is wrong", must)
		}
	}
	var alt []string
	for n := range names {
		alt = append(alt, regexp.QuoteMeta(n))
	}
	slices.Sort(alt)
	name := `(?:` + strings.Join(alt, "|") + `)`
	// A name, up to four arguments, then ";" or "{" that ends the text or
	// the line, closes a block or starts another directive.
	// Or a literal that is only a name with "_" (a word no prose uses)
	// and the space before its arguments, to be joined to them
	// ("load_module " + path + ";").
	var joined []string
	for _, n := range alt {
		if strings.Contains(n, "_") {
			joined = append(joined, n)
		}
	}
	return regexp.MustCompile(`(?:^|[\n;{])[ \t]*` + name + `(?:[ \t]+[^\s;{}]+){0,4}[ \t]*[;{][ \t]*(?:$|\n|\}|` + name + `[ \t])` +
		`|^[ \t\n]*(?:` + strings.Join(joined, "|") + `)[ \t]+$`)
}

var directiveName = regexp.MustCompile(`^[a-z][a-z0-9_]+$`)

func collectDirectives(n parse.Node, names map[string]bool) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			collectDirectives(c, names)
		}
	case *parse.TextNode:
		for _, line := range strings.Split(string(n.Text), "\n") {
			// A name and arguments, or a name whose arguments an
			// action prints.
			f := strings.Fields(line)
			if (len(f) > 1 || len(f) == 1 && strings.HasSuffix(line, " ")) && directiveName.MatchString(f[0]) {
				names[f[0]] = true
			}
		}
	case *parse.IfNode:
		collectDirectives(n.List, names)
		collectDirectives(n.ElseList, names)
	case *parse.RangeNode:
		collectDirectives(n.List, names)
		collectDirectives(n.ElseList, names)
	case *parse.WithNode:
		collectDirectives(n.List, names)
		collectDirectives(n.ElseList, names)
	}
}

type nginxLiteral struct {
	line int
	text string
}

// nginxLiterals are the string literals of a Go file that directive
// matches.
func nginxLiterals(t *testing.T, path string, directive *regexp.Regexp) []nginxLiteral {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []nginxLiteral
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err == nil && directive.MatchString(s) {
			out = append(out, nginxLiteral{fset.Position(lit.Pos()).Line, s})
		}
		return true
	})
	return out
}
