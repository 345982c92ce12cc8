package integration

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/spec"
)

const ingressClass = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: causeway}
spec: {controller: causeway.io/ingress-controller}
---
`

// ingressYAML renders an Ingress with one host and paths; each path is
// "TYPE PATH SERVICE".
func ingressYAML(ns, name, host string, paths ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: %s, namespace: %s}\nspec:\n  ingressClassName: causeway\n  rules:\n  - host: %q\n    http:\n      paths:\n", name, ns, host)
	for _, p := range paths {
		f := strings.Fields(p)
		fmt.Fprintf(&b, "      - {path: %q, pathType: %s, backend: {service: {name: %s, port: {number: 80}}}}\n", f[1], f[0], f[2])
	}
	b.WriteString("---\n")
	return b.String()
}

// TestPathTableOverHTTP serves every row of the Kubernetes path table from
// one controller, a host per row, and checks real nginx routes each request
// exactly as the table says.
func TestPathTableOverHTTP(t *testing.T) {
	t.Parallel()
	backends := []*backend{startBackend(t, "p0"), startBackend(t, "p1"), startBackend(t, "p2")}
	var m strings.Builder
	m.WriteString(ingressClass)
	for i, b := range backends {
		m.WriteString(serviceYAML("default", fmt.Sprintf("p%d", i), 80, b))
	}
	for i, tc := range spec.PathTable {
		var paths []string
		for j, p := range tc.Paths {
			paths = append(paths, fmt.Sprintf("%s %s p%d", p.Type, p.Path, j))
		}
		m.WriteString(ingressYAML("default", fmt.Sprintf("row%d", i), fmt.Sprintf("row%d.paths.test", i), paths...))
	}
	c := startController(t, map[string]string{"paths.yaml": m.String()})
	for i, tc := range spec.PathTable {
		t.Run(tc.Name, func(t *testing.T) {
			r := c.Get(fmt.Sprintf("row%d.paths.test", i), tc.Request)
			if tc.Want < 0 {
				if r.Status != 404 {
					t.Fatalf("%q: status %d (served by %q), want 404 from the default backend", tc.Request, r.Status, r.Reply.Service)
				}
				return
			}
			if want := fmt.Sprintf("p%d", tc.Want); r.Status != 200 || r.Reply.Service != want {
				t.Fatalf("%q: status %d served by %q, want 200 from %s", tc.Request, r.Status, r.Reply.Service, want)
			}
			if r.Reply.Path != tc.Request {
				t.Fatalf("backend saw path %q, want %q unchanged", r.Reply.Path, tc.Request)
			}
		})
	}
}

func TestWildcardHosts(t *testing.T) {
	t.Parallel()
	wild, exact, any := startBackend(t, "wild"), startBackend(t, "exact"), startBackend(t, "any")
	m := ingressClass + serviceYAML("default", "wild", 80, wild) + serviceYAML("default", "exact", 80, exact) +
		ingressYAML("default", "wild", "*.foo.test", "Prefix / wild") +
		ingressYAML("default", "exact", "bar.foo.test", "Prefix / exact")
	c := startController(t, map[string]string{"hosts.yaml": m})
	for _, tc := range []struct{ host, want string }{
		{"baz.foo.test", "wild"},
		{"BAZ.foo.test", "wild"},
		{"bar.foo.test", "exact"}, // an exact host wins over a wildcard
		{"a.baz.foo.test", ""},    // two labels: no match
		{"foo.test", ""},          // the bare suffix: no match
	} {
		r := c.Get(tc.host, "/")
		if tc.want == "" && r.Status != 404 || tc.want != "" && r.Reply.Service != tc.want {
			t.Errorf("host %q: status %d served by %q, want %q", tc.host, r.Status, r.Reply.Service, tc.want)
		}
	}

	// A rule without a host matches every host.
	c.WriteManifest("any.yaml", serviceYAML("default", "any", 80, any)+ingressYAML("default", "any", "", "Prefix /any any"))
	eventually(t, 5*time.Second, func() error {
		for _, h := range []string{"unknown.test", "baz.foo.test", "bar.foo.test"} {
			if r := c.Get(h, "/any/x"); r.Reply.Service != "any" {
				return fmt.Errorf("host %q: served by %q", h, r.Reply.Service)
			}
		}
		return nil
	})
}

func TestDefaultBackend(t *testing.T) {
	t.Parallel()
	web, fallback := startBackend(t, "web"), startBackend(t, "fallback")
	m := ingressClass + serviceYAML("default", "web", 80, web) + serviceYAML("default", "fallback", 80, fallback) + `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: site, namespace: default}
