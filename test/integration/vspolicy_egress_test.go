package integration

import (
	"encoding/base64"
	"fmt"
	"testing"
)

// TestVirtualServerEgressMTLSAgainstNginx: an egressMTLS Policy presents
// its kubernetes.io/tls Secret's client certificate to a TLS upstream
// that requires one and verifies the upstream against its nginx.org/ca
// Secret: 200. Without the Policy the upstream refuses the handshake
// (502); with a CA that did not sign the upstream's certificate nginx
// refuses it (502); with the client Secret missing the routes answer 500.
func TestVirtualServerEgressMTLSAgainstNginx(t *testing.T) {
	t.Parallel()
	mb := startMTLSBackend(t, "secure")
	b64 := base64.StdEncoding.EncodeToString
	other := newCA(t, "Other CA")
	m := ingressClass + serviceYAML("default", "secure", 443, mb.backend) +
		fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: client, namespace: default}\ntype: kubernetes.io/tls\ndata:\n  tls.crt: %s\n  tls.key: %s\n---\n",
			b64(mb.clientCert), b64(mb.clientKey)) +
		fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: backend-ca, namespace: default}\ntype: nginx.org/ca\ndata:\n  ca.crt: %s\n---\n", b64(mb.serverCert)) +
		fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: other-ca, namespace: default}\ntype: nginx.org/ca\ndata:\n  ca.crt: %s\n---\n", b64(other.PEM))
	for _, p := range []struct{ name, tlsSecret, ca string }{
		{"egress", "client", "backend-ca"}, {"egress-wrong-ca", "client", "other-ca"}, {"egress-missing", "no-such-client", "backend-ca"}} {
		m += fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: %s, namespace: default}
spec:
  egressMTLS: {tlsSecret: %s, trustedCertSecret: %s, verifyServer: true, sslName: backend.internal, serverName: true}
---
`, p.name, p.tlsSecret, p.ca)
	}
	for _, v := range []struct{ name, host, policy string }{
		{"good", "good.egress.test", "egress"}, {"none", "none.egress.test", ""},
		{"wrong", "wrong.egress.test", "egress-wrong-ca"}, {"missing", "missing.egress.test", "egress-missing"}} {
		pol := ""
		if v.policy != "" {
			pol = "\n  policies: [{name: " + v.policy + "}]"
		}
		m += fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: %s, namespace: default}
spec:
  host: %s%s
  upstreams: [{name: secure, service: secure, port: 443, tls: {enable: true}}]
  routes: [{path: /, action: {pass: secure}}]
---
`, v.name, v.host, pol)
	}
	c := startController(t, map[string]string{"egress.yaml": m})
	// Alternate the hosts: a TLS session one location authenticated must
	// never be resumed for another.
	for round := 0; round < 3; round++ {
		for _, tc := range []struct {
			host    string
			status  int
			service string
		}{{"good.egress.test", 200, "secure"}, {"none.egress.test", 502, ""}, {"wrong.egress.test", 502, ""}, {"missing.egress.test", 500, ""}} {
			if r := c.Get(tc.host, "/"); r.Status != tc.status || r.Reply.Service != tc.service {
				t.Errorf("round %d: %s: status %d from %q, want %d from %q", round, tc.host, r.Status, r.Reply.Service, tc.status, tc.service)
			}
		}
	}
}
