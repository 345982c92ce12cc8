package integration

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// Smaller ingress-nginx keys against real nginx: ssl-reject-handshake,
// the ssl-ciphers annotations, enable-underscores-in-headers.

// TestSSLRejectHandshake: an unknown server name, or none, gets the
// default certificate until ssl-reject-handshake is true, and then a
// refused handshake; a host's own name is still served.
func TestSSLRejectHandshake(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	c := startController(t, map[string]string{"tls.yaml": ingressClass + serviceYAML("default", "web", 80, web) +
		tlsSecretYAML(t, "default", "a-tls", "a.tls.test", 0) + tlsIngressYAML("default", "a", "a.tls.test", "a-tls", "web") +
		ingressYAML("default", "plain", "plain.test", "Prefix / web")})
	for _, sni := range []string{"unknown.test", ""} {
		if _, err := c.handshake(sni, &tls.Config{}); err != nil {
			t.Fatalf("SNI %q by default: %v", sni, err)
		}
	}
	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"ssl-reject-handshake": "true"}))
	eventually(t, 10*time.Second, func() error {
		for _, sni := range []string{"unknown.test", ""} {
			if _, err := c.handshake(sni, &tls.Config{}); err == nil {
				return fmt.Errorf("SNI %q: handshake accepted", sni)
			} else if !strings.Contains(err.Error(), "unrecognized name") && !strings.Contains(err.Error(), "alert") {
				return fmt.Errorf("SNI %q: %v, want a TLS alert", sni, err)
			}
		}
		return nil
	})
	if r := c.GetTLS("a.tls.test", "/"); r.Status != 200 {
		t.Fatalf("a.tls.test over HTTPS: %d", r.Status)
	}
	// A host without a certificate of its own is still served, with the
	// default certificate, while unknown names are refused.
	if r := c.GetTLS("plain.test", "/"); r.Status != 200 || r.PeerCN != "Causeway Default Certificate" {
		t.Fatalf("plain.test over HTTPS: %d, certificate %q", r.Status, r.PeerCN)
	}
	if r := c.Get("unknown.test", "/"); r.Status != 404 {
		t.Fatalf("plain HTTP to an unknown host: %d, want the default 404", r.Status)
	}
}

// TestServerCiphersAnnotation: one host's ssl-ciphers narrows its own
// TLS 1.2 suites only; ssl-prefer-server-ciphers "false" lets the
// client's order win there.
func TestServerCiphersAnnotation(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	own := `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: own
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/ssl-ciphers: "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256"
    nginx.ingress.kubernetes.io/ssl-prefer-server-ciphers: "false"
spec:
  ingressClassName: causeway
  tls: [{hosts: [own.tls.test], secretName: a-tls}]
  rules:
  - host: own.tls.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
` + bareIngressYAML("bare", "bare.tls.test", map[string]string{"ssl-ciphers": "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384"})
	c := startController(t, map[string]string{"tls.yaml": ingressClass + serviceYAML("default", "web", 80, web) +
		tlsSecretYAML(t, "default", "a-tls", "a.tls.test", 0) + tlsIngressYAML("default", "a", "a.tls.test", "a-tls", "web") + own})
	tls12 := func(suites ...uint16) *tls.Config {
		return &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12, CipherSuites: suites}
	}
	chacha := tls12(tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256)
	if _, err := c.handshake("a.tls.test", chacha); err != nil {
		t.Fatalf("a.tls.test keeps the ConfigMap's list (ChaCha20 included): %v", err)
	}
	if _, err := c.handshake("own.tls.test", chacha); err == nil {
		t.Fatal("own.tls.test accepted ChaCha20, outside its ssl-ciphers")
	}
	// Without a certificate of its own the host still gets its list: the
	// default certificate in an SSL context of its own.
	if _, err := c.handshake("bare.tls.test", tls12(tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256)); err == nil {
		t.Fatal("bare.tls.test accepted ChaCha20, outside its ssl-ciphers")
	}
	if _, err := c.handshake("bare.tls.test", tls12(tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384)); err != nil {
		t.Fatalf("bare.tls.test refused a suite of its ssl-ciphers: %v", err)
	}
	// The client prefers AES-128; the host's list puts AES-256 first.
	st, err := c.handshake("own.tls.test", tls12(tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384))
	if err != nil {
		t.Fatal(err)
	}
	if st.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 {
		t.Fatalf("own.tls.test chose %s; with ssl-prefer-server-ciphers false the client's first choice wins", tls.CipherSuiteName(st.CipherSuite))
	}
	st, err = c.handshake("a.tls.test", tls12(tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256))
	if err != nil {
		t.Fatal(err)
	}
	if st.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 {
		t.Fatalf("a.tls.test chose %s; the server's order (AES-128 first) should win", tls.CipherSuiteName(st.CipherSuite))
	}
}

// TestUnderscoresInHeaders: a request header with an underscore reaches
// the backend only with enable-underscores-in-headers.
func TestUnderscoresInHeaders(t *testing.T) {
	t.Parallel()
	be := startHandlerBackend(t, "web", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "X_Custom=%q", r.Header.Get("X_Custom"))
	}))
	c := startController(t, map[string]string{"app.yaml": ingressClass + serviceYAML("default", "web", 80, be) +
		ingressYAML("default", "web", "u.test", "Prefix / web")})
	get := func() string {
		return c.do(harness.Request{Host: "u.test", Path: "/", Header: map[string]string{"X_Custom": "yes"}}).Body
	}
	if got := get(); got != `X_Custom=""` {
		t.Fatalf("by default the backend saw %s; nginx drops headers with underscores", got)
	}
	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"enable-underscores-in-headers": "true"}))
	eventually(t, 10*time.Second, func() error {
		if got := get(); got != `X_Custom="yes"` {
			return fmt.Errorf("backend saw %s", got)
		}
		return nil
	})
}
