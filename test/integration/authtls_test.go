package integration

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	"github.com/causeway/causeway/test/echo"
)

// clientCert issues a client certificate with the given CN.
func clientCert(t *testing.T, ca *tunneltest.CA, cn string) tls.Certificate {
	t.Helper()
	l, err := ca.Issue(cn, false, nil, nil, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return l.TLS
}

func newCA(t *testing.T, name string) *tunneltest.CA {
	t.Helper()
	ca, err := tunneltest.NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// caSecretYAML is an Opaque Secret holding ca.crt.
func caSecretYAML(ns, name string, ca []byte) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\ndata:\n  ca.crt: %s\n---\n",
		name, ns, base64.StdEncoding.EncodeToString(ca))
}

// mtlsIngressYAML is an Ingress for host over TLS with annotations.
func mtlsIngressYAML(t *testing.T, name, host string, ann map[string]string) string {
	y := bareIngressYAML(name, host, ann)
	y = strings.Replace(y, "  rules:\n", fmt.Sprintf("  tls: [{hosts: [%q], secretName: %s-tls}]\n  rules:\n", host, name), 1)
	return y + tlsSecretYAML(t, "default", name+"-tls", host, 0)
}

// bareIngressYAML is an Ingress for host with annotations and no spec.tls.
func bareIngressYAML(name, host string, ann map[string]string) string {
	var a strings.Builder
	for k, v := range ann {
		fmt.Fprintf(&a, "    nginx.ingress.kubernetes.io/%s: %q\n", k, v)
	}
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %[1]s
  namespace: default
  annotations:
%[3]sspec:
  ingressClassName: causeway
  rules:
  - host: %[2]q
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
`, name, host, a.String())
}

// getMTLS sends GET https://host/ with SNI host, presenting cert (if any)
// whatever CAs the server asks for.
func getMTLS(t *testing.T, c *controller, host string, cert *tls.Certificate) (int, string, echo.Reply) {
	t.Helper()
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPSPort))
	cfg := &tls.Config{InsecureSkipVerify: true, ServerName: host,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if cert == nil {
				return &tls.Certificate{}, nil
			}
			return cert, nil
		}}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig: cfg, DisableKeepAlives: true,
	}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, "https://"+host+"/", nil)
	// Spoofed: nginx must replace them.
	req.Header.Set("Ssl-Client-Verify", "SUCCESS")
	req.Header.Set("Ssl-Client-Cert", "forged")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET https://%s/: %v", host, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r echo.Reply
	if resp.StatusCode == 200 {
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatalf("GET https://%s/: %v in %q", host, err, body)
		}
	}
	return resp.StatusCode, resp.Header.Get("Location"), r
}

// TestAuthTLSClientCertificates checks auth-tls-* against real client
// certificates on a real nginx.
func TestAuthTLSClientCertificates(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	ca, other := newCA(t, "Client CA"), newCA(t, "Other CA")
	good, wrongCN, foreign := clientCert(t, ca, "client-a"), clientCert(t, ca, "client-b"), clientCert(t, other, "client-a")
	m := ingressClass + serviceYAML("default", "web", 80, web) + caSecretYAML("default", "client-ca", ca.PEM) +
		mtlsIngressYAML(t, "required", "on.mtls.test", map[string]string{"auth-tls-secret": "default/client-ca",
			"auth-tls-match-cn": "CN=client-a", "auth-tls-pass-certificate-to-upstream": "true"}) +
		mtlsIngressYAML(t, "optional", "optional.mtls.test", map[string]string{"auth-tls-secret": "default/client-ca",
			"auth-tls-verify-client": "optional"}) +
		mtlsIngressYAML(t, "errpage", "errpage.mtls.test", map[string]string{"auth-tls-secret": "default/client-ca",
			"auth-tls-error-page": "https://login.example.com/cert"}) +
		mtlsIngressYAML(t, "missing", "missing.mtls.test", map[string]string{"auth-tls-secret": "default/no-such-ca"}) +
		// No spec.tls: the default certificate, in an SSL context of its
		// own, since the catch-all's asks for no client certificate.
		bareIngressYAML("bare", "bare.mtls.test", map[string]string{"auth-tls-secret": "default/client-ca"})
	c := startController(t, map[string]string{"mtls.yaml": m})

	for _, tc := range []struct {
		name, host string
		cert       *tls.Certificate
		want       int
	}{
		{"no certificate", "on.mtls.test", nil, 400},
		{"a certificate from another CA", "on.mtls.test", &foreign, 400},
		{"a good certificate", "on.mtls.test", &good, 200},
		{"a good certificate whose CN does not match", "on.mtls.test", &wrongCN, 403},
		{"optional: no certificate", "optional.mtls.test", nil, 200},
		{"optional: a good certificate", "optional.mtls.test", &good, 200},
		{"optional: a certificate from another CA", "optional.mtls.test", &foreign, 400},
		{"missing CA Secret: closed", "missing.mtls.test", &good, 503},
		{"error page: no certificate", "errpage.mtls.test", nil, 302},
		{"error page: a certificate from another CA", "errpage.mtls.test", &foreign, 302},
		{"error page: a good certificate", "errpage.mtls.test", &good, 200},
		{"no spec.tls: no certificate", "bare.mtls.test", nil, 400},
		{"no spec.tls: a certificate from another CA", "bare.mtls.test", &foreign, 400},
		{"no spec.tls: a good certificate", "bare.mtls.test", &good, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, location, r := getMTLS(t, c, tc.host, tc.cert)
			if status != tc.want {
				t.Fatalf("status %d, want %d", status, tc.want)
			}
			if status == 302 && location != "https://login.example.com/cert" {
				t.Fatalf("redirected to %q", location)
			}
			if status != 200 {
				return
			}
			h := r.Headers
			switch {
			case tc.host == "on.mtls.test":
				if h["Ssl-Client-Verify"] != "SUCCESS" || !strings.Contains(h["Ssl-Client-Subject-Dn"], "CN=client-a") ||
					!strings.Contains(h["Ssl-Client-Cert"], "BEGIN%20CERTIFICATE") {
					t.Fatalf("backend saw headers %v", h)
				}
			case tc.cert == nil:
				if h["Ssl-Client-Verify"] != "NONE" || h["Ssl-Client-Cert"] != "" {
					t.Fatalf("backend saw headers %v", h)
				}
			default:
				if h["Ssl-Client-Verify"] != "SUCCESS" || h["Ssl-Client-Cert"] != "" {
					t.Fatalf("backend saw headers %v (no pass-certificate-to-upstream)", h)
				}
			}
		})
	}
	if !strings.Contains(c.log.String(), "no-such-ca") {
		t.Error("the missing CA Secret must be reported in the log")
	}
}
