package integration

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/testcert"
)

// startTCPEcho runs a line echo on a fresh loopback IP: each line comes
// back prefixed with name, so a test tells the backends apart.
func startTCPEcho(t *testing.T, name string) (ip string, port int) {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(loopbackIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewScanner(c)
				for r.Scan() {
					fmt.Fprintf(c, "%s:%s\n", name, r.Text())
				}
			}()
		}
	}()
	a := l.Addr().(*net.TCPAddr)
	return a.IP.String(), a.Port
}

// startUDPEcho answers each datagram with name, ":" and the datagram.
func startUDPEcho(t *testing.T, name string) (ip string, port int) {
	t.Helper()
	pc, err := net.ListenPacket("udp", net.JoinHostPort(loopbackIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			pc.WriteTo(append([]byte(name+":"), buf[:n]...), from)
		}
	}()
	a := pc.LocalAddr().(*net.UDPAddr)
	return a.IP.String(), a.Port
}

// streamServiceYAML is a Service with one port of protocol proto and an
// EndpointSlice listing ips on targetPort.
func streamServiceYAML(name, proto string, port, targetPort int, ips ...string) string {
	var eps strings.Builder
	for _, ip := range ips {
		fmt.Fprintf(&eps, "  - addresses: [%q]\n    conditions: {ready: true}\n", ip)
	}
	if len(ips) == 0 {
		eps.WriteString("  []\n")
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: default}
spec:
  ports: [{name: p, port: %[3]d, protocol: %[2]s}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %[1]s-1
  namespace: default
  labels: {kubernetes.io/service-name: %[1]s}
addressType: IPv4
ports: [{name: p, port: %[4]d, protocol: %[2]s}]
endpoints:
%[5]s---
`, name, proto, port, targetPort, eps.String())
}

func globalConfigurationYAML(tcpPort, udpPort int) string {
	return fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: GlobalConfiguration
metadata: {name: listeners, namespace: causeway}
spec:
  listeners:
  - {name: tcp-echo, port: %d, protocol: TCP}
  - {name: udp-echo, port: %d, protocol: UDP}
---
`, tcpPort, udpPort)
}

