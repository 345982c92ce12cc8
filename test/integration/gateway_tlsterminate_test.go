package integration

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// tlsTerminateManifests are a Gateway with a TLS listener in mode
// Terminate on port %[1]d, and two TLSRoutes by server name to plain TCP
// echo backends and one without hostnames, and beside it on the same port
// a TLS listener in mode Passthrough for pass.term.test with its route to
// a TLS backend.
const tlsTerminateManifests = gatewayClassYAML + `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  listeners:
  - {name: tls, port: %[1]d, protocol: TLS, tls: {mode: Terminate, certificateRefs: [{name: cert}]}}
  - {name: pass, port: %[1]d, protocol: TLS, hostname: pass.term.test, tls: {mode: Passthrough}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: pass, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: pass}]
  rules: [{backendRefs: [{name: tls-app, port: 8443}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: one, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: tls}]
  hostnames: [one.term.test]
  rules: [{backendRefs: [{name: one, port: 9000}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: any, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: tls}]
  rules: [{backendRefs: [{name: any, port: 9000}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: wild, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: tls}]
  hostnames: ["*.wild.term.test"]
  rules: [{backendRefs: [{name: wild, port: 9000}]}]
---
`

// TestGatewayTLSTerminateAgainstNginx: a TLS listener in mode Terminate
// presents its own certificate, and passes the decrypted stream by the
// server name of the handshake (exact, and a wildcard of any depth) to
// its TLSRoutes' plain TCP backends, any other name and none to the route
// without hostnames; a listener in mode Passthrough on the same port
// passes its name still encrypted.
func TestGatewayTLSTerminateAgainstNginx(t *testing.T) {
	t.Parallel()
	oneIP, onePort := startTCPEcho(t, "one")
	wildIP, wildPort := startTCPEcho(t, "wild")
	anyIP, anyPort := startTCPEcho(t, "any")
	appIP, appPort := startTLSBackend(t, "tls-app", "pass.term.test")
	c := startController(t, map[string]string{
		"services.yaml": streamServiceYAML("one", "TCP", 9000, onePort, oneIP) + streamServiceYAML("wild", "TCP", 9000, wildPort, wildIP) +
			streamServiceYAML("tls-app", "TCP", 8443, appPort, appIP) + streamServiceYAML("any", "TCP", 9000, anyPort, anyIP) +
			tlsSecretYAML(t, "default", "cert", "gateway.term.test", 0),
	})
	port := freePort(t, c.IP)
	c.WriteManifest("gateway.yaml", fmt.Sprintf(tlsTerminateManifests, port))
	addr := net.JoinHostPort(c.IP, strconv.Itoa(port))
	// roundTrip sends one line over TLS with server name sni and returns
	// the echo and the certificate's name.
	roundTrip := func(sni string) (string, string, error) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 3 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true, ServerName: sni})
		if err != nil {
			return "", "", err
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(3 * time.Second))
		cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName
		if _, err := fmt.Fprintf(conn, "hello\n"); err != nil {
			return "", cn, err
		}
		line, err := bufio.NewReader(conn).ReadString('\n')
		return line, cn, err
	}
	eventually(t, 20*time.Second, func() error {
		got, _, err := roundTrip("one.term.test")
		if err != nil {
			return err
		}
		if got != "one:hello\n" {
			return fmt.Errorf("one.term.test: %q, want one's echo", got)
		}
		return nil
	})
	// The route without hostnames takes every other name, and none.
	for sni, want := range map[string]string{"one.term.test": "one:hello\n", "a.wild.term.test": "wild:hello\n", "a.b.wild.term.test": "wild:hello\n",
		"other.term.test": "any:hello\n", "wild.term.test": "any:hello\n", "": "any:hello\n"} {
		got, cn, err := roundTrip(sni)
		if err != nil || got != want || cn != "gateway.term.test" {
			t.Errorf("%s: %q from a certificate for %q (%v), want %q from the listener's", sni, got, cn, err, want)
		}
	}
	// Passthrough beside: the backend's own certificate and answer.
	if r, err := harness.Get("https", addr, "pass.term.test", "/"); err != nil || r.PeerCN != "pass.term.test" || !strings.HasPrefix(r.Body, "tls-app from ") {
		t.Errorf("pass.term.test: certificate %q, body %q (%v); want the backend's own", r.PeerCN, r.Body, err)
	}
}
