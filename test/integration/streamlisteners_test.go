package integration

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
)

// streamEchoes are a TCP and a UDP echo, the endpoints of the Services
// tcp-app and udp-app (port 7000).
type streamEchoes struct {
	tcpIP, udpIP     string
	tcpPort, udpPort int
}

func (e streamEchoes) servicesYAML() string {
	return streamServiceYAML("tcp-app", "TCP", 7000, e.tcpPort, e.tcpIP) + streamServiceYAML("udp-app", "UDP", 7000, e.udpPort, e.udpIP)
}

// startStreamController starts the echoes, named tcpName and udpName,
// and a controller reading the GlobalConfiguration causeway/listeners.
func startStreamController(t *testing.T, tcpName, udpName string) (*controller, streamEchoes) {
	t.Helper()
	var e streamEchoes
	e.tcpIP, e.tcpPort = startTCPEcho(t, tcpName)
	e.udpIP, e.udpPort = startUDPEcho(t, udpName)
	return startController(t, map[string]string{"services.yaml": e.servicesYAML()}, "--global-configuration", "causeway/listeners"), e
}

// TestStreamListenerAddressesAgainstNginx: TCP and UDP listeners of the
// GlobalConfiguration with an ipv4 are bound on that address only, not on
// the controller's listen address.
func TestStreamListenerAddressesAgainstNginx(t *testing.T) {
	t.Parallel()
	c, _ := startStreamController(t, "tcp", "udp")
	pinned := loopbackIP()
	tcpListen, udpListen := freePort(t, pinned), freePort(t, pinned)
	c.WriteManifest("gc.yaml", fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: GlobalConfiguration
metadata: {name: listeners, namespace: causeway}
spec:
  listeners:
  - {name: tcp-echo, port: %d, protocol: TCP, ipv4: %s}
  - {name: udp-echo, port: %d, protocol: UDP, ipv4: %s}
---
`, tcpListen, pinned, udpListen, pinned))
	c.WriteManifest("ts.yaml", transportServerYAML("tcp", "2026-01-01T00:00:00Z", "tcp-echo", "TCP", "tcp-app")+
		transportServerYAML("udp", "2026-01-01T00:00:00Z", "udp-echo", "UDP", "udp-app"))

	tcpAddr, udpAddr := net.JoinHostPort(pinned, strconv.Itoa(tcpListen)), net.JoinHostPort(pinned, strconv.Itoa(udpListen))
	waitReply(t, "TCP on the listener's ipv4", "tcp:hello", func() (string, error) { return tcpRoundTrip(tcpAddr, "hello") })
	waitReply(t, "UDP on the listener's ipv4", "udp:ping", func() (string, error) { return udpRoundTrip(udpAddr, "ping") })

	if got, err := tcpRoundTrip(net.JoinHostPort(c.IP, strconv.Itoa(tcpListen)), "elsewhere"); err == nil {
		t.Errorf("TCP on the controller's listen address answered %q; want it unbound there", got)
	}
	if got, err := udpRoundTrip(net.JoinHostPort(c.IP, strconv.Itoa(udpListen)), "elsewhere"); err == nil {
		t.Errorf("UDP on the controller's listen address answered %q; want it unbound there", got)
	}
	if strings.Contains(c.log.String(), "ipv4 and ipv6 are not supported") {
		t.Errorf("the addresses are still reported as not supported")
	}
}
