package integration

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"testing"
)

// mtlsVirtualServerYAML is a VirtualServer with TLS whose own Policies
// name the ingressMTLS Policy policy.
func mtlsVirtualServerYAML(t *testing.T, name, host, policy string) string {
	return fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: %[1]s, namespace: default}
spec:
  host: %[2]s
  tls: {secret: %[1]s-tls}
  policies: [{name: %[3]s}]
  upstreams: [{name: web, service: web, port: 80}]
  routes: [{path: /, action: {pass: web}}]
---
`, name, host, policy) + tlsSecretYAML(t, "default", name+"-tls", host, 0)
}

// TestVirtualServerIngressMTLSAgainstNginx: an ingressMTLS Policy makes
// nginx ask for client certificates signed by the nginx.org/ca Secret's
// CA (none or another CA's: 400), and one whose Secret is missing makes
// the VirtualServer's routes answer 500.
func TestVirtualServerIngressMTLSAgainstNginx(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	ca, other := newCA(t, "Client CA"), newCA(t, "Other CA")
	good, foreign := clientCert(t, ca, "client-a"), clientCert(t, other, "client-a")
	m := ingressClass + serviceYAML("default", "web", 80, web) +
		fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: client-ca, namespace: default}\ntype: nginx.org/ca\ndata:\n  ca.crt: %s\n---\n",
			base64.StdEncoding.EncodeToString(ca.PEM)) + `apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: mtls, namespace: default}
spec:
  ingressMTLS: {clientCertSecret: client-ca, verifyDepth: 1}
---
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: mtls-missing, namespace: default}
spec:
  ingressMTLS: {clientCertSecret: no-such-ca}
---
` + mtlsVirtualServerYAML(t, "secured", "vs.mtls.test", "mtls") + mtlsVirtualServerYAML(t, "missing", "missing.mtls.test", "mtls-missing")
	c := startController(t, map[string]string{"mtls.yaml": m})
	for _, tc := range []struct {
		name, host string
		cert       *tls.Certificate
		want       int
	}{
		{"no certificate", "vs.mtls.test", nil, 400},
		{"a certificate from another CA", "vs.mtls.test", &foreign, 400},
		{"a good certificate", "vs.mtls.test", &good, 200},
		{"missing CA Secret: closed", "missing.mtls.test", &good, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, r := getMTLS(t, c, tc.host, tc.cert)
			if status != tc.want {
				t.Fatalf("status %d, want %d", status, tc.want)
			}
			if status == 200 && r.Service != "web" {
				t.Errorf("answered by %q", r.Service)
			}
		})
	}
	if r := c.Get("vs.mtls.test", "/"); r.Status != 400 && r.Status != 403 {
		t.Errorf("plain HTTP to a host that requires a certificate: %d", r.Status)
	}
}
