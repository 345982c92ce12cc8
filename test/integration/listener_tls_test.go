package integration

import (
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// Listener TLS, HSTS and HTTP/2: the ConfigMap's ssl-*, hsts* and
// use-http2 keys and --default-ssl-certificate, against real nginx.

// configMapYAML is the controller's ConfigMap (causeway/config) with data.
func configMapYAML(data map[string]string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config, namespace: causeway}\ndata:\n")
	if len(data) == 0 {
		b.WriteString("  {}\n")
	}
	for k, v := range data {
		fmt.Fprintf(&b, "  %s: %q\n", k, v)
	}
	return b.String()
}

// handshake opens a TLS connection to the HTTPS port with SNI host and
// returns its state, or the handshake's error.
func (c *controller) handshake(host string, cfg *tls.Config) (tls.ConnectionState, error) {
	cfg = cfg.Clone()
	cfg.ServerName, cfg.InsecureSkipVerify = host, true
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPSPort)), cfg)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	return conn.ConnectionState(), nil
}

// TestHTTP2ByALPN: h2 is negotiated on the HTTPS port, and not once
// use-http2 is false.
func TestHTTP2ByALPN(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	c := startController(t, map[string]string{"tls.yaml": ingressClass + serviceYAML("default", "web", 80, web) +
		tlsSecretYAML(t, "default", "a-tls", "a.tls.test", 0) + tlsIngressYAML("default", "a", "a.tls.test", "a-tls", "web")})
	alpn := &tls.Config{NextProtos: []string{"h2", "http/1.1"}}
	for _, host := range []string{"a.tls.test", "unknown.test"} {
		st, err := c.handshake(host, alpn)
		if err != nil || st.NegotiatedProtocol != "h2" {
			t.Fatalf("%s: ALPN %q (%v), want h2", host, st.NegotiatedProtocol, err)
		}
	}
	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"use-http2": "false"}))
	eventually(t, 10*time.Second, func() error {
		for _, host := range []string{"a.tls.test", "unknown.test"} {
			st, err := c.handshake(host, alpn)
			if err != nil {
				return err
			}
			if st.NegotiatedProtocol == "h2" {
				return fmt.Errorf("%s: h2 still negotiated", host)
			}
		}
		return nil
	})
	if r := c.GetTLS("a.tls.test", "/"); r.Status != 200 {
		t.Fatalf("HTTPS over HTTP/1.1: %d", r.Status)
	}
}

// TestTLSProtocolsAndCiphers: a TLS 1.1 client is refused by default and
// accepted once ssl-protocols lists TLSv1.1 (OpenSSL 3 needs
// @SECLEVEL=0 and a cipher TLS 1.1 can use); a client offering only a
// cipher outside ssl-ciphers is refused.
func TestTLSProtocolsAndCiphers(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	// rsaBits 0: an ECDSA certificate, for the ECDHE-ECDSA suites.
	c := startController(t, map[string]string{"tls.yaml": ingressClass + serviceYAML("default", "web", 80, web) +
		tlsSecretYAML(t, "default", "a-tls", "a.tls.test", 0) + tlsIngressYAML("default", "a", "a.tls.test", "a-tls", "web")})
	tls11 := &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}
	only := func(suite uint16) *tls.Config {
		return &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{suite}}
	}
	cbc := only(tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA)
	gcm128 := only(tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)
	gcm256 := only(tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384)

	if st, err := c.handshake("a.tls.test", tls11); err == nil {
		t.Fatalf("TLS 1.1 accepted by default (version %x)", st.Version)
	}
	if _, err := c.handshake("a.tls.test", cbc); err == nil {
		t.Fatal("ECDHE-ECDSA-AES128-SHA accepted by default; ingress-nginx's list has no CBC suite")
	}
	for _, cfg := range []*tls.Config{gcm128, gcm256, {MinVersion: tls.VersionTLS13}} {
		if _, err := c.handshake("a.tls.test", cfg); err != nil {
			t.Fatalf("default list: %v", err)
		}
	}

	c.WriteManifest("config.yaml", configMapYAML(map[string]string{
		"ssl-protocols": "TLSv1.1 TLSv1.2 TLSv1.3",
		"ssl-ciphers":   "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES128-GCM-SHA256:@SECLEVEL=0",
	}))
	eventually(t, 10*time.Second, func() error {
		st, err := c.handshake("a.tls.test", tls11)
		if err != nil {
			return err
		}
		if st.Version != tls.VersionTLS11 {
			return fmt.Errorf("version %x, want TLS 1.1", st.Version)
		}
		return nil
	})
	if _, err := c.handshake("a.tls.test", gcm256); err == nil {
		t.Fatal("a client offering only ECDHE-ECDSA-AES256-GCM-SHA384, outside ssl-ciphers, was accepted")
	}
	for _, cfg := range []*tls.Config{gcm128, cbc, {MinVersion: tls.VersionTLS13}} {
		if _, err := c.handshake("a.tls.test", cfg); err != nil {
			t.Fatalf("configured list: %v", err)
		}
	}
	if r := c.GetTLS("a.tls.test", "/"); r.Status != 200 {
		t.Fatalf("HTTPS: %d", r.Status)
	}
}

