package loopback

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/tunnel/agent"
	"github.com/causeway/causeway/internal/tunnel/metrics"
	"github.com/causeway/causeway/internal/tunnel/server"
	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	"github.com/causeway/causeway/internal/tunnel/wire"
)

// siteA is granted a /24 by --route-allow; siteB lists all 254 of its
// addresses as node IPs.
const siteA = "site-a=127.0.20.0/24"

func hijackAddrs() []string {
	var out []string
	for i := 1; i <= 254; i++ {
		out = append(out, fmt.Sprintf("127.0.20.%d", i))
	}
	return out
}

func mustRule(t *testing.T, s string) server.RouteRules {
	t.Helper()
	r, err := server.ParseRouteRule(s)
	if err != nil {
		t.Fatal(err)
	}
	return server.RouteRules{r}
}

// TestHijackRefused: with the policy the server builds from default flags
// (no API), agent B listing the 254 addresses of agent A's granted /24 is
// refused, says why on both sides, and takes none of them.
func TestHijackRefused(t *testing.T) {
	p := newPKI(t)
	var slog, blog logBuffer
	s := startServer(t, p, serverOpts{log: slog.logger(), authz: server.Policy{Routes: mustRule(t, siteA)}})
	backend := echoBackend(t, "127.0.0.1")
	_, port, _ := net.SplitHostPort(backend)
	tagged := taggedDialer(backend)
	startAgent(t, p, agentOpts{node: "site-a", server: s.agentAddr, cidrs: []string{"127.0.20.0/24"}, dial: tagged("site-a")})
	startAgent(t, p, agentOpts{node: "site-b", server: s.agentAddr, nodeIPs: hijackAddrs(), dial: tagged("site-b"), log: blog.logger()})

	const why = `node IP 127.0.20.1 is not among node \"site-b\"'s addresses`
	eventually(t, 5*time.Second, "the refusal on both sides", func() bool {
		return slog.contains(`agent registration refused`) && slog.contains(`node=site-b`) && slog.contains(why) &&
			blog.contains("refused registration: "+why)
	})
	eventually(t, 5*time.Second, "site-a", func() bool { return s.AgentCount() == 1 })
	for _, ip := range hijackAddrs() {
		if a, m, err := s.Table().Lookup(ip); err != nil || a.Node != "site-a" {
			t.Fatalf("%s routes to %s (%s, %v), want site-a", ip, a.Node, m, err)
		}
	}
	for _, ip := range []string{"127.0.20.1", "127.0.20.99", "127.0.20.254"} {
		c, err := connectUDS(t, s, net.JoinHostPort(ip, port))
		if err != nil {
			t.Fatal(err)
		}
		expectCarrier(t, c, "site-a")
	}
}

// TestHijackShadowed: even when node addresses are not checked
// (--insecure-accept-any-node-address), B's node-IP claims do not override
// A's granted CIDR. B registers, but every address stays with A, and the
// conflicts are logged once and counted.
func TestHijackShadowed(t *testing.T) {
	p := newPKI(t)
	var logs logBuffer
	s := startServer(t, p, serverOpts{log: logs.logger(),
		authz: server.Policy{Routes: mustRule(t, siteA), InsecureAcceptAnyNodeAddress: true}})
	backend := echoBackend(t, "127.0.0.1")
	_, port, _ := net.SplitHostPort(backend)
	tagged := taggedDialer(backend)
	// B first, so its claims are live until A's CIDR arrives.
	startAgent(t, p, agentOpts{node: "site-b", server: s.agentAddr, nodeIPs: hijackAddrs(), dial: tagged("site-b")})
	eventually(t, 5*time.Second, "site-b", func() bool { return s.AgentCount() == 1 })
	startAgent(t, p, agentOpts{node: "site-a", server: s.agentAddr, cidrs: []string{"127.0.20.0/24"}, dial: tagged("site-a")})
	eventually(t, 5*time.Second, "both agents", func() bool { return s.AgentCount() == 2 })

	for _, ip := range hijackAddrs() {
		if a, m, err := s.Table().Lookup(ip); err != nil || a.Node != "site-a" {
			t.Fatalf("%s routes to %s (%s, %v), want site-a", ip, a.Node, m, err)
		}
	}
	for _, ip := range []string{"127.0.20.1", "127.0.20.254"} {
		c, err := connectUDS(t, s, net.JoinHostPort(ip, port))
		if err != nil {
			t.Fatal(err)
		}
		expectCarrier(t, c, "site-a")
	}
	if !logs.contains("node IP claims ignored: another agent's CIDR owns the addresses") || !logs.contains("node=site-b") ||
		!logs.contains("count=254") || !logs.contains("cidr=127.0.20.0/24") {
		t.Error("the conflict is not logged")
	}
	// A later rebuild (a third agent) counts nothing again.
	startAgent(t, p, agentOpts{node: "site-c", server: s.agentAddr})
	eventually(t, 5*time.Second, "site-c", func() bool { return s.AgentCount() == 3 })
	if _, body := probe(metricsHandler(s), "/metrics"); !strings.Contains(body, "causeway_tunnel_server_route_conflicts_total 254") {
		t.Errorf("conflict counter:\n%s", grep(body, "route_conflicts"))
	}
}

