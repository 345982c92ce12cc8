package loopback

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/causeway/causeway/internal/tunnel/server"
	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	"github.com/causeway/causeway/internal/tunnel/wire"
)

// TestSlowReader is the head-of-line test that apiserver-network-proxy
// fails: connection A's reader stops while its backend keeps writing;
// connection B through the same agent must keep its normal latency.
func TestSlowReader(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p, serverOpts{compression: wire.CompressionNone})
	a := startAgent(t, p, agentOpts{node: "edge", server: s.agentAddr, nodeIPs: []string{"127.0.0.1"}})
	eventually(t, 5*time.Second, "agent ready", a.Ready)

	// The firehose backend writes up to 256 MiB to whoever connects.
	fln, _ := net.Listen("tcp", "127.0.0.1:0")
	var written atomic.Int64
	chunk := make([]byte, 64<<10)
	go func() {
		for {
			c, err := fln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetWriteDeadline(time.Now().Add(20 * time.Second))
				for i := 0; i < 4096; i++ {
					n, err := c.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { fln.Close() })
	echoAddr := echoBackend(t, "127.0.0.1")

	stalled, err := connectUDS(t, s, fln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = stalled // never read: its window fills and its backend blocks
	fillTook := eventually(t, 5*time.Second, "the stalled connection's buffers to fill", func() bool {
		before := written.Load()
		time.Sleep(200 * time.Millisecond)
		return before > 0 && written.Load() == before
	})
	t.Logf("stalled connection: backend wrote %d KiB, then blocked (after %s)", written.Load()>>10, fillTook)

	b, err := connectUDS(t, s, echoAddr)
	if err != nil {
		t.Fatal(err)
	}
	var worst time.Duration
	for i := 0; i < 200; i++ {
		start := time.Now()
		echo(t, b, "is the tunnel still responsive?")
		worst = max(worst, time.Since(start))
	}
	t.Logf("second connection: worst round trip of 200 = %s while the first is stalled", worst)
	if worst > 200*time.Millisecond {
		t.Fatalf("second connection delayed by the stalled one: worst round trip %s", worst)
	}
	if got := written.Load(); got > 16<<20 {
		t.Fatalf("stalled connection buffered %d MiB; buffers are not bounded", got>>20)
	}
}

// TestDrain: a draining agent gets no new connections, and its open
// connections keep working until they finish.
func TestDrain(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p, serverOpts{})
	backend := echoBackend(t, "127.0.0.1")
	tag := func(node string) agentOpts {
		return agentOpts{node: node, server: s.agentAddr, defaultRoute: true, allow: []string{"127.0.0.0/8"},
			dial: taggedDial(node, backend)}
	}
	a1 := startAgent(t, p, tag("edge-1"))
	startAgent(t, p, tag("edge-2"))
	eventually(t, 5*time.Second, "two agents", func() bool { return s.AgentCount() == 2 })

	// Find a destination edge-1 carries and keep that connection open.
	var open net.Conn
	for i := 1; i < 50 && open == nil; i++ {
		c, err := connectUDS(t, s, "127.0.50."+strconv.Itoa(i)+":7")
		if err != nil {
			t.Fatal(err)
		}
		if readTag(t, c) == "edge-1" {
			open = c
		}
	}
	if open == nil {
		t.Fatal("edge-1 never chosen for 50 destinations")
	}
	a1.Drain()
	eventually(t, 2*time.Second, "the server to see the drain", func() bool {
		c, err := connectUDS(t, s, "127.0.50.1:7")
		return err == nil && readTag(t, c) == "edge-2"
	})
	for i := 1; i < 50; i++ {
		c, err := connectUDS(t, s, "127.0.50."+strconv.Itoa(i)+":7")
		if err != nil {
			t.Fatal(err)
		}
		if got := readTag(t, c); got != "edge-2" {
			t.Fatalf("new connection went to draining %s", got)
		}
	}
	echo(t, open, "still flowing through the draining agent")
	stopped := make(chan struct{})
	go func() { a1.stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("draining agent exited while a connection was open")
	case <-time.After(300 * time.Millisecond):
	}
	echo(t, open, "and still")
	open.Close()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("agent did not exit after its last connection closed")
	}
}

func taggedDial(node, backend string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, backend)
		if err == nil {
			_, err = c.Write([]byte(node + "\n"))
		}
		return c, err
	}
}

func readTag(t testing.TB, c net.Conn) string {
	t.Helper()
	buf := make([]byte, 7) // "edge-N\n"
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatalf("read tag: %v", err)
	}
	return strings.TrimSpace(string(buf))
}

