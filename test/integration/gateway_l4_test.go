package integration

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// gatewayL4Manifests are a Gateway with a TLS passthrough listener on port
// %[1]d, a TCP listener on %[2]d and a UDP listener on %[3]d, with their
// routes.
const gatewayL4Manifests = gatewayClassYAML + `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  listeners:
  - {name: tls, port: %[1]d, protocol: TLS, tls: {mode: Passthrough}}
  - {name: tcp, port: %[2]d, protocol: TCP}
  - {name: udp, port: %[3]d, protocol: UDP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: secure, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: tls}]
  hostnames: [secure.pass.test]
  rules: [{backendRefs: [{name: tls-app, port: 8443}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: wild, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: tls}]
  hostnames: ["*.wild.pass.test"]
  rules: [{backendRefs: [{name: wild-app, port: 8443}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: tcp, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: tcp}]
  rules: [{backendRefs: [{name: tcp-echo, port: 9000, weight: 1}, {name: tcp-echo-b, port: 9000, weight: 1}, {name: tcp-echo-c, port: 9000, weight: 0}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {name: udp, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: udp}]
  rules: [{backendRefs: [{name: udp-echo, port: 9001}]}]
---
`

// TestGatewayStreamRoutesAgainstNginx: a TLS passthrough listener passes
// connections by server name (exact, and a wildcard of any depth) to
// their TLSRoutes' backends, which present their own certificates, and
// closes any other name; TCPRoutes and UDPRoutes proxy their listeners'
// connections and datagrams.
func TestGatewayStreamRoutesAgainstNginx(t *testing.T) {
	t.Parallel()
	appIP, appPort := startTLSBackend(t, "tls-app", "secure.pass.test")
	wildIP, wildPort := startTLSBackend(t, "wild-app", "wild.pass.test")
	tcpIP, tcpPort := startTCPEcho(t, "tcp")
	tcpIPb, tcpPortb := startTCPEcho(t, "tcpb")
	tcpIPc, tcpPortc := startTCPEcho(t, "tcpc")
	udpIP, udpPort := startUDPEcho(t, "udp")
	c := startController(t, map[string]string{
		"services.yaml": streamServiceYAML("tls-app", "TCP", 8443, appPort, appIP) + streamServiceYAML("wild-app", "TCP", 8443, wildPort, wildIP) +
			streamServiceYAML("tcp-echo", "TCP", 9000, tcpPort, tcpIP) + streamServiceYAML("tcp-echo-b", "TCP", 9000, tcpPortb, tcpIPb) +
			streamServiceYAML("tcp-echo-c", "TCP", 9000, tcpPortc, tcpIPc) + streamServiceYAML("udp-echo", "UDP", 9001, udpPort, udpIP),
	})
	// The UDP listener shares the TCP listener's port number, as DNS
	// does on 53: UDP ports are apart from TCP's.
	tlsPort, tcpGw := freePort(t, c.IP), freePort(t, c.IP)
	udpGw := tcpGw
	c.WriteManifest("gateway.yaml", fmt.Sprintf(gatewayL4Manifests, tlsPort, tcpGw, udpGw))
	tlsAddr := net.JoinHostPort(c.IP, strconv.Itoa(tlsPort))
	check := func(host, cn, body string) error {
		r, err := harness.Get("https", tlsAddr, host, "/")
		if err != nil {
			return err
		}
		if r.PeerCN != cn || !strings.HasPrefix(r.Body, body) {
			return fmt.Errorf("%s: certificate %q, body %q; want %q, %q", host, r.PeerCN, r.Body, cn, body)
		}
		return nil
	}
	eventually(t, 20*time.Second, func() error { return check("secure.pass.test", "secure.pass.test", "tls-app from ") })
	if err := check("a.b.wild.pass.test", "wild.pass.test", "wild-app from "); err != nil {
		t.Error(err)
	}
	if _, err := harness.Get("https", tlsAddr, "other.pass.test", "/"); err == nil {
		t.Error("a server name no TLSRoute has was served")
	}
	// The TCPRoute shares connections by weight: 1 and 1 (and 0).
	seen := map[string]int{}
	eventually(t, 20*time.Second, func() error {
		got, err := tcpRoundTrip(net.JoinHostPort(c.IP, strconv.Itoa(tcpGw)), "hello")
		if err != nil {
			return err
		}
		seen[got]++
		if seen["tcp:hello"] == 0 || seen["tcpb:hello"] == 0 {
			return fmt.Errorf("replies so far %v; want both weighted backends", seen)
		}
		return nil
	})
	if seen["tcpc:hello"] > 0 {
		t.Errorf("the backend of weight 0 got connections: %v", seen)
	}
	waitReply(t, "UDPRoute", "udp:ping", func() (string, error) {
		return udpRoundTrip(net.JoinHostPort(c.IP, strconv.Itoa(udpGw)), "ping")
	})
}
