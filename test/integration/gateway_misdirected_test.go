package integration

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// misdirectedManifests are a Gateway with four HTTPS listeners on port
// %[1]d, one without a hostname, one exact, one wildcard and one exact
// within the wildcard, each with a route (the conformance suite's
// httproute-https-listener-detect-misdirected-requests, on .test names).
const misdirectedManifests = gatewayClassYAML + `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  listeners:
  - {name: https, port: %[1]d, protocol: HTTPS, tls: {certificateRefs: [{name: cert}]}}
  - {name: second, port: %[1]d, protocol: HTTPS, hostname: second.test, tls: {certificateRefs: [{name: cert}]}}
  - {name: wild, port: %[1]d, protocol: HTTPS, hostname: "*.wildcard.test", tls: {certificateRefs: [{name: cert}]}}
  - {name: fourth, port: %[1]d, protocol: HTTPS, hostname: fourth.wildcard.test, tls: {certificateRefs: [{name: cert}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: first, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: https}]
  hostnames: [example.test]
  rules: [{backendRefs: [{name: tea, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: second, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: second}]
  rules: [{backendRefs: [{name: coffee, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wild, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: wild}]
  rules: [{backendRefs: [{name: juice, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: fourth, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: fourth}]
  rules: [{backendRefs: [{name: tea, port: 80}]}]
---
`

// TestMisdirectedRequestsAgainstNginx: on an HTTPS port shared by
// listeners of different hostnames, a request whose Host goes to another
// listener than its server name (SNI) did is answered 421; one whose two
// go to the same listener is served, or 404 when no route there has the
// host; a request without a server name is not checked.
func TestMisdirectedRequestsAgainstNginx(t *testing.T) {
	t.Parallel()
	tea, coffee, juice := startBackend(t, "tea"), startBackend(t, "coffee"), startBackend(t, "juice")
	c := startController(t, map[string]string{
		"services.yaml": serviceYAML("default", "tea", 80, tea) + serviceYAML("default", "coffee", 80, coffee) + serviceYAML("default", "juice", 80, juice),
		"cert.yaml":     tlsSecretYAML(t, "default", "cert", "gateway.test", 2048),
	})
	port := freePort(t, c.IP)
	c.WriteManifest("gateway.yaml", fmt.Sprintf(misdirectedManifests, port))
	addr := net.JoinHostPort(c.IP, strconv.Itoa(port))
	rows := []struct {
		sni, host string
		status    int
		service   string
	}{
		{"example.test", "example.test", 200, "tea"},
		{"example.test", "second.test", 421, ""},
		{"example.test", "unknown.test", 404, ""},
		{"second.test", "second.test", 200, "coffee"},
		{"second.test", "example.test", 421, ""},
		{"second.test", "unknown.test", 421, ""},
		// Host is case-insensitive, as is the server name.
		{"SECOND.test", "second.TEST", 200, "coffee"},
		{"third.wildcard.test", "third.wildcard.test", 200, "juice"},
		{"third.wildcard.test", "fifth.wildcard.test", 200, "juice"},
		{"third.wildcard.test", "a.b.wildcard.test", 200, "juice"},
		{"third.wildcard.test", "fourth.wildcard.test", 421, ""},
		{"third.wildcard.test", "second.test", 421, ""},
		{"third.wildcard.test", "unknown.test", 421, ""},
		{"fourth.wildcard.test", "fourth.wildcard.test", 200, "tea"},
		{"fourth.wildcard.test", "fifth.wildcard.test", 421, ""},
		{"unknown.test", "example.test", 200, "tea"},
		{"unknown.test", "unknown.test", 404, ""},
		// No server name: an IP address chose no listener.
		{c.IP, "second.test", 200, "coffee"},
	}
	check := func(sni, host string, status int, service string) error {
		got, err := harness.Do(addr, harness.Request{Scheme: "https", Host: host, Path: "/", ServerName: sni})
		if err != nil {
			return err
		}
		if got.Status != status || got.Reply.Service != service {
			return fmt.Errorf("SNI %s, Host %s: %d %q, want %d %q", sni, host, got.Status, got.Reply.Service, status, service)
		}
		return nil
	}
	eventually(t, 20*time.Second, func() error { return check("fourth.wildcard.test", "fourth.wildcard.test", 200, "tea") })
	for _, r := range rows {
		if err := check(r.sni, r.host, r.status, r.service); err != nil {
			t.Error(err)
		}
	}
}