spec:
  ingressClassName: causeway
  defaultBackend: {service: {name: fallback, port: {number: 80}}}
  rules:
  - host: site.test
    http:
      paths:
      - {path: /app, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`
	c := startController(t, map[string]string{"site.yaml": m})
	for _, tc := range []struct{ host, path, want string }{
		{"site.test", "/app/x", "web"},
		{"site.test", "/other", "fallback"}, // unmatched path of the Ingress's host
		{"elsewhere.test", "/", "fallback"}, // unmatched host
	} {
		if r := c.Get(tc.host, tc.path); r.Status != 200 || r.Reply.Service != tc.want {
			t.Errorf("%s%s: status %d served by %q, want %s", tc.host, tc.path, r.Status, r.Reply.Service, tc.want)
		}
	}
}

func TestServiceWithoutEndpointsAnswers503(t *testing.T) {
	t.Parallel()
	m := ingressClass + serviceYAML("default", "empty", 80) +
		ingressYAML("default", "empty", "empty.test", "Prefix / empty", "Prefix /missing nosuchservice")
	c := startController(t, map[string]string{"empty.yaml": m})
	for _, p := range []string{"/", "/missing"} {
		if r := c.Get("empty.test", p); r.Status != 503 {
			t.Errorf("%s: status %d, want 503", p, r.Status)
		}
	}
	if !strings.Contains(c.log.String(), "default/empty") || !strings.Contains(c.log.String(), "nosuchservice") {
		t.Errorf("the missing Service must be logged with the Ingress name")
	}
}

// TestHostsSharingAServer: exact hosts with the same paths and settings
// share one server block in dynamic mode, each host mapped to its own
// backends. Each must still be served by its own Services, next to a
// wildcard that covers them and a host of another shape, and a host whose
// shape changes must leave the shared server.
func TestHostsSharingAServer(t *testing.T) {
	t.Parallel()
	names := []string{"s0", "s1", "s2", "api", "wild", "odd"}
	var m strings.Builder
	m.WriteString(ingressClass)
	for _, n := range names {
		m.WriteString(serviceYAML("default", n, 80, startBackend(t, n)))
	}
	for i := range 3 {
		m.WriteString(ingressYAML("default", fmt.Sprintf("s%d", i), fmt.Sprintf("s%d.shared.test", i),
			fmt.Sprintf("Prefix / s%d", i), "Prefix /api api"))
	}
	m.WriteString(ingressYAML("default", "wild", "*.shared.test", "Prefix / wild", "Prefix /api wild"))
	m.WriteString(ingressYAML("default", "odd", "odd.shared.test", "Prefix / odd", "Exact /api api"))
	c := startController(t, map[string]string{"shared.yaml": m.String()})

	shared, _ := filepath.Glob(filepath.Join(c.StateDir, "servers", "_shared-*.conf"))
	if len(shared) != 1 {
		t.Fatalf("shared server files = %v, want one for s0, s1 and s2", shared)
	}
	check := func(rows [][3]string) error {
		for _, r := range rows {
			if got := c.Get(r[0], r[1]); got.Status != 200 || got.Reply.Service != r[2] {
				return fmt.Errorf("%s%s: status %d served by %q, want %s", r[0], r[1], got.Status, got.Reply.Service, r[2])
			}
		}
		return nil
	}
	if err := check([][3]string{
		{"s0.shared.test", "/", "s0"}, {"s1.shared.test", "/x", "s1"}, {"S2.shared.test", "/", "s2"},
		{"s1.shared.test", "/api", "api"}, {"s2.shared.test", "/api/v1", "api"},
		{"other.shared.test", "/", "wild"}, {"other.shared.test", "/api", "wild"},
		{"odd.shared.test", "/api", "api"}, {"odd.shared.test", "/api/v1", "odd"},
	}); err != nil {
		t.Fatal(err)
	}

	// s1 gains a path: it leaves the shared server; s0 and s2 stay.
	m.WriteString(ingressYAML("default", "s1-extra", "s1.shared.test", "Prefix /extra odd"))
	c.WriteManifest("shared.yaml", m.String())
	eventually(t, 5*time.Second, func() error {
		return check([][3]string{
			{"s1.shared.test", "/extra", "odd"}, {"s1.shared.test", "/", "s1"}, {"s1.shared.test", "/api", "api"},
			{"s0.shared.test", "/", "s0"}, {"s2.shared.test", "/", "s2"}, {"s0.shared.test", "/api", "api"},
		})
	})
}