func transportServerYAML(name, created, listener, proto, service string) string {
	return fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: TransportServer
metadata: {name: %s, namespace: default, creationTimestamp: %q}
spec:
  listener: {name: %s, protocol: %s}
  upstreams:
  - {name: app, service: %s, port: 7000, maxFails: 2, failTimeout: 5s}
  upstreamParameters: {connectTimeout: 5s, nextUpstream: true, nextUpstreamTries: 2}
  sessionParameters: {timeout: 30s}
  action: {pass: app}
---
`, name, created, listener, proto, service)
}

// tcpRoundTrip sends one line through addr and returns the reply line.
func tcpRoundTrip(addr, line string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintf(c, "%s\n", line); err != nil {
		return "", err
	}
	reply, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(reply, "\n"), err
}

// udpRoundTrip sends one datagram through addr and returns the reply.
func udpRoundTrip(addr, msg string) (string, error) {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	buf := make([]byte, 2048)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

// waitReply polls f until it returns want.
func waitReply(t *testing.T, what, want string, f func() (string, error)) {
	t.Helper()
	var got string
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if got, err = f(); err == nil && got == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: got %q, %v; want %q", what, got, err, want)
}

// TestTransportServerAgainstNginx serves TCP and UDP TransportServers on a
// GlobalConfiguration's listeners through real nginx: a TCP round trip, a
// UDP datagram round trip, a younger TransportServer on a taken listener
// gets a Collision while the older keeps serving, and an endpoint change
// (written into the stream files) applies with a reload.
func TestTransportServerAgainstNginx(t *testing.T) {
	t.Parallel()
	c, echoes := startStreamController(t, "one", "udp")
	udpIP, udpPort := echoes.udpIP, echoes.udpPort
	tcpListen, udpListen := freePort(t, c.IP), freePort(t, c.IP)
	c.WriteManifest("gc.yaml", globalConfigurationYAML(tcpListen, udpListen))
	c.WriteManifest("ts.yaml", transportServerYAML("tcp", "2026-01-01T00:00:00Z", "tcp-echo", "TCP", "tcp-app")+
		transportServerYAML("udp", "2026-01-01T00:00:00Z", "udp-echo", "UDP", "udp-app"))
	tcpAddr := net.JoinHostPort(c.IP, strconv.Itoa(tcpListen))
	udpAddr := net.JoinHostPort(c.IP, strconv.Itoa(udpListen))

	waitReply(t, "TCP through the TransportServer", "one:hello", func() (string, error) { return tcpRoundTrip(tcpAddr, "hello") })
	waitReply(t, "UDP through the TransportServer", "udp:ping", func() (string, error) { return udpRoundTrip(udpAddr, "ping") })

	// A younger TransportServer on the same listener loses it.
	c.WriteManifest("late.yaml", transportServerYAML("late", "2026-02-01T00:00:00Z", "tcp-echo", "TCP", "udp-app"))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(c.log.String(), `reason=Collision`) || !strings.Contains(c.log.String(), "default/late") {
		if time.Now().After(deadline) {
			t.Fatalf("no Collision logged for the younger TransportServer:\n%s", c.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got, err := tcpRoundTrip(tcpAddr, "still"); err != nil || got != "one:still" {
		t.Fatalf("after the collision: %q, %v; want the older TransportServer's backend", got, err)
	}

	// An endpoint change reaches nginx (by a reload: the stream module
	// has no dynamic channel).
	twoIP, twoPort := startTCPEcho(t, "two")
	c.WriteManifest("services.yaml", streamServiceYAML("tcp-app", "TCP", 7000, twoPort, twoIP)+streamServiceYAML("udp-app", "UDP", 7000, udpPort, udpIP))
	waitReply(t, "TCP after the endpoint change", "two:again", func() (string, error) { return tcpRoundTrip(tcpAddr, "again") })

	// Without endpoints the listener stays bound and closes connections.
	c.WriteManifest("services.yaml", streamServiceYAML("tcp-app", "TCP", 7000, twoPort)+streamServiceYAML("udp-app", "UDP", 7000, udpPort, udpIP))
	deadline = time.Now().Add(10 * time.Second)
	for {
		_, err := tcpRoundTrip(tcpAddr, "closed")
		var op *net.OpError
		if err != nil && !(errors.As(err, &op) && op.Op == "dial") {
			break // accepted, then closed
		}
		if time.Now().After(deadline) {
			t.Fatalf("without endpoints: %v; want an accepted connection that is closed", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestServicesConfigMapsAgainstNginx: ingress-nginx's tcp-services and
// udp-services ConfigMaps through real nginx: a TCP round trip, one whose
// listener reads the PROXY protocol (the client sends a header that nginx
// consumes), and a UDP datagram round trip.
func TestServicesConfigMapsAgainstNginx(t *testing.T) {
	t.Parallel()
	tcpIP, tcpPort := startTCPEcho(t, "tcp")
	udpIP, udpPort := startUDPEcho(t, "udp")
	c := startController(t, map[string]string{
		"services.yaml": streamServiceYAML("tcp-app", "TCP", 7000, tcpPort, tcpIP) + streamServiceYAML("udp-app", "UDP", 7000, udpPort, udpIP),
	}, "--tcp-services-configmap", "causeway/tcp-services", "--udp-services-configmap", "causeway/udp-services")
	ip := c.IP
	plain, proxied, dgram := freePort(t, ip), freePort(t, ip), freePort(t, ip)
	c.WriteManifest("tcp.yaml", fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: tcp-services, namespace: causeway}
data:
  "%d": "default/tcp-app:7000"
  "%d": "default/tcp-app:7000:PROXY"
---
apiVersion: v1
kind: ConfigMap
metadata: {name: udp-services, namespace: causeway}
data:
  "%d": "default/udp-app:7000"
`, plain, proxied, dgram))
	waitReply(t, "plain TCP", "tcp:hello", func() (string, error) {
		return tcpRoundTrip(net.JoinHostPort(ip, strconv.Itoa(plain)), "hello")
	})
	waitReply(t, "TCP with the PROXY protocol", "tcp:hi", func() (string, error) {
		return tcpRoundTrip(net.JoinHostPort(ip, strconv.Itoa(proxied)), "PROXY TCP4 192.0.2.1 192.0.2.2 1234 80\r\nhi")
	})
	waitReply(t, "UDP", "udp:ping", func() (string, error) { return udpRoundTrip(net.JoinHostPort(ip, strconv.Itoa(dgram)), "ping") })
}

