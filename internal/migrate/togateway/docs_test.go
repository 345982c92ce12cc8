package togateway

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

const migrationDoc = "../../../docs/migrating-from-ingress-nginx.md"

// TestRulesDocumented keeps the conversion table of the migration guide's
// "To Gateway API" section equal to the rule table (go test
// ./internal/migrate/togateway -update rewrites it).
func TestRulesDocumented(t *testing.T) {
	data, err := os.ReadFile(migrationDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	begin := "<!-- BEGIN GENERATED to-gateway-rules: go test ./internal/migrate/togateway -update -->\n"
	end := "<!-- END GENERATED to-gateway-rules -->\n"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated section to-gateway-rules (between %q and %q)", migrationDoc, strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	from := i + len(begin)
	want := "\n" + RulesMarkdown() + "\n"
	if doc[from:j] == want {
		return
	}
	if *update {
		if err := os.WriteFile(migrationDoc, []byte(doc[:from]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the to-gateway-rules section of %s is out of date with the rule table: run go test ./internal/migrate/togateway -update", migrationDoc)
}

// TestRulesMarkdown: the table has a row per rule, and a pipe inside a
// cell cannot end it.
func TestRulesMarkdown(t *testing.T) {
	md := RulesMarkdown()
	lines := strings.Split(strings.TrimSuffix(md, "\n"), "\n")
	if len(lines) != len(Rules())+2 {
		t.Fatalf("%d lines for %d rules", len(lines), len(Rules()))
	}
	for i, l := range lines {
		// Five cells: six unescaped pipes.
		if n := strings.Count(l, "|") - strings.Count(l, `\|`); n != 6 {
			t.Errorf("line %d has %d cell separators, want 6: %s", i, n, l)
		}
	}
	for _, r := range Rules() {
		if !strings.Contains(md, fmt.Sprintf("| `%s` |", r.ID)) {
			t.Errorf("rule %s has no row", r.ID)
		}
	}
}
