package integration

import (
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/testcert"
)

// TestGatewayClientValidationAgainstNginx: spec.tls.frontend makes an
// HTTPS listener's port ask every client for a certificate and check it
// against the ConfigMap's CA: in AllowValidOnly mode (the default's, here)
// a client without one, or with one another CA signed, gets no answer at
// all; in AllowInsecureFallback mode (a port's entry) every client is
// served. A host no route serves is refused the same way.
func TestGatewayClientValidationAgainstNginx(t *testing.T) {
	t.Parallel()
	tea := startBackend(t, "tea")
	client := func(cn string) (pem []byte, cert tls.Certificate) {
		c, k, err := testcert.SelfSignedClient(cn)
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		return c, pair
	}
	aPEM, a := client("client-a")
	_, b := client("client-b")
	// Two CAs of one name: nginx finds the issuer of the impostor's
	// certificate by name, fails its signature, and refuses it itself
	// (495) rather than leaving it to the configuration.
	caPEM, signed := signedClient(t, "client CA", "client-signed")
	impostorCA, impostor := signedClient(t, "client CA", "client-impostor")
	c := startController(t, map[string]string{
		"backend.yaml": serviceYAML("default", "tea", 80, tea) + tlsSecretYAML(t, "default", "cert", "gateway.test", 0) +
			caConfigMapYAML("ca-a", append(append([]byte{}, aPEM...), caPEM...)) + caConfigMapYAML("ca-b", impostorCA),
	})
	strict, fallback := freePort(t, c.IP), freePort(t, c.IP)
	c.WriteManifest("gateway.yaml", fmt.Sprintf(gatewayClassYAML+`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  tls:
    frontend:
      default: {validation: {caCertificateRefs: [{group: "", kind: ConfigMap, name: ca-a}]}}
      perPort:
      - port: %[2]d
        tls: {validation: {mode: AllowInsecureFallback, caCertificateRefs: [{group: "", kind: ConfigMap, name: ca-b}]}}
  listeners:
  - {name: strict, port: %[1]d, protocol: HTTPS, tls: {certificateRefs: [{name: cert}]}}
  - {name: fallback, port: %[2]d, protocol: HTTPS, tls: {certificateRefs: [{name: cert}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: default}
spec:
  parentRefs: [{name: gw}]
  hostnames: [app.test]
  rules: [{backendRefs: [{name: tea, port: 80}]}]
---
`, strict, fallback))
	get := func(port int, host string, cert *tls.Certificate) (harness.Result, error) {
		return harness.Do(net.JoinHostPort(c.IP, strconv.Itoa(port)), harness.Request{Scheme: "https", Host: host, Path: "/", Certificate: cert})
	}
	eventually(t, 20*time.Second, func() error {
		r, err := get(strict, "app.test", &a)
		if err != nil {
			return err
		}
		if r.Status != 200 || r.Reply.Service != "tea" {
			return fmt.Errorf("strict port with CA A's client: %d from %q, want 200 from tea", r.Status, r.Reply.Service)
		}
		return nil
	})
	for _, row := range []struct {
		name string
		port int
		host string
		cert *tls.Certificate
		// status 0: no answer
		status int
	}{
		{"strict, A's client", strict, "app.test", &a, 200},
		{"strict, no certificate", strict, "app.test", nil, 0},
		{"strict, B's client", strict, "app.test", &b, 0},
		{"strict, a client the CA signed", strict, "app.test", &signed, 200},
		{"strict, an impostor CA's client", strict, "app.test", &impostor, 0},
		{"fallback, an impostor CA's client", fallback, "app.test", &impostor, 200},
		{"fallback, a client another CA signed", fallback, "app.test", &signed, 200},
		{"strict, A's client, a host no route serves", strict, "other.test", &a, 404},
		{"strict, no certificate, a host no route serves", strict, "other.test", nil, 0},
		{"fallback, B's client", fallback, "app.test", &b, 200},
		{"fallback, no certificate", fallback, "app.test", nil, 200},
		{"fallback, A's client", fallback, "app.test", &a, 200},
	} {
		r, err := get(row.port, row.host, row.cert)
		switch {
		case row.status == 0 && err == nil:
			t.Errorf("%s: %d from %q, want no answer", row.name, r.Status, r.Reply.Service)
		case row.status != 0 && err != nil:
			t.Errorf("%s: %v, want %d", row.name, err, row.status)
		case row.status != 0 && r.Status != row.status:
			t.Errorf("%s: %d, want %d", row.name, r.Status, row.status)
		}
	}
}

// signedClient makes a CA named caName and a client certificate for cn it
// signs, and returns the CA's PEM and the client's key pair.
func signedClient(t *testing.T, caName, cn string) ([]byte, tls.Certificate) {
	t.Helper()
	ca, err := tunneltest.NewCA(caName)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue(cn, false, nil, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca.PEM, leaf.TLS
}
