package metrics

import (
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func get(h http.Handler, path string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// TestHandler: /healthz answers while the process runs; /readyz follows
// the ready function (none means ready); /metrics serves the registry
// passed in, not the global one; unknown paths are 404.
func TestHandler(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, "server")
	m.Links.WithLabelValues("s1").Set(3)
	var f Flag
	h := Handler(reg, f.Get)
	for _, tc := range []struct {
		name, path string
		ready      bool
		code       int
		body       string
	}{
		{"healthz, not ready", "/healthz", false, 200, "ok"},
		{"readyz, not ready", "/readyz", false, 503, "not ready"},
		{"readyz, ready", "/readyz", true, 200, "ok"},
		{"metrics", "/metrics", false, 200, `causeway_tunnel_server_links{server_id="s1"} 3`},
		{"unknown path", "/debug", true, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.Set(tc.ready)
			code, body := get(h, tc.path)
			if code != tc.code || !strings.Contains(body, tc.body) {
				t.Fatalf("GET %s = %d %q, want %d containing %q", tc.path, code, body, tc.code, tc.body)
			}
		})
	}
	if code, _ := get(Handler(reg, nil), "/readyz"); code != 200 {
		t.Fatalf("readyz without a ready function = %d, want 200", code)
	}
	if _, body := get(h, "/metrics"); strings.Contains(body, "go_goroutines") {
		t.Fatal("handler serves the global registry")
	}
}

// TestCertMetrics: the expiry gauge reads the certificate in use and is 0
// while there is none; rotations and failures are plain collectors.
func TestCertMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewCertMetrics(reg, "agent")
	var leaf *x509.Certificate
	RegisterCertExpiry(reg, "agent", func() *x509.Certificate { return leaf })
	_, body := get(Handler(reg, nil), "/metrics")
	if !strings.Contains(body, "causeway_tunnel_agent_certificate_expiration_timestamp_seconds 0") {
		t.Fatalf("expiry without a certificate:\n%s", body)
	}
	leaf = &x509.Certificate{NotAfter: time.Unix(1900000000, 0)}
	m.Rotations.Observe(42)
	m.RenewFailures.Inc()
	_, body = get(Handler(reg, nil), "/metrics")
	for _, want := range []string{
		"causeway_tunnel_agent_certificate_expiration_timestamp_seconds 1.9e+09",
		"causeway_tunnel_agent_certificate_rotation_age_seconds_count 1",
		"causeway_tunnel_agent_certificate_renewal_failures_total 1",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
}
