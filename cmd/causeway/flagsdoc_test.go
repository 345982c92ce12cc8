package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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

// TestMigrateFlagsDocumented: every flag of `causeway migrate check` and
// `causeway migrate to-gateway` is named in its section of
// docs/migrating-from-ingress-nginx.md.
func TestMigrateFlagsDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/migrating-from-ingress-nginx.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, tc := range []struct {
		cmd            func() *cobra.Command
		section, until string
	}{
		{newMigrateCheckCommand, "## 1. Check what you have", "## 2. "},
		{newMigrateToGatewayCommand, "## To Gateway API", "### The conversion table"},
	} {
		cmd := tc.cmd()
		start, end := strings.Index(doc, tc.section), strings.Index(doc, tc.until)
		if start < 0 || end < start {
			t.Fatalf("no section %q before %q", tc.section, tc.until)
		}
		text := doc[start:end]
		n := 0
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			n++
			named := regexp.MustCompile("--" + regexp.QuoteMeta(f.Name) + "([^a-z-]|$)")
			if !named.MatchString(text) {
				t.Errorf("causeway migrate %s: --%s is not in the section %q", cmd.Name(), f.Name, tc.section)
			}
		})
		if n == 0 {
			t.Errorf("causeway migrate %s has no flags: the test checks nothing", cmd.Name())
		}
	}
}

// TestTunnelFlagsDocumented: every flag of `causeway tunnel server`,
// `causeway tunnel agent` and `causeway tunnel iptables` is named, in
// backquotes, in docs/tunnel.md.
func TestTunnelFlagsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/tunnel.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []*cobra.Command{newTunnelServerCommand(), newTunnelAgentCommand(), newTunnelIptablesCommand()} {
		n := 0
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			n++
			named := regexp.MustCompile("`--" + regexp.QuoteMeta(f.Name) + "[` =]")
			if !named.Match(doc) {
				t.Errorf("causeway tunnel %s: --%s is not in docs/tunnel.md (spelled whole, in backquotes)", cmd.Name(), f.Name)
			}
		})
		if n == 0 {
			t.Errorf("causeway tunnel %s has no flags: the test checks nothing", cmd.Name())
		}
	}
}