// TestSecureDefault: a server with no Authorizer configured accepts only
// what the agent's certificate names. Another node's IP, the cloud
// metadata address, kubernetes.default.svc and an ungranted CIDR are each
// refused, with the node and the reason in the server's log and in the
// agent's.
func TestSecureDefault(t *testing.T) {
	p := newPKI(t)
	var logs logBuffer
	s := startServer(t, p, serverOpts{log: logs.logger(), defaultAuthz: true})
	backend := echoBackend(t, "127.0.0.1")
	_, port, _ := net.SplitHostPort(backend)
	tagged := taggedDialer(backend)

	leaf, err := p.AgentCA.Issue("system:node:edge-1", false, []net.IP{net.ParseIP("127.0.30.1")}, []string{"edge-1.site.example"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	startAgent(t, p, agentOpts{node: "edge-1", server: s.agentAddr, cert: leaf, dial: tagged("edge-1"),
		nodeIPs: []string{"127.0.30.1"}, hostNames: []string{"edge-1", "edge-1.site.example"},
		resolve: func(_ context.Context, _ string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.30.1")}, nil
		}})
	for _, tc := range []struct {
		o   agentOpts
		why string
	}{
		{agentOpts{node: "edge-2", nodeIPs: []string{"127.0.30.1"}}, `node IP 127.0.30.1 is not among node "edge-2"'s addresses`},
		{agentOpts{node: "edge-3", nodeIPs: []string{"169.254.169.254"}}, `node IP 169.254.169.254 is not among node "edge-3"'s addresses`},
		{agentOpts{node: "edge-4", hostNames: []string{"kubernetes.default.svc"}}, `host name "kubernetes.default.svc" is not among node "edge-4"'s names`},
		{agentOpts{node: "edge-5", cidrs: []string{"127.0.40.0/24"}}, `CIDR 127.0.40.0/24 is not allowed for node "edge-5"`},
	} {
		var alog logBuffer
		tc.o.server, tc.o.dial, tc.o.log = s.agentAddr, tagged(tc.o.node), alog.logger()
		startAgent(t, p, tc.o)
		esc := strings.ReplaceAll(tc.why, `"`, `\"`)
		eventually(t, 5*time.Second, tc.o.node+" refused on both sides", func() bool {
			return logs.contains("agent registration refused") && logs.contains("node="+tc.o.node) && logs.contains(esc) &&
				alog.contains("refused registration: "+esc)
		})
	}
	eventually(t, 5*time.Second, "edge-1 alone", func() bool { return s.AgentCount() == 1 })
	for _, host := range []string{"127.0.30.1", "edge-1.site.example", "edge-1"} {
		c, err := connectUDS(t, s, net.JoinHostPort(host, port))
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		expectCarrier(t, c, "edge-1")
	}
	for _, host := range []string{"169.254.169.254", "kubernetes.default.svc", "127.0.40.1"} {
		if _, err := connectUDS(t, s, net.JoinHostPort(host, port)); err == nil || !strings.Contains(err.Error(), "noAgent") {
			t.Errorf("CONNECT %s: %v, want noAgent", host, err)
		}
	}
}

// TestRegistrationLimits: more than wire.MaxClaims claims, or a hello over
// wire.MaxHelloSize, are refused with a clear reason: the agent refuses to
// start, and a server answers an agent that sends them anyway.
func TestRegistrationLimits(t *testing.T) {
	p := newPKI(t)
	var logs logBuffer
	s := startServer(t, p, serverOpts{log: logs.logger(), defaultAuthz: true})

	var many []netip.Addr
	for i := range 257 {
		many = append(many, netip.AddrFrom4([4]byte{127, 1, byte(i >> 8), byte(i)}))
	}
	cfg := agent.Config{ServerAddress: s.agentAddr, TLS: &tls.Config{}, NodeName: "edge-1", NodeIPs: many}
	if _, err := agent.New(cfg); err == nil || !strings.Contains(err.Error(), "257 claims (257 node IPs, 0 host names, 0 CIDRs) exceed the limit of 256") {
		t.Errorf("agent.New with 257 claims: %v", err)
	}
	cfg.NodeIPs, cfg.HostNames = nil, []string{strings.Repeat("x", 70<<10)}
	if _, err := agent.New(cfg); err == nil || !strings.Contains(err.Error(), "exceeds the limit of 65536 bytes") {
		t.Errorf("agent.New with a 70 KiB hello: %v", err)
	}

	w := rawHello(t, p, s, "edge-1", func(w io.Writer) error {
		return wire.WriteFrame(w, wire.Hello{Version: wire.ProtocolVersion, NodeName: "edge-1", NodeIPs: many})
	})
	if !strings.Contains(w.Error, "257 claims") {
		t.Errorf("welcome for 257 claims: %+v", w)
	}
	w = rawHello(t, p, s, "edge-1", func(w io.Writer) error {
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], 1<<30)
		_, err := w.Write(append(hdr[:], `{"nodeName":"edge-1"`...))
		return err
	})
	if !strings.Contains(w.Error, "hello exceeds the limit of 65536 bytes") {
		t.Errorf("welcome for a 1 GiB hello: %+v", w)
	}
	for _, want := range []string{`node=edge-1 reason="257 claims`, `cert=system:node:edge-1 node="" reason="hello exceeds the limit`} {
		eventually(t, 5*time.Second, "server log: "+want, func() bool { return logs.contains(want) })
	}
	if s.AgentCount() != 0 {
		t.Error("an agent registered")
	}
}

