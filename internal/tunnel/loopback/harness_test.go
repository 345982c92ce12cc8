package loopback

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/causeway/causeway/internal/tunnel/agent"
	"github.com/causeway/causeway/internal/tunnel/metrics"
	"github.com/causeway/causeway/internal/tunnel/server"
	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	"github.com/causeway/causeway/internal/tunnel/wire"
)

// fastTransport notices dead peers within about a second.
var fastTransport = wire.TransportConfig{KeepAliveInterval: 300 * time.Millisecond, KeepAliveTimeout: 700 * time.Millisecond}

func logger(t testing.TB) *slog.Logger {
	if os.Getenv("TUNNEL_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func newPKI(t testing.TB) *tunneltest.PKI {
	t.Helper()
	p, err := tunneltest.NewPKI()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// srv is a running server replica with a CONNECT frontend on a unix socket.
type srv struct {
	*server.Server
	agentAddr string
	uds       string
	reg       *prometheus.Registry
	cancel    context.CancelFunc
	done      chan struct{}
}

type serverOpts struct {
	id          string
	count       int
	agentLn     net.Listener // nil: a new loopback port
	compression wire.Compression
	dialTimeout time.Duration
	tls         *tls.Config       // nil: p's server certificate, p's agent CA
	log         *slog.Logger      // nil: logger(t)
	authz       server.Authorizer // nil: CertNodeAuthorizer, unless defaultAuthz
	// defaultAuthz leaves Config.Authorizer nil: the server's own secure
	// default.
	defaultAuthz bool
}

func startServer(t testing.TB, p *tunneltest.PKI, o serverOpts) *srv {
	t.Helper()
	if o.id == "" {
		o.id = "s1"
	}
	if o.count == 0 {
		o.count = 1
	}
	if o.compression == "" {
		o.compression = wire.CompressionZstd
	}
	reg := prometheus.NewRegistry()
	tlsCfg := o.tls
	if tlsCfg == nil {
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{p.Server.TLS}, ClientCAs: p.AgentCA.Pool(),
			ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	}
	if o.log == nil {
		o.log = logger(t)
	}
	if o.authz == nil && !o.defaultAuthz {
		// Most tests are about the transport, not authorization: accept
		// any claim of the certificate's node, as they always did.
		o.authz = server.CertNodeAuthorizer{}
	}
	s, err := server.New(server.Config{Authorizer: o.authz, ServerID: o.id, ServerCount: o.count, TLS: tlsCfg, Transport: fastTransport,
		DialTimeout: o.dialTimeout, Logger: o.log.With("side", "server"), Metrics: metrics.New(reg, "server")})
	if err != nil {
		t.Fatal(err)
	}
	ln := o.agentLn
	if ln == nil {
		if ln, err = tunneltest.ListenLoopback(); err != nil {
			t.Fatal(err)
		}
	}
	uds := filepath.Join(shortTempDir(t), "connect.sock")
	uln, err := net.Listen("unix", uds)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &srv{Server: s, agentAddr: ln.Addr().String(), uds: uds, reg: reg, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		go server.ServeConnect(ctx, uln, &server.ConnectFrontend{Server: s, Name: "connect-uds", Compression: o.compression})
		s.ServeAgents(ctx, ln)
	}()
	t.Cleanup(r.stop)
	return r
}

func (r *srv) stop() {
	r.cancel()
	<-r.done
}

// shortTempDir keeps unix socket paths under the 108-byte limit.
func shortTempDir(t testing.TB) string {
	d, err := os.MkdirTemp("", "cwt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

type agt struct {
	*agent.Agent
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan struct{}
}

type agentOpts struct {
	node         string
	server       string
	nodeIPs      []string
	cidrs        []string
	hostNames    []string
	defaultRoute bool
	allow        []string
	cert         *tunneltest.Leaf // nil: a valid cert for node
	dial         func(ctx context.Context, network, address string) (net.Conn, error)
	resolve      func(ctx context.Context, host string) ([]netip.Addr, error)
	compression  []wire.Compression
	tls          *tls.Config  // nil: built from cert
	log          *slog.Logger // nil: logger(t)
}

func startAgent(t testing.TB, p *tunneltest.PKI, o agentOpts) *agt {
	t.Helper()
	if o.tls == nil {
		cert := o.cert
		if cert == nil {
			var err error
			if cert, err = p.AgentCert(o.node); err != nil {
				t.Fatal(err)
			}
		}
		o.tls = &tls.Config{Certificates: []tls.Certificate{cert.TLS}, RootCAs: p.ServerCA.Pool(),
			ServerName: "causeway-tunnel", MinVersion: tls.VersionTLS12}
	}
	if o.log == nil {
		o.log = logger(t)
	}
	reg := prometheus.NewRegistry()
	cfg := agent.Config{
		ServerAddress: o.server, NodeName: o.node, HostNames: o.hostNames, DefaultRoute: o.defaultRoute,
		TLS:       o.tls,
		Transport: fastTransport, MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond,
		DrainTimeout: 5 * time.Second, Dial: o.dial, Resolve: o.resolve, Compression: o.compression,
		Logger: o.log.With("side", "agent", "node", o.node), Metrics: metrics.New(reg, "agent"),
	}
	for _, s := range o.nodeIPs {
		cfg.NodeIPs = append(cfg.NodeIPs, netip.MustParseAddr(s))
	}
	for _, s := range o.cidrs {
		cfg.CIDRs = append(cfg.CIDRs, netip.MustParsePrefix(s))
	}
	for _, s := range o.allow {
		cfg.Allow = append(cfg.Allow, netip.MustParsePrefix(s))
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &agt{Agent: a, reg: reg, cancel: cancel, done: make(chan struct{})}
	go func() { defer close(r.done); a.Run(ctx) }()
	t.Cleanup(r.stop)
	return r
}

func (r *agt) stop() {
	r.cancel()
	<-r.done
}

// taggedDialer returns, per node, an agent dialer that sends every allowed
// destination to the one echo backend and first writes the node's name, so
// the client learns which agent carried its connection (expectCarrier).
func taggedDialer(backend string) func(node string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(node string) func(ctx context.Context, network, addr string) (net.Conn, error) {
		return func(ctx context.Context, network, _ string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, backend)
			if err == nil {
				_, err = c.Write([]byte(node + "\n"))
			}
			return c, err
		}
	}
}

// expectCarrier fails t unless c was carried by node's agent.
func expectCarrier(t testing.TB, c net.Conn, node string) {
	t.Helper()
	buf := make([]byte, len(node)+1)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != node+"\n" {
		t.Fatalf("carried by %q, %v; want %s", buf, err, node)
	}
}

// eventually polls cond every 10ms until it holds or d passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < d {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", d, what)
	return 0
}

// connectUDS opens a tunneled connection through s's unix CONNECT socket.
func connectUDS(t testing.TB, s *srv, addr string) (net.Conn, error) {
	t.Helper()
	c, err := net.Dial("unix", s.uds)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	tc, err := tunneltest.Connect(c, addr, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	t.Cleanup(func() { tc.Close() })
	return tc, nil
}

// echo sends msg over c and expects it back.
func echo(t testing.TB, c net.Conn, msg string) {
	t.Helper()
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatalf("write: %v", err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != msg {
		t.Fatalf("echo read %q, %v; want %q", buf, err, msg)
	}
}

// echoBackend starts an echo server on 127.0.0.x (x≥1) and returns its
// address.
func echoBackend(t testing.TB, ip string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tunneltest.EchoServer(ln))
	return ln.Addr().String()
}