// TestTransportServerTLSAgainstNginx: a TCP listener terminates TLS with
// the TransportServer's Secret and passes the plain bytes to the backend.
func TestTransportServerTLSAgainstNginx(t *testing.T) {
	t.Parallel()
	tcpIP, tcpPort := startTCPEcho(t, "tls")
	crt, key, err := testcert.SelfSigned(2048, time.Hour, "db.test")
	if err != nil {
		t.Fatal(err)
	}
	c := startController(t, map[string]string{
		"services.yaml": streamServiceYAML("tcp-app", "TCP", 7000, tcpPort, tcpIP),
		"tls.yaml":      testcert.SecretYAML("default", "db-tls", crt, key),
	}, "--global-configuration", "causeway/listeners")
	tcpListen, udpListen := freePort(t, c.IP), freePort(t, c.IP)
	c.WriteManifest("gc.yaml", globalConfigurationYAML(tcpListen, udpListen))
	c.WriteManifest("ts.yaml", strings.Replace(transportServerYAML("tcp", "2026-01-01T00:00:00Z", "tcp-echo", "TCP", "tcp-app"),
		"  action: {pass: app}", "  action: {pass: app}\n  tls: {secret: db-tls}", 1))
	addr := net.JoinHostPort(c.IP, strconv.Itoa(tcpListen))
	waitReply(t, "TLS through the TransportServer", "tls:hello", func() (string, error) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, &tls.Config{ServerName: "db.test", InsecureSkipVerify: true})
		if err != nil {
			return "", err
		}
		defer conn.Close()
		if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "db.test" {
			return "", fmt.Errorf("certificate of %q", cn)
		}
		conn.SetDeadline(time.Now().Add(2 * time.Second))
		fmt.Fprintf(conn, "hello\n")
		reply, err := bufio.NewReader(conn).ReadString('\n')
		return strings.TrimSuffix(reply, "\n"), err
	})
	// Plain TCP to a TLS listener gets no backend reply.
	if got, err := tcpRoundTrip(addr, "clear"); err == nil && got == "tls:clear" {
		t.Errorf("a cleartext client reached the backend through the TLS listener")
	}
}

