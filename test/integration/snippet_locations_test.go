package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRefusedSnippetClosesOnlyItsLocation: a server-snippet whose
// refusals are all deny-only location blocks (location ~ /\.git { deny
// all; }) is refused, with snippets on (blocks are never read) and off,
// and closes only the requests those blocks match: the rest of the
// Ingress is served. The ConfigMap's server-snippet does so on every host.
func TestRefusedSnippetClosesOnlyItsLocation(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	ing := annotatedIngressYAML("web", "git.test", "web", "server-snippet", "location ~ /\\.git {\n  deny all;\n}\nadd_header X-Snippet on;")
	c := startController(t, map[string]string{"app.yaml": ingressClass + serviceYAML("default", "web", 80, web) + ing +
		annotatedIngressYAML("other", "other.test", "web")})
	check := func(want map[string]int) error {
		for hp, status := range want {
			i := strings.IndexByte(hp, '/')
			host, path := hp[:i], hp[i:]
			if r := c.Get(host, path); r.Status != status {
				return fmt.Errorf("%s%s: %d, want %d", host, path, r.Status, status)
			}
		}
		return nil
	}
	closed := map[string]int{"git.test/.git/config": 503, "git.test/app/.git/HEAD": 503, "git.test/": 200, "git.test/app": 200}
	if err := check(closed); err != nil {
		t.Fatalf("snippets off: %v", err)
	}
	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"allow-snippet-annotations": "true"}))
	eventually(t, 10*time.Second, func() error {
		if r := c.Get("git.test", "/"); r.Header.Get("X-Snippet") != "" {
			return fmt.Errorf("the refused snippet's header was applied")
		}
		return check(closed)
	})
	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"allow-snippet-annotations": "true",
		"server-snippet": "location = /metrics { return 404; }"}))
	eventually(t, 10*time.Second, func() error {
		return check(map[string]int{"other.test/metrics": 503, "other.test/metricsx": 200, "other.test/": 200, "git.test/metrics": 503, "git.test/.git": 503})
	})
}
