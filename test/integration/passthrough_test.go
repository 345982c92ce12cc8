package integration

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/flavour"
	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/testcert"
)

// startTLSBackend runs an HTTPS server on a fresh loopback IP with its own
// self-signed certificate for cn; it answers name and the client address
// it saw.
func startTLSBackend(t *testing.T, name, cn string) (ip string, port int) {
	t.Helper()
	crt, key, err := testcert.SelfSigned(2048, 24*time.Hour, cn)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(loopbackIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s from %s", name, r.RemoteAddr)
	})}
	go srv.Serve(tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{pair}}))
	t.Cleanup(func() { srv.Close() })
	a := l.Addr().(*net.TCPAddr)
	return a.IP.String(), a.Port
}

// secureTransportServerYAML is a tls-passthrough TransportServer for
// secure.pass.test and its Service, whose endpoint is ip:port.
func secureTransportServerYAML(ip string, port int) string {
	return `apiVersion: k8s.nginx.org/v1
kind: TransportServer
metadata: {name: secure, namespace: default}
spec:
  listener: {name: tls-passthrough, protocol: TLS_PASSTHROUGH}
  host: secure.pass.test
  upstreams: [{name: app, service: tls-app, port: 8443}]
  action: {pass: app}
---
` + streamServiceYAML("tls-app", "TCP", 8443, port, ip)
}

// TestTLSPassthrough: with --enable-tls-passthrough the HTTPS port passes
// a TransportServer's host and an ssl-passthrough Ingress's host, TLS and
// all, to their backends (the client sees the backends' certificates),
// while nginx still terminates every other host on the same port, with
// the real client address reaching the backend.
func TestTLSPassthrough(t *testing.T) {
	t.Parallel()
	appIP, appPort := startTLSBackend(t, "ts-app", "secure.pass.test")
	ingIP, ingPort := startTLSBackend(t, "ing-app", "ing.pass.test")
	web := startBackend(t, "web")
	c := startController(t, map[string]string{
		"ts.yaml": secureTransportServerYAML(appIP, appPort),
		"ing.yaml": `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: pass
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/ssl-passthrough: "true"}
spec:
  ingressClassName: causeway
  rules:
  - host: ing.pass.test
    http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: ing-app, port: {number: 8443}}}}]
---
` + streamServiceYAML("ing-app", "TCP", 8443, ingPort, ingIP),
		"web.yaml": serviceYAML("default", "web", 80, web) + tlsSecretYAML(t, "default", "web-tls", "web.pass.test", 2048) + `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/ssl-redirect: "false"}
spec:
  ingressClassName: causeway
  tls: [{hosts: [web.pass.test], secretName: web-tls}]
  rules:
  - host: web.pass.test
    http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]
`,
	}, "--enable-tls-passthrough")
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPSPort))
	from := loopbackIP()
	get := func(host string) (harness.Result, error) {
		return harness.Do(addr, harness.Request{Scheme: "https", Host: host, Path: "/", From: from})
	}

	eventually(t, 10*time.Second, func() error {
		r, err := get("secure.pass.test")
		if err != nil {
			return err
		}
		if r.PeerCN != "secure.pass.test" || !strings.HasPrefix(r.Body, "ts-app from ") {
			return fmt.Errorf("secure.pass.test: CN %q, body %q", r.PeerCN, r.Body)
		}
		return nil
	})
	for _, tc := range []struct {
		name, host, cn, body string
	}{
		{"the TransportServer's backend presents its own certificate", "secure.pass.test", "secure.pass.test", "ts-app from "},
		{"server names match in any case", "SECURE.Pass.Test", "secure.pass.test", "ts-app from "},
		{"the ssl-passthrough Ingress's backend presents its own certificate", "ing.pass.test", "ing.pass.test", "ing-app from "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := get(tc.host)
			if err != nil {
				t.Fatal(err)
			}
			if r.PeerCN != tc.cn || !strings.HasPrefix(r.Body, tc.body) {
				t.Errorf("CN %q body %q, want CN %q body %q...", r.PeerCN, r.Body, tc.cn, tc.body)
			}
		})
	}
	t.Run("a terminated host on the same port: nginx's certificate, the HTTP backend, the real client address", func(t *testing.T) {
		r, err := get("web.pass.test")
		if err != nil {
			t.Fatal(err)
		}
		if r.PeerCN != "web.pass.test" || r.Status != 200 || r.Reply.Service != "web" {
			t.Fatalf("CN %q status %d service %q", r.PeerCN, r.Status, r.Reply.Service)
		}
		if got := r.Reply.Headers["X-Real-IP"]; got != from {
			t.Errorf("X-Real-IP %q, want the client's %s", got, from)
		}
		if got := r.Reply.Headers["X-Forwarded-Port"]; got != strconv.Itoa(c.HTTPSPort) {
			t.Errorf("X-Forwarded-Port %q, want %d", got, c.HTTPSPort)
		}
	})
	t.Run("plain HTTP keeps the TCP peer's address", func(t *testing.T) {
		r, err := harness.Do(net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort)), harness.Request{Scheme: "http", Host: "web.pass.test", Path: "/", From: from})
		if err != nil {
			t.Fatal(err)
		}
		if r.Reply.Service != "web" || r.Reply.Headers["X-Real-IP"] != from {
			t.Errorf("service %q X-Real-IP %q", r.Reply.Service, r.Reply.Headers["X-Real-IP"])
		}
	})
	t.Run("an unknown server name gets the default certificate", func(t *testing.T) {
		r, err := get("unknown.pass.test")
		if err != nil {
			t.Fatal(err)
		}
		if r.PeerCN != "Causeway Default Certificate" || r.Status != 404 {
			t.Errorf("CN %q status %d", r.PeerCN, r.Status)
		}
	})
	t.Run("no server name gets the default certificate", func(t *testing.T) {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "Causeway Default Certificate" {
			t.Errorf("CN %q", cn)
		}
	})
}

