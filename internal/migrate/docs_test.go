package migrate

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/frontend/configmap"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
)

const (
	migrationDoc     = "../../docs/migrating-from-ingress-nginx.md"
	configurationDoc = "../../docs/configuration.md"
)

// generated are the sections of the documentation made from the
// registries.
var generated = []struct {
	doc, name string
	text      func() string
}{
	{migrationDoc, "differences", DifferencesMarkdown},
	{migrationDoc, "configmap-keys", ConfigMapKeysMarkdown},
	{migrationDoc, "controller-flags", FlagsMarkdown},
	{configurationDoc, "annotation-defaults", AnnotationDefaultsMarkdown},
}

func markers(name string) (begin, end string) {
	return fmt.Sprintf("<!-- BEGIN GENERATED %s: go test ./internal/migrate -update -->\n", name),
		fmt.Sprintf("<!-- END GENERATED %s -->\n", name)
}

// section returns the text between a section's markers in doc (the file
// path), and where it is.
func section(t *testing.T, path, doc, name string) (text string, from, to int) {
	t.Helper()
	begin, end := markers(name)
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated section %q (between %q and %q)", path, name, strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	from = i + len(begin)
	return doc[from:j], from, j
}

// TestGeneratedDocs keeps the generated sections of the migration guide
// and the configuration reference equal to the registries, so they cannot
// drift from the code.
func TestGeneratedDocs(t *testing.T) {
	for _, path := range []string{migrationDoc, configurationDoc} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(data)
		for _, g := range generated {
			if g.doc != path {
				continue
			}
			got, from, to := section(t, path, doc, g.name)
			want := "\n" + g.text() + "\n"
			if got == want {
				continue
			}
			if *update {
				doc = doc[:from] + want + doc[to:]
				continue
			}
			t.Errorf("the %q section of %s is out of date with the registries: run go test ./internal/migrate -update", g.name, path)
		}
		if *update {
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestConfigurationDocsEveryKey: docs/configuration.md documents every
// ConfigMap key Causeway parses.
func TestConfigurationDocsEveryKey(t *testing.T) {
	data, err := os.ReadFile(configurationDoc)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range configmap.Keys() {
		if k.Status.Parsed() {
			n++
			if !strings.Contains(string(data), "`"+k.Name+"`") {
				t.Errorf("%s does not document the ConfigMap key `%s`", configurationDoc, k.Name)
			}
		}
	}
	if n == 0 {
		t.Fatal("no key is parsed: the test checks nothing")
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
		if a.Difference != "" && a.Family != annotations.FamilyNIC {
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
