package migrate

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/frontend/configmap"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
)

const migrationDoc = "../../docs/migrating-from-ingress-nginx.md"

// generated are the sections of migrationDoc made from the registries.
var generated = []struct {
	name string
	text func() string
}{
	{"differences", DifferencesMarkdown},
	{"configmap-keys", ConfigMapKeysMarkdown},
}

func markers(name string) (begin, end string) {
	return fmt.Sprintf("<!-- BEGIN GENERATED %s: go test ./internal/migrate -update -->\n", name),
		fmt.Sprintf("<!-- END GENERATED %s -->\n", name)
}

// section returns the text between a section's markers, and where it is.
func section(t *testing.T, doc, name string) (text string, from, to int) {
	t.Helper()
	begin, end := markers(name)
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated section %q (between %q and %q)", migrationDoc, name, strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	from = i + len(begin)
	return doc[from:j], from, j
}

// TestGeneratedDocs keeps the generated sections of the migration guide
// equal to the registries, so the guide cannot drift from the code.
func TestGeneratedDocs(t *testing.T) {
	data, err := os.ReadFile(migrationDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, g := range generated {
		got, from, to := section(t, doc, g.name)
		want := "\n" + g.text() + "\n"
		if got == want {
			continue
		}
		if *update {
			doc = doc[:from] + want + doc[to:]
			continue
		}
		t.Errorf("the %q section of %s is out of date with the registries: run go test ./internal/migrate -update", g.name, migrationDoc)
	}
	if *update {
		if err := os.WriteFile(migrationDoc, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDifferencesDocumented checks, name by name, that the guide's
// Differences section lists every annotation and ConfigMap key whose
// registry row has a Difference.
func TestDifferencesDocumented(t *testing.T) {
	data, err := os.ReadFile(migrationDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "\n## Differences\n")
	if start < 0 {
		t.Fatalf(`%s has no "## Differences" section`, migrationDoc)
	}
	diffs := doc[start+1:]
	if end := strings.Index(diffs[3:], "\n## "); end >= 0 {
		diffs = diffs[:end+3]
	}
	annDiffs, keyDiffs, ok := strings.Cut(diffs, "#### ConfigMap keys")
	if !ok {
		t.Fatalf(`the Differences section of %s has no "#### ConfigMap keys" part`, migrationDoc)
	}
	n := 0
	for _, a := range annotations.Known() {
		if a.Difference != "" {
			n++
			if k := "`" + a.Key(annotations.DefaultPrefix) + "`"; !strings.Contains(annDiffs, k) {
				t.Errorf("the Differences section does not list %s", k)
			}
		}
	}
	for _, k := range configmap.Keys() {
		if k.Difference != "" {
			n++
			if name := "`" + k.Name + "`"; !strings.Contains(keyDiffs, name) {
				t.Errorf("the Differences section does not list ConfigMap key %s", name)
			}
		}
	}
	if n == 0 {
		t.Fatal("no registry row has a Difference: the test checks nothing")
	}
}