// TestHSTS: Strict-Transport-Security is on HTTPS responses only, with
// the configured value, also from a location that adds headers of its
// own (custom-headers), and gone once hsts is false.
func TestHSTS(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	hdrs := `apiVersion: v1
kind: ConfigMap
metadata: {name: extra, namespace: default}
data: {X-Custom: "yes"}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: hdr
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/custom-headers: default/extra}
spec:
  ingressClassName: causeway
  tls: [{hosts: [hdr.tls.test], secretName: a-tls}]
  rules:
  - host: hdr.tls.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
`
	c := startController(t, map[string]string{
		"tls.yaml": ingressClass + serviceYAML("default", "web", 80, web) +
			tlsSecretYAML(t, "default", "a-tls", "a.tls.test", 0) + tlsIngressYAML("default", "a", "a.tls.test", "a-tls", "web") + hdrs,
		"config.yaml": configMapYAML(map[string]string{"ssl-redirect": "false", "global-allowed-response-headers": "X-Custom"}),
	})
	check := func(want string) error {
		for _, host := range []string{"a.tls.test", "hdr.tls.test"} {
			r, err := c.get("https", host, "/")
			if err != nil {
				return err
			}
			if got := r.Header.Get("Strict-Transport-Security"); r.Status != 200 || got != want {
				return fmt.Errorf("HTTPS %s: %d Strict-Transport-Security %q, want %q", host, r.Status, got, want)
			}
			if host == "hdr.tls.test" && r.Header.Get("X-Custom") != "yes" {
				return fmt.Errorf("HTTPS %s: custom header missing", host)
			}
			if r, err = c.get("http", host, "/"); err != nil {
				return err
			}
			if got := r.Header.Values("Strict-Transport-Security"); r.Status != 200 || len(got) != 0 {
				return fmt.Errorf("HTTP %s: %d Strict-Transport-Security %q, want none", host, r.Status, got)
			}
		}
		// A 404 from nginx itself over HTTPS carries it too ("always").
		r, err := harness.Get("https", net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPSPort)), "unknown.test", "/")
		if err != nil {
			return err
		}
		if got := r.Header.Get("Strict-Transport-Security"); got != want {
			return fmt.Errorf("HTTPS 404: Strict-Transport-Security %q, want %q", got, want)
		}
		return nil
	}
	if err := check("max-age=31536000; includeSubDomains"); err != nil {
		t.Fatal(err)
	}
	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"ssl-redirect": "false", "global-allowed-response-headers": "X-Custom",
		"hsts-max-age": "600", "hsts-include-subdomains": "false", "hsts-preload": "true"}))
	eventually(t, 10*time.Second, func() error { return check("max-age=600; preload") })
	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"ssl-redirect": "false", "global-allowed-response-headers": "X-Custom", "hsts": "false"}))
	eventually(t, 10*time.Second, func() error { return check("") })
}

