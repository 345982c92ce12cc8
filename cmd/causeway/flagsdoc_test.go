package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestControllerFlagsDocumented: every flag `causeway controller --help`
// shows is in the README's flags table, or, for ingress-nginx's names
// Causeway takes, in the generated flags table of
// docs/migrating-from-ingress-nginx.md.
func TestControllerFlagsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(readme), "## `causeway controller` flags")
	end := strings.Index(string(readme), "## Tests")
	if start < 0 || end < start {
		t.Fatal("README.md has no flags section before its Tests section")
	}
	table := string(readme[start:end])
	migrating, err := os.ReadFile("../../docs/migrating-from-ingress-nginx.md")
	if err != nil {
		t.Fatal(err)
	}
	cmd, _ := controllerCommand()
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		named := regexp.MustCompile("`--" + regexp.QuoteMeta(f.Name) + "[` =]")
		if !named.MatchString(table) && !named.MatchString(string(migrating)) {
			t.Errorf("--%s is not in README.md's flags table (spelled whole, in backquotes)", f.Name)
		}
	})
}
