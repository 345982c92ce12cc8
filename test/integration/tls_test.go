package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestTLSBySNI(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	m := ingressClass + serviceYAML("default", "web", 80, web) +
		tlsSecretYAML(t, "default", "a-tls", "a.tls.test", 0) +
		tlsSecretYAML(t, "default", "b-tls", "b.tls.test", 2048) +
		tlsIngressYAML("default", "a", "a.tls.test", "a-tls", "web") +
		tlsIngressYAML("default", "b", "b.tls.test", "b-tls", "web") +
		tlsIngressYAML("default", "c", "c.tls.test", "missing-tls", "web") +
		ingressYAML("default", "plain", "plain.test", "Prefix / web") +
		// Alike hosts (plain.test too) share a shape, whose hop server
		// makes the catch-all serve certificates by Lua: hosts without
		// their own must then not use its SSL context
		// (render/tlscontext.go).
		ingressYAML("default", "alike1", "alike1.test", "Prefix / web") +
		ingressYAML("default", "alike2", "alike2.test", "Prefix / web")
	c := startController(t, map[string]string{"tls.yaml": m})

	for _, tc := range []struct{ host, wantCN string }{
		{"a.tls.test", "a.tls.test"},
		{"b.tls.test", "b.tls.test"},
		{"c.tls.test", "Causeway Default Certificate"}, // missing secret
		{"plain.test", "Causeway Default Certificate"}, // no TLS configured
		{"alike1.test", "Causeway Default Certificate"},
		{"unknown.test", "Causeway Default Certificate"},
	} {
		r := c.GetTLS(tc.host, "/x")
		if r.PeerCN != tc.wantCN {
			t.Errorf("SNI %s: certificate CN %q, want %q", tc.host, r.PeerCN, tc.wantCN)
		}
		if tc.host != "unknown.test" && (r.Status != 200 || r.Reply.ForwardedProto != "https") {
			t.Errorf("SNI %s: status %d proto %q", tc.host, r.Status, r.Reply.ForwardedProto)
		}
	}
	if !strings.Contains(c.log.String(), "missing-tls") {
		t.Error("the missing secret must be reported in the log")
	}
}

func TestHTTPRedirectsToHTTPS(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	m := ingressClass + serviceYAML("default", "web", 80, web) +
		tlsSecretYAML(t, "default", "a-tls", "a.tls.test", 0) +
		tlsIngressYAML("default", "a", "a.tls.test", "a-tls", "web") +
		ingressYAML("default", "plain", "plain.test", "Prefix / web")
	c := startController(t, map[string]string{"tls.yaml": m})

	r := c.Get("a.tls.test", "/some/path?q=1")
	want := fmt.Sprintf("https://a.tls.test:%d/some/path?q=1", c.HTTPSPort)
	if r.Status != 308 || r.Location != want {
		t.Fatalf("TLS host over HTTP: %d Location %q, want 308 to %q", r.Status, r.Location, want)
	}
	if r := c.Get("plain.test", "/"); r.Status != 200 {
		t.Fatalf("a host without TLS must not redirect: %d", r.Status)
	}

	// The ConfigMap turns the redirect off.
	c.WriteManifest("config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config, namespace: causeway}\ndata: {ssl-redirect: \"false\"}\n")
	eventually(t, 5*time.Second, func() error {
		if r := c.Get("a.tls.test", "/"); r.Status != 200 || r.Reply.Service != "web" {
			return fmt.Errorf("status %d", r.Status)
		}
		return nil
	})
}