// TestCertificatesRejected: a certificate from another CA fails the TLS
// handshake, and a valid certificate for another node cannot register.
func TestCertificatesRejected(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p, serverOpts{})
	otherCA, err := tunneltest.NewCA("rogue")
	if err != nil {
		t.Fatal(err)
	}
	rogue, _ := otherCA.Issue("system:node:edge-1", false, nil, nil, time.Hour)
	wrongNode, _ := p.AgentCert("edge-2")
	notNode, _ := p.AgentCA.Issue("admin", false, nil, nil, time.Hour)
	for _, tc := range []struct {
		name string
		cert *tunneltest.Leaf
	}{
		{"certificate from another CA", rogue},
		{"certificate for another node", wrongNode},
		{"certificate that is not a node's", notNode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := startAgent(t, p, agentOpts{node: "edge-1", server: s.agentAddr, defaultRoute: true, cert: tc.cert})
			time.Sleep(500 * time.Millisecond)
			if n := s.AgentCount(); n != 0 || a.Ready() {
				t.Fatalf("agent registered (%d links) with a bad certificate", n)
			}
		})
	}
}

// TestCompressionOverConnect measures bytes on the tunnel for a 10 MB
// log-like stream fetched through CONNECT, for each mode chosen per
// connection by header.
func TestCompressionOverConnect(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p, serverOpts{})
	a := startAgent(t, p, agentOpts{node: "edge", server: s.agentAddr, nodeIPs: []string{"127.0.0.1"}})
	eventually(t, 5*time.Second, "agent ready", a.Ready)
	size := 10 << 20
	if testing.Short() {
		size = 2 << 20
	}
	payload := tunneltest.LogLines(size)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	t.Cleanup(tunneltest.SinkSource(ln, payload))
	for _, tc := range []struct {
		mode     wire.Compression
		maxRatio float64
	}{{wire.CompressionNone, 1.0}, {wire.CompressionGzip, 0.4}, {wire.CompressionZstd, 0.4}} {
		t.Run(string(tc.mode), func(t *testing.T) {
			raw0, wire0 := bytesIn(t, s.reg, "raw"), bytesIn(t, s.reg, "wire")
			c, err := net.Dial("unix", s.uds)
			if err != nil {
				t.Fatal(err)
			}
			tc2, err := tunneltest.Connect(c, ln.Addr().String(), http.Header{"Causeway-Tunnel-Compression": {string(tc.mode)}})
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, tc2)
			tc2.Close()
			if err != nil || n != int64(len(payload)) {
				t.Fatalf("got %d bytes, %v; want %d", n, err, len(payload))
			}
			raw, wireB := bytesIn(t, s.reg, "raw")-raw0, bytesIn(t, s.reg, "wire")-wire0
			ratio := wireB / raw
			t.Logf("%s: raw %.0f B, on the wire %.0f B: %.1f%% fewer bytes", tc.mode, raw, wireB, 100*(1-ratio))
			if ratio > tc.maxRatio+0.001 {
				t.Fatalf("ratio %.3f above %.2f", ratio, tc.maxRatio)
			}
		})
	}
}

// TestConnectTCPMutualTLS: the TCP CONNECT frontend requires a client
// certificate from the frontend CA.
func TestConnectTCPMutualTLS(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p, serverOpts{})
	a := startAgent(t, p, agentOpts{node: "edge", server: s.agentAddr, nodeIPs: []string{"127.0.0.1"}})
	eventually(t, 5*time.Second, "agent ready", a.Ready)
	backend := echoBackend(t, "127.0.0.1")
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{p.Server.TLS},
		ClientCAs: p.FrontendCA.Pool(), ClientAuth: tls.RequireAndVerifyClientCert})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go server.ServeConnect(ctx, ln, &server.ConnectFrontend{Server: s.Server, Name: "connect-tcp", Compression: wire.CompressionZstd})
	dial := func(certs []tls.Certificate) (net.Conn, error) {
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: p.ServerCA.Pool(),
			ServerName: "causeway-tunnel", Certificates: certs})
		if err != nil {
			return nil, err
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		return tunneltest.Connect(c, backend, nil)
	}
	c, err := dial([]tls.Certificate{p.FrontendClient.TLS})
	if err != nil {
		t.Fatal(err)
	}
	echo(t, c, "over mutual TLS")
	c.Close()
	if _, err := dial(nil); err == nil {
		t.Fatal("CONNECT without a client certificate succeeded")
	}
}

func bytesIn(t testing.TB, reg *prometheus.Registry, stage string) float64 {
	t.Helper()
	return metricValue(t, reg, "causeway_tunnel_server_bytes_total", map[string]string{"direction": "in", "stage": stage})
}

// metricValue finds a counter or gauge by name and labels; 0 if absent.
func metricValue(t testing.TB, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if matches(m, labels) {
				if m.Counter != nil {
					return m.Counter.GetValue()
				}
				return m.Gauge.GetValue()
			}
		}
	}
	return 0
}

func matches(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, lp := range m.GetLabel() {
		if v, ok := labels[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}
