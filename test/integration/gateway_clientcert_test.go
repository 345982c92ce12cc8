package integration

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/testcert"
)

// TestGatewayBackendClientCertificate: a Gateway's
// spec.tls.backend.clientCertificateRef is presented to the backends a
// BackendTLSPolicy has its routes speak TLS to, and a backend that
// requires a client certificate serves them; a Gateway without one, or
// whose reference does not resolve, presents none, and the same backend
// refuses the handshake (502).
func TestGatewayBackendClientCertificate(t *testing.T) {
	t.Parallel()
	mb := startMTLSBackend(t, "secure")
	c := startController(t, map[string]string{
		"backend.yaml": serviceYAML("default", "secure", 443, mb.backend) + caConfigMapYAML("backend-ca", mb.serverCert) +
			backendTLSPolicyYAML("secure", "ConfigMap", "backend-ca", "backend.internal") +
			testcert.SecretYAML("default", "client", mb.clientCert, mb.clientKey),
	})
	with, without, broken := freePort(t, c.IP), freePort(t, c.IP), freePort(t, c.IP)
	gateway := func(name string, port int, clientCert string) string {
		tls := ""
		if clientCert != "" {
			tls = fmt.Sprintf("  tls: {backend: {clientCertificateRef: {group: \"\", kind: Secret, name: %s}}}\n", clientCert)
		}
		return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %[1]s, namespace: default}
spec:
  gatewayClassName: causeway
  listeners: [{name: http, port: %[2]d, protocol: HTTP}]
%[3]s---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %[1]s, namespace: default}
spec:
  parentRefs: [{name: %[1]s}]
  hostnames: [app.test]
  rules: [{backendRefs: [{name: secure, port: 443}]}]
---
`, name, port, tls)
	}
	c.WriteManifest("gateway.yaml", gatewayClassYAML+gateway("with", with, "client")+gateway("without", without, "")+
		gateway("broken", broken, "no-such-secret"))
	get := func(port int) (harness.Result, error) {
		return harness.Do(net.JoinHostPort(c.IP, strconv.Itoa(port)), harness.Request{Scheme: "http", Host: "app.test", Path: "/"})
	}
	eventually(t, 20*time.Second, func() error {
		r, err := get(with)
		if err != nil {
			return err
		}
		if r.Status != 200 || r.Reply.Service != "secure" {
			return fmt.Errorf("with the client certificate: %d from %q, want 200 from secure", r.Status, r.Reply.Service)
		}
		return nil
	})
	for _, port := range []int{without, broken} {
		eventually(t, 20*time.Second, func() error {
			r, err := get(port)
			if err != nil {
				return err
			}
			if r.Status != 502 {
				return fmt.Errorf("port %d, without a client certificate: %d from %q, want 502", port, r.Status, r.Reply.Service)
			}
			return nil
		})
	}
}