// TestUnbindableListenerIsLeftOut: a TransportServer whose listener port
// another process holds cannot stop the other changes. nginx -t accepts
// the files (it binds nothing); the reloading master fails to bind, keeps
// the old configuration and says so. The controller blames the
// TransportServer on that port, leaves it out, and the rest goes live
// without waiting for the reload timeout. Once the port is free, a change
// to the TransportServer brings it back.
func TestUnbindableListenerIsLeftOut(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	e := streamEchoes{}
	e.tcpIP, e.tcpPort = startTCPEcho(t, "one")
	e.udpIP, e.udpPort = startUDPEcho(t, "udp")
	c := startController(t, map[string]string{
		"services.yaml": e.servicesYAML(),
		"app.yaml":      ingressClass + serviceYAML("default", "web", 80, web) + ingressYAML("default", "web", "app.test", "Prefix / web"),
	}, "--global-configuration", "causeway/listeners", "--reload-timeout", "60s")
	held, err := net.Listen("tcp", net.JoinHostPort(c.IP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	tcpListen := held.Addr().(*net.TCPAddr).Port
	udpListen := freePort(t, c.IP)
	failed := c.Metric("causeway_nginx_reloads_total", `result="failure"`)
	start := time.Now()
	c.WriteManifest("gc.yaml", globalConfigurationYAML(tcpListen, udpListen))
	c.WriteManifest("ts.yaml", transportServerYAML("tcp", "2026-01-01T00:00:00Z", "tcp-echo", "TCP", "tcp-app")+
		transportServerYAML("udp", "2026-01-01T00:00:00Z", "udp-echo", "UDP", "udp-app"))
	udpAddr := net.JoinHostPort(c.IP, strconv.Itoa(udpListen))
	waitReply(t, "UDP beside the unbindable TCP listener", "udp:ping", func() (string, error) { return udpRoundTrip(udpAddr, "ping") })
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("the other TransportServer went live after %s; the reload timeout is 60s", took)
	}
	if c.Metric("causeway_nginx_reloads_total", `result="failure"`) <= failed {
		t.Error("no failed reload recorded")
	}
	bindMsg := fmt.Sprintf("bind() to %s failed", net.JoinHostPort(c.IP, strconv.Itoa(tcpListen)))
	eventually(t, 5*time.Second, func() error {
		log := c.log.String()
		if !strings.Contains(log, "excluding it") || !strings.Contains(log, "TransportServer/default/tcp") || !strings.Contains(log, bindMsg) {
			return fmt.Errorf("no exclusion of TransportServer default/tcp naming %q logged", bindMsg)
		}
		return nil
	})
	// Later changes keep applying at once.
	c.ChangesStillApply("web")
	// The port is free again; a change to the TransportServer retries it.
	held.Close()
	c.WriteManifest("ts.yaml", strings.Replace(transportServerYAML("tcp", "2026-01-01T00:00:00Z", "tcp-echo", "TCP", "tcp-app"), "timeout: 30s", "timeout: 31s", 1)+
		transportServerYAML("udp", "2026-01-01T00:00:00Z", "udp-echo", "UDP", "udp-app"))
	tcpAddr := net.JoinHostPort(c.IP, strconv.Itoa(tcpListen))
	waitReply(t, "TCP once the port is free", "one:hello", func() (string, error) { return tcpRoundTrip(tcpAddr, "hello") })
}

// TestUnbindableListenerAtStart: the same when the port is held before
// nginx first starts: nginx exits instead of keeping a configuration, and
// the controller leaves the TransportServer out and starts it without.
func TestUnbindableListenerAtStart(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	e := streamEchoes{}
	e.tcpIP, e.tcpPort = startTCPEcho(t, "one")
	e.udpIP, e.udpPort = startUDPEcho(t, "udp")
	ip := loopbackIP()
	held, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	tcpListen := held.Addr().(*net.TCPAddr).Port
	udpListen := freePort(t, ip)
	start := time.Now()
	c := launchController(t, map[string]string{
		"services.yaml": e.servicesYAML(),
		"app.yaml":      ingressClass + serviceYAML("default", "web", 80, web) + ingressYAML("default", "web", "app.test", "Prefix / web"),
		"gc.yaml":       globalConfigurationYAML(tcpListen, udpListen),
		"ts.yaml": transportServerYAML("tcp", "2026-01-01T00:00:00Z", "tcp-echo", "TCP", "tcp-app") +
			transportServerYAML("udp", "2026-01-01T00:00:00Z", "udp-echo", "UDP", "udp-app"),
	}, launch{ip: ip}, "--global-configuration", "causeway/listeners", "--reload-timeout", "60s")
	c.WaitReady(20 * time.Second)
	if r := c.Get("app.test", "/"); r.Status != 200 || r.Reply.Service != "web" {
		t.Fatalf("status %d from %q, want 200 from web", r.Status, r.Reply.Service)
	}
	udpAddr := net.JoinHostPort(ip, strconv.Itoa(udpListen))
	waitReply(t, "UDP beside the unbindable TCP listener", "udp:ping", func() (string, error) { return udpRoundTrip(udpAddr, "ping") })
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("ready after %s", took)
	}
	bindMsg := fmt.Sprintf("bind() to %s failed", net.JoinHostPort(ip, strconv.Itoa(tcpListen)))
	if log := c.log.String(); !strings.Contains(log, "excluding it") || !strings.Contains(log, "TransportServer/default/tcp") || !strings.Contains(log, bindMsg) {
		t.Fatalf("no exclusion of TransportServer default/tcp naming %q logged", bindMsg)
	}
}
