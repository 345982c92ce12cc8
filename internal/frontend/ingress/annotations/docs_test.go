package annotations

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/annotations.md is prose written by hand around tables generated
// from Known(). Each table sits between
//
//	<!-- BEGIN GENERATED: name -->
//	<!-- END GENERATED -->
//
// and TestAnnotationsDocs keeps it equal to what Known() says. Run
//
//	go test ./internal/frontend/ingress/annotations -run Docs -update
//
// to rewrite the tables in place; the prose around them is kept.

var update = flag.Bool("update", false, "rewrite the generated tables of docs/annotations.md from Known()")

// annotationsDoc is docs/annotations.md, from this package's directory.
const annotationsDoc = "../../../../docs/annotations.md"

// Names of the generated blocks that are not a group's table.
const (
	blockCauseway        = "causeway"
	blockNotYetSupported = "not yet supported"
	blockFailClosed      = "fail closed"
	blockNIC             = "nginx.org"
)

// groupBlock names the table of an implemented group.
func groupBlock(group string) string { return "group " + group }

// docTables renders every generated block from Known(), by name. Every
// row of Known() is in exactly one of them:
//   - supported ingress-nginx annotations in their group's table;
//   - supported causeway.io annotations in "causeway";
//   - the others in "not yet supported" or "fail closed".
func docTables() map[string]string {
	byBlock := map[string][]Annotation{}
	for _, a := range Known() {
		var name string
		switch {
		case a.Family == FamilyNIC || a.Family == FamilyNICPlus || a.Family == FamilyAppProtect || a.Family == FamilyAppProtectDoS:
			name = blockNIC
		case a.Status == AnnotationFailClosed:
			name = blockFailClosed
		case a.Status == AnnotationNotYetSupported:
			name = blockNotYetSupported
		case a.Family == FamilyCauseway:
			name = blockCauseway
		default:
			name = groupBlock(a.Group)
		}
		byBlock[name] = append(byBlock[name], a)
	}
	out := map[string]string{}
	for name, rows := range byBlock {
		switch name {
		case blockCauseway:
			out[name] = causewayTable(rows)
		case blockNIC:
			out[name] = nicTable(rows)
		case blockNotYetSupported:
			out[name] = notYetSupportedTable(byGroup(rows))
		case blockFailClosed:
			out[name] = failClosedTable(byGroup(rows))
		default:
			out[name] = groupTable(rows)
		}
	}
	return out
}

// byGroup sorts rows by group, then by key; Known() sorts them by key.
func byGroup(rows []Annotation) []Annotation {
	slices.SortStableFunc(rows, func(a, b Annotation) int { return strings.Compare(a.Group, b.Group) })
	return rows
}

// table prints a Markdown table; cells are already escaped.
func table(header []string, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	// Blank lines keep the marker comments out of the table.
	b.WriteString("\n\n")
	line(header)
	b.WriteString(strings.Repeat("|---", len(header)) + "|\n")
	for _, r := range rows {
		line(r)
	}
	b.WriteString("\n")
	return b.String()
}

// orDash is s as Markdown text, or a dash when s is empty.
func orDash(s, dash string) string {
	if strings.TrimSpace(s) == "" {
		return dash
	}
	return mdText(s)
}

func groupTable(rows []Annotation) string {
	cells := make([][]string, len(rows))
	for i, a := range rows {
		cells[i] = []string{mdCode(a.Key(DefaultPrefix)), mdText(string(a.Scope)), orDash(a.Default, "—"),
			orDash(a.Grammar, "—"), orDash(a.Difference, "none")}
	}
	return table([]string{"annotation", "scope", "default", "accepted values", "difference from ingress-nginx"}, cells)
}

// nicTable lists NGINX Ingress Controller's annotations, supported or
// not, with the ingress-nginx annotation that sets the same value.
func nicTable(rows []Annotation) string {
	cells := make([][]string, len(rows))
	for i, a := range rows {
		same := "—"
		if a.SameAs != "" {
			same = mdCode(DefaultPrefix + "/" + a.SameAs)
		}
		cells[i] = []string{mdCode(a.Key(DefaultPrefix)), mdText(string(a.Status)), orDash(string(a.Scope), "—"), same,
			orDash(a.Default, "—"), orDash(a.Grammar, "—"), orDash(cmp.Or(a.Difference, a.Instead), "none")}
	}
	return table([]string{"annotation", "status", "scope", "same value as", "default", "accepted values", "difference from NIC"}, cells)
}

func causewayTable(rows []Annotation) string {
	cells := make([][]string, len(rows))
	for i, a := range rows {
		cells[i] = []string{mdCode(a.Key(DefaultPrefix)), mdText(a.Kind), mdText(a.Group)}
	}
	return table([]string{"annotation", "read from", "group"}, cells)
}

func notYetSupportedTable(rows []Annotation) string {
	cells := make([][]string, len(rows))
	for i, a := range rows {
		cells[i] = []string{mdCode(a.Key(DefaultPrefix)), mdText(a.Group), orDash(a.Instead, "—")}
	}
	return table([]string{"annotation", "group", "instead"}, cells)
}