// TestDefaultSSLCertificate: --default-ssl-certificate's Secret is
// presented for unknown SNI and for a TLS host without a usable secret;
// its renewal applies without a reload; a missing one keeps the
// self-generated certificate with a Problem naming it.
func TestDefaultSSLCertificate(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	ingresses := ingressClass + serviceYAML("default", "web", 80, web) +
		tlsSecretYAML(t, "default", "a-tls", "a.tls.test", 0) +
		tlsIngressYAML("default", "a", "a.tls.test", "a-tls", "web") +
		tlsIngressYAML("default", "c", "c.tls.test", "missing-tls", "web")
	c := startController(t, map[string]string{
		"tls.yaml":     ingresses,
		"default.yaml": tlsSecretYAML(t, "causeway", "fallback", "fallback.test", 0),
	}, "--default-ssl-certificate", "causeway/fallback")
	want := func(host, cn string) error {
		r, err := c.get("https", host, "/")
		if err != nil {
			return err
		}
		if r.PeerCN != cn {
			return fmt.Errorf("SNI %s: certificate %q, want %q", host, r.PeerCN, cn)
		}
		return nil
	}
	for host, cn := range map[string]string{"unknown.test": "fallback.test", "c.tls.test": "fallback.test", "a.tls.test": "a.tls.test"} {
		if err := want(host, cn); err != nil {
			t.Error(err)
		}
	}
	reloads := c.Metric("causeway_nginx_reloads_total")
	c.WriteManifest("default.yaml", tlsSecretYAML(t, "causeway", "fallback", "renewed.test", 0))
	eventually(t, 10*time.Second, func() error {
		if err := want("unknown.test", "renewed.test"); err != nil {
			return err
		}
		return want("c.tls.test", "renewed.test")
	})
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Errorf("renewing the default certificate reloaded nginx (%v reloads, was %v)", got, reloads)
	}

	// A Secret that does not exist keeps the self-generated certificate.
	d := startController(t, map[string]string{"tls.yaml": ingresses}, "--default-ssl-certificate", "causeway/absent")
	for _, host := range []string{"unknown.test", "c.tls.test"} {
		if r := d.GetTLS(host, "/"); r.PeerCN != "Causeway Default Certificate" {
			t.Errorf("missing default Secret, SNI %s: certificate %q", host, r.PeerCN)
		}
	}
	eventually(t, 5*time.Second, func() error {
		if !strings.Contains(d.log.String(), "causeway/absent") {
			return fmt.Errorf("the missing default Secret is not reported")
		}
		return nil
	})
}

// resumes makes two HTTPS requests with one client session cache and
// reports whether the second connection resumed the first's session.
func (c *controller) resumes(host string, version uint16) (bool, error) {
	cfg := &tls.Config{ServerName: host, InsecureSkipVerify: true, MinVersion: version, MaxVersion: version,
		ClientSessionCache: tls.NewLRUClientSessionCache(4)}
	if _, err := c.session(host, cfg); err != nil {
		return false, err
	}
	return c.session(host, cfg)
}

// TestTLSSessionsAndCurves: TLS 1.2 sessions resume only with
// ssl-session-tickets (Go's client resumes by ticket only); TLS 1.3
// sessions resume from the session cache and not once ssl-session-cache
// and tickets are off; ssl-ecdh-curve limits the key exchange groups.
func TestTLSSessionsAndCurves(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	c := startController(t, map[string]string{"tls.yaml": ingressClass + serviceYAML("default", "web", 80, web) +
		tlsSecretYAML(t, "default", "a-tls", "a.tls.test", 0) + tlsIngressYAML("default", "a", "a.tls.test", "a-tls", "web")})
	expect := func(v uint16, want bool) error {
		got, err := c.resumes("a.tls.test", v)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("TLS %x: resumed %v, want %v", v, got, want)
		}
		return nil
	}
	if err := expect(tls.VersionTLS12, false); err != nil {
		t.Fatalf("default (tickets off): %v", err)
	}
	if err := expect(tls.VersionTLS13, true); err != nil {
		t.Fatalf("default (session cache on): %v", err)
	}
	x25519 := &tls.Config{CurvePreferences: []tls.CurveID{tls.X25519}}
	p384 := &tls.Config{CurvePreferences: []tls.CurveID{tls.CurveP384}}
	for _, cfg := range []*tls.Config{x25519, p384} {
		if _, err := c.handshake("a.tls.test", cfg); err != nil {
			t.Fatalf("curve %v with auto: %v", cfg.CurvePreferences, err)
		}
	}

	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"ssl-session-tickets": "true", "ssl-ecdh-curve": "X25519"}))
	eventually(t, 10*time.Second, func() error { return expect(tls.VersionTLS12, true) })
	if _, err := c.handshake("a.tls.test", p384); err == nil {
		t.Fatal("P-384 accepted with ssl-ecdh-curve X25519")
	}
	if _, err := c.handshake("a.tls.test", x25519); err != nil {
		t.Fatalf("X25519 with ssl-ecdh-curve X25519: %v", err)
	}

	// Both at once, eventually: until the reload's old workers have
	// stopped accepting, a handshake may still reach one that has the
	// tickets of the configuration before (a make test saw TLS 1.2 resumed
	// once after TLS 1.3 was not).
	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"ssl-session-cache": "false"}))
	eventually(t, 10*time.Second, func() error {
		if err := expect(tls.VersionTLS13, false); err != nil {
			return err
		}
		return expect(tls.VersionTLS12, false)
	})
}