// TestTLSPassthroughProxyProtocol: behind a load balancer that sends the
// PROXY protocol (use-proxy-protocol), the passthrough server on the
// HTTPS port reads the header; a terminated host's backend sees the
// header's client and port, and a passed-through host is still reached
// by name. On a stream module with pass the connection, header read, is
// handed over; without, it is proxied behind a header of nginx's own.
func TestTLSPassthroughProxyProtocol(t *testing.T) {
	t.Parallel()
	if dataPlaneFlavour.Name == flavour.Angie {
		t.Skip("the vendored Angie has no stream realip module, which TLS passthrough behind the PROXY protocol needs")
	}
	appIP, appPort := startTLSBackend(t, "ts-app", "secure.pass.test")
	web := startBackend(t, "web")
	c := startController(t, map[string]string{
		"ts.yaml": secureTransportServerYAML(appIP, appPort),
		"web.yaml": serviceYAML("default", "web", 80, web) + tlsSecretYAML(t, "default", "web-tls", "web.pass.test", 2048) +
			tlsIngressYAML("default", "web", "web.pass.test", "web-tls", "web"),
		"config.yaml": realIPConfigMap(`use-proxy-protocol: "true", proxy-real-ip-cidr: "127.0.0.0/8"`),
	}, "--enable-tls-passthrough")
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPSPort))
	header := []byte(proxyV1(netip.MustParseAddrPort("203.0.113.9:40000"), netip.MustParseAddrPort("10.0.0.1:443")))
	want := seen{Status: 200, RealIP: "203.0.113.9", For: "203.0.113.9", Proto: "https", Host: "web.pass.test", Port: "443"}
	if !dataPlaneFlavour.StreamPass() {
		// nginx's own PROXY header on the inner hop names its port, not
		// the load balancer's (docs/layer4.md).
		want.Port = strconv.Itoa(c.HTTPSPort)
	}
	eventually(t, 10*time.Second, func() error {
		got, err := viaProxyProtocol(addr, header, "web.pass.test", true, spoofed)
		if err != nil || got != want {
			return fmt.Errorf("terminated host: %+v (%v), want %+v", got, err, want)
		}
		return nil
	})
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(header); err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(conn, &tls.Config{ServerName: "secure.pass.test", InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		t.Fatalf("passed-through host: %v", err)
	}
	if cn := tc.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "secure.pass.test" {
		t.Errorf("passed-through host: CN %q, want the backend's", cn)
	}
}