func failClosedTable(rows []Annotation) string {
	cells := make([][]string, len(rows))
	for i, a := range rows {
		cells[i] = []string{mdCode(a.Key(DefaultPrefix)), mdText(a.Group)}
	}
	return table([]string{"annotation", "group"}, cells)
}

// mdText escapes s for a cell of a GitHub Markdown table, so that it reads
// as written: no emphasis, code, links, HTML, entities, strikethrough or
// math, and no "|" ending the cell. Line breaks become spaces.
func mdText(s string) string {
	isWord := func(i int) bool {
		if i < 0 || i >= len(s) {
			return false
		}
		c := s[i]
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\r', '\n':
			b.WriteByte(' ')
		case '\\', '`', '*', '|', '~', '$', '<', '>', '[', ']':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '_':
			// An underscore inside a word (round_robin) never emphasizes.
			if !isWord(i-1) || !isWord(i+1) {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		case '&':
			// Only "&name;" and "&#...;" are entities.
			if isWord(i+1) || i+1 < len(s) && s[i+1] == '#' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// mdCode prints s as a code span in a table cell: the fence is longer
// than any run of backticks in s, a space pads s when it starts or ends
// with one, and "|" is escaped, which GitHub's tables require even inside
// code spans.
func mdCode(s string) string {
	s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + strings.ReplaceAll(s, "|", `\|`) + pad + fence
}

const (
	beginMarker = "<!-- BEGIN GENERATED: "
	endMarker   = "<!-- END GENERATED -->"
)

var blockRE = regexp.MustCompile(`(?s)<!-- BEGIN GENERATED: ([^\n]*?) -->(.*?)<!-- END GENERATED -->`)

// TestAnnotationsDocs keeps the generated tables of docs/annotations.md
// equal to Known(); with -update it rewrites them.
func TestAnnotationsDocs(t *testing.T) {
	data, err := os.ReadFile(annotationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	want := docTables()
	const hint = "run go test ./internal/frontend/ingress/annotations -run Docs -update"

	if b, e := strings.Count(doc, beginMarker), strings.Count(doc, endMarker); b != e {
		t.Fatalf("docs/annotations.md has %d BEGIN GENERATED markers and %d END GENERATED markers", b, e)
	}
	var out strings.Builder
	last := 0
	seen := map[string]bool{}
	for _, m := range blockRE.FindAllStringSubmatchIndex(doc, -1) {
		name, body := doc[m[2]:m[3]], doc[m[4]:m[5]]
		out.WriteString(doc[last:m[4]])
		last = m[5]
		if strings.Contains(body, beginMarker) {
			t.Fatalf("block %q: BEGIN GENERATED inside a generated block", name)
		}
		if seen[name] {
			t.Errorf("block %q appears twice", name)
		}
		seen[name] = true
		w, ok := want[name]
		if !ok {
			t.Errorf("block %q: no such table in the registry; remove it and its prose by hand", name)
			out.WriteString(body)
			continue
		}
		out.WriteString(w)
		if body != w && !*update {
			t.Errorf("block %q differs from the registry (%s): %s", name, hint, firstDiff(body, w))
		}
	}
	out.WriteString(doc[last:])

	var missing []string
	for name := range want {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	for _, name := range missing {
		if !*update {
			t.Errorf("block %q is missing (%s, then move it and write its prose)", name, hint)
			continue
		}
		fmt.Fprintf(&out, "\n## %s\n\n%s%s -->%s%s\n", name, beginMarker, name, want[name], endMarker)
		t.Logf("block %q appended at the end of docs/annotations.md: move it and write its prose", name)
	}

	if *update && out.String() != doc {
		if err := os.WriteFile(annotationsDoc, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("docs/annotations.md updated")
	}
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d of the block is %q, want %q", i+1, gl, wl)
		}
	}
	return "they differ"
}

// TestMarkdownEscaping: what the tables print reads back as written.
func TestMarkdownEscaping(t *testing.T) {
	for _, tc := range []struct{ in, text, code string }{
		{"round_robin", "round_robin", "`round_robin`"},
		{"$http_*, $cookie_* and _x_", `\$http\_\*, \$cookie\_\* and \_x\_`, "`$http_*, $cookie_* and _x_`"},
		{"a|b", `a\|b`, "`a\\|b`"},
		{"`x`", "\\`x\\`", "`` `x` ``"},
		{"a ``b`` c", "a \\`\\`b\\`\\` c", "```a ``b`` c```"},
		{`\ < > [x] ~ & &amp; &#1;`, `\\ \< \> \[x\] \~ & \&amp; \&#1;`, "`\\ < > [x] ~ & &amp; &#1;`"},
		{"two\nlines", "two lines", "`two lines`"},
	} {
		if got := mdText(tc.in); got != tc.text {
			t.Errorf("mdText(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := mdCode(tc.in); got != tc.code {
			t.Errorf("mdCode(%q) = %q, want %q", tc.in, got, tc.code)
		}
	}
}