// rawHello plays an agent that writes its own hello and returns the
// server's Welcome. Like the agent, it retries a link that failed before
// the answer: under load yamux may give up on a stream the server has not
// accepted yet.
func rawHello(t *testing.T, p *tunneltest.PKI, s *srv, node string, hello func(io.Writer) error) wire.Welcome {
	t.Helper()
	leaf, err := p.AgentCert(node)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{leaf.TLS}, RootCAs: p.ServerCA.Pool(),
		ServerName: "causeway-tunnel", MinVersion: tls.VersionTLS12}
	try := func() (wire.Welcome, error) {
		var w wire.Welcome
		conn, err := tls.Dial("tcp", s.agentAddr, cfg)
		if err != nil {
			return w, err
		}
		defer conn.Close()
		sess, err := wire.NewAgentSession(conn, fastTransport)
		if err != nil {
			return w, err
		}
		defer sess.Close()
		st, err := sess.OpenStream()
		if err != nil {
			return w, err
		}
		st.SetDeadline(time.Now().Add(5 * time.Second))
		if err := hello(st); err != nil {
			return w, err
		}
		return w, wire.ReadFrame(st, &w)
	}
	for i := 0; ; i++ {
		w, err := try()
		if err == nil {
			return w
		}
		if i == 9 {
			t.Fatalf("no welcome: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func metricsHandler(s *srv) http.Handler { return metrics.Handler(s.reg, nil) }

// grep returns the lines of s containing sub.
func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
