package integration

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/test/echo"
	"github.com/causeway/causeway/test/testcert"
)

// annotatedIngressYAML is an Ingress for host with one Prefix "/" path to
// service and the given ingress-nginx annotations (name, value pairs).
func annotatedIngressYAML(name, host, service string, kv ...string) string {
	a := ""
	for i := 0; i+1 < len(kv); i += 2 {
		a += fmt.Sprintf("    nginx.ingress.kubernetes.io/%s: %q\n", kv[i], kv[i+1])
	}
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %s
  namespace: default
  annotations:
%sspec:
  ingressClassName: causeway
  rules:
  - host: %q
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: %s, port: {number: 80}}}}
---
`, name, a, host, service)
}

// TLS to backends with proxy-ssl-secret: nginx presents the Secret's
// client certificate to a backend that requires one and verifies the
// backend's certificate against the Secret's CA. A backend whose
// certificate the CA did not sign is refused (502), and a Secret that is
// missing closes the paths (503) rather than talking to the backend
// unverified.
// mtlsBackend is a TLS backend on loopback whose certificate names
// backend.internal and that requires a client certificate: clientCert,
// clientKey's.
type mtlsBackend struct {
	*backend
	serverCert, clientCert, clientKey []byte
}

func startMTLSBackend(t *testing.T, service string) *mtlsBackend {
	t.Helper()
	serverCert, serverKey, err := testcert.SelfSigned(0, time.Hour, "backend.internal")
	if err != nil {
		t.Fatal(err)
	}
	clientCert, clientKey, err := testcert.SelfSignedClient("causeway-client")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(serverCert, serverKey)
	if err != nil {
		t.Fatal(err)
	}
	clients := x509.NewCertPool()
	clients.AppendCertsFromPEM(clientCert)
	ip := loopbackIP()
	lis, err := tls.Listen("tcp", net.JoinHostPort(ip, "0"), &tls.Config{Certificates: []tls.Certificate{pair},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clients})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: echo.Handler(service, lis.Addr().String()), ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(lis)
	t.Cleanup(func() { srv.Close() })
	return &mtlsBackend{backend: &backend{Service: service, IP: ip, Port: lis.Addr().(*net.TCPAddr).Port},
		serverCert: serverCert, clientCert: clientCert, clientKey: clientKey}
}

func TestBackendTLSWithClientCertificate(t *testing.T) {
	t.Parallel()
	mb := startMTLSBackend(t, "secure")
	b, serverCert, clientCert, clientKey := mb.backend, mb.serverCert, mb.clientCert, mb.clientKey
	otherCA, _, err := testcert.SelfSigned(0, time.Hour, "someone-else")
	if err != nil {
		t.Fatal(err)
	}

	secret := func(name string, ca []byte) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: default}\ntype: Opaque\ndata:\n  ca.crt: %s\n  tls.crt: %s\n  tls.key: %s\n---\n",
			name, base64.StdEncoding.EncodeToString(ca), base64.StdEncoding.EncodeToString(clientCert), base64.StdEncoding.EncodeToString(clientKey))
	}
	tlsAnnotations := func(secretName string) []string {
		return []string{"backend-protocol", "HTTPS", "proxy-ssl-secret", "default/" + secretName, "proxy-ssl-verify", "on",
			"proxy-ssl-name", "backend.internal", "proxy-ssl-server-name", "on"}
	}
	manifests := ingressClass + serviceYAML("default", "secure", 80, b) +
		secret("good-ca", serverCert) + secret("wrong-ca", otherCA) +
		annotatedIngressYAML("good", "good.test", "secure", tlsAnnotations("good-ca")...) +
		annotatedIngressYAML("wrong", "wrong.test", "secure", tlsAnnotations("wrong-ca")...) +
		annotatedIngressYAML("missing", "missing.test", "secure", tlsAnnotations("no-such-secret")...)
	c := startController(t, map[string]string{"tls.yaml": manifests})
	// Alternate the hosts: all locations share one upstream, and a TLS
	// session the good location authenticated must never be resumed for
	// the wrong one (a resumed session skips verification).
	for round := 0; round < 5; round++ {
		for _, tc := range []struct {
			host    string
			status  int
			service string
		}{{"good.test", 200, "secure"}, {"wrong.test", 502, ""}, {"missing.test", 503, ""}} {
			if r := c.Get(tc.host, "/"); r.Status != tc.status || r.Reply.Service != tc.service {
				t.Errorf("round %d: %s: status %d from %q, want %d from %q", round, tc.host, r.Status, r.Reply.Service, tc.status, tc.service)
			}
		}
	}
}

// mirror-target copies every request to another backend, whose answer
// is ignored, with the original URI.
func TestMirrorTarget(t *testing.T) {
	t.Parallel()
	main := startBackend(t, "main")
	var mu sync.Mutex
	seen := map[string]bool{} // the URIs the mirror saw
	ip := loopbackIP()
	lis, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.RequestURI] = true
		mu.Unlock()
		w.WriteHeader(http.StatusTeapot) // ignored by nginx
	})}
	go srv.Serve(lis)
	t.Cleanup(func() { srv.Close() })
	target := "http://" + net.JoinHostPort(ip, strconv.Itoa(lis.Addr().(*net.TCPAddr).Port)) + "$request_uri"
	c := startController(t, map[string]string{"m.yaml": ingressClass + serviceYAML("default", "main", 80, main) +
		annotatedIngressYAML("mirrored", "mirror.test", "main", "mirror-target", target)})
	for i := 0; i < 3; i++ {
		if r := c.Get("mirror.test", fmt.Sprintf("/orders/%d?x=1", i)); r.Status != 200 || r.Reply.Service != "main" {
			t.Fatalf("request %d: status %d from %q", i, r.Status, r.Reply.Service)
		}
	}
	// Each request's mirror, with its URI. (Not in order: nginx answers
	// the client before its mirror subrequest ends, so the next request
	// may reach the mirror first.)
	eventually(t, 5*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		if want := map[string]bool{"/orders/0?x=1": true, "/orders/1?x=1": true, "/orders/2?x=1": true}; !maps.Equal(seen, want) {
			return fmt.Errorf("the mirror saw %v, want %v", seen, want)
		}
		return nil
	})
}

// --default-backend-service answers requests no rule matches, instead of
// the controller's own 404.
func TestDefaultBackendServiceFlag(t *testing.T) {
	t.Parallel()
	web, fallback := startBackend(t, "web"), startBackend(t, "fallback")
	c := startController(t, map[string]string{"d.yaml": ingressClass + serviceYAML("default", "web", 80, web) +
		serviceYAML("default", "fallback", 80, fallback) + ingressYAML("default", "web", "web.test", "Prefix /app web")},
		"--default-backend-service", "default/fallback")
	for _, tc := range []struct{ host, path, want string }{
		{"web.test", "/app/x", "web"}, {"web.test", "/other", "fallback"}, {"unknown.test", "/", "fallback"},
	} {
		if r := c.Get(tc.host, tc.path); r.Status != 200 || r.Reply.Service != tc.want {
			t.Errorf("%s%s: status %d from %q, want 200 from %s", tc.host, tc.path, r.Status, r.Reply.Service, tc.want)
		}
	}
}
