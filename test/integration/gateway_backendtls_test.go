package integration

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/test/echo"
	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/testcert"
)

// sniBackend is an HTTPS echo backend on loopback whose self-signed
// certificate names backend.internal; it records the SNI of each
// handshake.
type sniBackend struct {
	*backend
	cert []byte
	mu   sync.Mutex
	snis []string
}

func startSNIBackend(t *testing.T, service string) *sniBackend {
	t.Helper()
	cert, key, err := testcert.SelfSigned(0, time.Hour, "backend.internal")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	sb := &sniBackend{cert: cert}
	ip := loopbackIP()
	lis, err := tls.Listen("tcp", net.JoinHostPort(ip, "0"), &tls.Config{Certificates: []tls.Certificate{pair},
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			sb.mu.Lock()
			sb.snis = append(sb.snis, h.ServerName)
			sb.mu.Unlock()
			return nil, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: echo.Handler(service, lis.Addr().String()), ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(lis)
	t.Cleanup(func() { srv.Close() })
	sb.backend = &backend{Service: service, IP: ip, Port: lis.Addr().(*net.TCPAddr).Port}
	return sb
}

func (sb *sniBackend) lastSNI() string {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if len(sb.snis) == 0 {
		return ""
	}
	return sb.snis[len(sb.snis)-1]
}

// caConfigMapYAML is a ConfigMap holding ca.crt.
func caConfigMapYAML(name string, ca []byte) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata:\n  ca.crt: |\n    %s\n---\n",
		name, strings.ReplaceAll(strings.TrimSpace(string(ca)), "\n", "\n    "))
}

// backendTLSPolicyYAML is a BackendTLSPolicy for Service svc: hostname,
// and a CA reference of kind.
func backendTLSPolicyYAML(svc, kind, ca, hostname string) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: %[1]s, namespace: default}
spec:
  targetRefs: [{group: "", kind: Service, name: %[1]s}]
  validation:
    caCertificateRefs: [{group: "", kind: %[2]s, name: %[3]s}]
    hostname: %[4]s
---
`, svc, kind, ca, hostname)
}

// TestGatewayBackendTLSPolicy: an HTTPRoute's backend that a
// BackendTLSPolicy names is spoken to over TLS, its certificate verified
// against the policy's ConfigMap CA and hostname, which is sent as SNI;
// a wrong hostname or CA is refused by nginx (502), and a policy whose CA
// reference is invalid closes its backend (503) rather than speaking to
// it unverified or in cleartext. A cleartext backend beside them stays
// cleartext.
func TestGatewayBackendTLSPolicy(t *testing.T) {
	t.Parallel()
	secure := startSNIBackend(t, "secure")
	plain := startBackend(t, "plain")
	otherCA, _, err := testcert.SelfSigned(0, time.Hour, "someone-else")
	if err != nil {
		t.Fatal(err)
	}
	services := serviceYAML("default", "plain", 80, plain)
	for _, svc := range []string{"good", "wrong-host", "wrong-ca", "missing-ca", "secret-ca"} {
		services += serviceYAML("default", svc, 443, secure.backend)
	}
	policies := backendTLSPolicyYAML("good", "ConfigMap", "backend-ca", "backend.internal") +
		backendTLSPolicyYAML("wrong-host", "ConfigMap", "backend-ca", "other.internal") +
		backendTLSPolicyYAML("wrong-ca", "ConfigMap", "other-ca", "backend.internal") +
		backendTLSPolicyYAML("missing-ca", "ConfigMap", "no-such-configmap", "backend.internal") +
		backendTLSPolicyYAML("secret-ca", "Secret", "backend-ca", "backend.internal")
	c := startController(t, map[string]string{
		"services.yaml": services,
		"policies.yaml": caConfigMapYAML("backend-ca", secure.cert) + caConfigMapYAML("other-ca", otherCA) + policies,
	})
	port := freePort(t, c.IP)
	var rules strings.Builder
	for _, svc := range []string{"good", "wrong-host", "wrong-ca", "missing-ca", "secret-ca"} {
		fmt.Fprintf(&rules, "  - matches: [{path: {type: PathPrefix, value: /%[1]s}}]\n    backendRefs: [{name: %[1]s, port: 443}]\n", svc)
	}
	c.WriteManifest("gateway.yaml", fmt.Sprintf(gatewayClassYAML+`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  listeners: [{name: http, port: %d, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: default}
spec:
  parentRefs: [{name: gw}]
  hostnames: [app.test]
  rules:
%s  - matches: [{path: {type: PathPrefix, value: /}}]
    backendRefs: [{name: plain, port: 80}]
`, port, rules.String()))
	addr := net.JoinHostPort(c.IP, strconv.Itoa(port))
	get := func(path string) (harness.Result, error) {
		return harness.Do(addr, harness.Request{Scheme: "http", Host: "app.test", Path: path})
	}
	eventually(t, 20*time.Second, func() error {
		r, err := get("/good")
		if err != nil {
			return err
		}
		if r.Status != 200 || r.Reply.Service != "secure" {
			return fmt.Errorf("/good: %d from %q, want 200 from secure", r.Status, r.Reply.Service)
		}
		return nil
	})
	if sni := secure.lastSNI(); sni != "backend.internal" {
		t.Errorf("the backend saw SNI %q, want the policy's hostname backend.internal", sni)
	}
	// Alternate: one upstream serves every location, and a TLS session
	// the good location verified must never be resumed for another.
	for round := 0; round < 3; round++ {
		for _, tc := range []struct {
			path    string
			status  int
			service string
		}{
			{"/good", 200, "secure"}, {"/wrong-host", 502, ""}, {"/wrong-ca", 502, ""},
			{"/missing-ca", 503, ""}, {"/secret-ca", 503, ""}, {"/plain", 200, "plain"},
		} {
			r, err := get(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tc.status || r.Reply.Service != tc.service {
				t.Errorf("round %d: %s: %d from %q, want %d from %q", round, tc.path, r.Status, r.Reply.Service, tc.status, tc.service)
			}
		}
	}
	// The ConfigMap other-ca now holds the backend's CA: nginx reads it
	// again (a reload) and /wrong-ca is served.
	c.WriteManifest("policies.yaml", caConfigMapYAML("backend-ca", secure.cert)+caConfigMapYAML("other-ca", secure.cert)+policies)
	eventually(t, 20*time.Second, func() error {
		r, err := get("/wrong-ca")
		if err != nil {
			return err
		}
		if r.Status != 200 || r.Reply.Service != "secure" {
			return fmt.Errorf("/wrong-ca after its ConfigMap changed: %d from %q, want 200 from secure", r.Status, r.Reply.Service)
		}
		return nil
	})
}
