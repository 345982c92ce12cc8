package loopback

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
)

func TestConnectRoundTrip(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p, serverOpts{})
	backend := echoBackend(t, "127.0.0.1")
	a := startAgent(t, p, agentOpts{node: "edge-1", server: s.agentAddr, nodeIPs: []string{"127.0.0.1"}})
	eventually(t, 5*time.Second, "agent ready", a.Ready)
	c, err := connectUDS(t, s, backend)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		echo(t, c, "hello through the tunnel")
	}
}

// TestRouting registers agents by node IP, CIDR, host name and default
// route on distinct loopback addresses; each backend only answers with its
// own name, so the test sees which agent carried the connection.
func TestRouting(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p, serverOpts{})
	// Each agent may dial all of loopback, so only routing decides.
	loop := []string{"127.0.0.0/8"}
	backend := echoBackend(t, "127.0.0.1")
	_, port, _ := net.SplitHostPort(backend)
	tagged := taggedDialer(backend)
	agents := []agentOpts{
		{node: "by-ip", nodeIPs: []string{"127.0.10.1"}},
		{node: "by-cidr", cidrs: []string{"127.0.20.0/24"}},
		{node: "by-name", hostNames: []string{"edge-name.local"}},
		{node: "by-default", defaultRoute: true},
	}
	for _, o := range agents {
		o.server, o.allow, o.dial, o.resolve = s.agentAddr, loop, tagged(o.node), resolveTo127
		startAgent(t, p, o)
	}
	eventually(t, 5*time.Second, "four agents", func() bool { return s.AgentCount() == 4 })
	for _, tc := range []struct {
		name, host, wantNode string
	}{
		{"node IP", "127.0.10.1", "by-ip"},
		{"CIDR", "127.0.20.9", "by-cidr"},
		{"host name", "edge-name.local", "by-name"},
		{"default route", "127.0.30.1", "by-default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest := net.JoinHostPort(tc.host, port)
			c, err := connectUDS(t, s, dest)
			if err != nil {
				t.Fatal(err)
			}
			expectCarrier(t, c, tc.wantNode)
		})
	}
}

// TestErrors checks the precise CONNECT errors: 502 with a reason when no
// agent owns the destination, 504 when the agent's dial times out, 403
// when the agent's allow list refuses it, 502 when the backend refuses.
// resolveTo127 resolves every name to 127.0.0.1 without asking DNS.
func resolveTo127(context.Context, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

func TestErrors(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p, serverOpts{dialTimeout: 300 * time.Millisecond})
	blackhole := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == "127.0.0.2:9" {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	a := startAgent(t, p, agentOpts{node: "edge-1", server: s.agentAddr, nodeIPs: []string{"127.0.0.2"},
		cidrs: []string{"127.0.40.0/24"}, allow: []string{"127.0.0.2/32"}, dial: blackhole})
	eventually(t, 5*time.Second, "agent ready", a.Ready)
	closed, _ := net.Listen("tcp", "127.0.0.2:0")
	closedAddr := closed.Addr().String()
	closed.Close()
	for _, tc := range []struct {
		name   string
		addr   string
		status int
		code   string
	}{
		{"no agent owns it", "192.0.2.1:80", http.StatusBadGateway, "noAgent"},
		{"agent dial times out", "127.0.0.2:9", http.StatusGatewayTimeout, "timeout"},
		{"outside the allow list", "127.0.40.7:80", http.StatusForbidden, "refused"},
		{"backend refuses", closedAddr, http.StatusBadGateway, "failed"},
		{"malformed address", "no-port", http.StatusBadRequest, "badRequest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := connectUDS(t, s, tc.addr)
			var ce *tunneltest.ConnectError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a refused CONNECT", err)
			}
			if ce.Status != tc.status || ce.Code != tc.code {
				t.Fatalf("got %d %s (%s), want %d %s", ce.Status, ce.Code, ce.Body, tc.status, tc.code)
			}
			t.Logf("%d %s", ce.Status, ce.Body)
		})
	}
}

// TestReadyMeansRouted: an agent reports ready only once the server routes
// to it. The agent commits a link with Ready and the server lists it a
// moment later; readiness waits for the server's ControlRouted, so a
// connection made as soon as the agent is ready finds it. The test polls
// as tightly as it can over fresh links, where the window, if it were
// open, is hit.
func TestReadyMeansRouted(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p, serverOpts{})
	for i := range 30 {
		a := startAgent(t, p, agentOpts{node: "edge-1", server: s.agentAddr, nodeIPs: []string{"127.0.0.1"}})
		deadline := time.Now().Add(5 * time.Second)
		for !a.Ready() {
			if time.Now().After(deadline) {
				t.Fatalf("link %d: agent not ready within 5 s", i)
			}
			runtime.Gosched()
		}
		if n := s.AgentCount(); n != 1 {
			t.Fatalf("link %d: agent ready while the server lists %d links", i, n)
		}
		a.stop()
		eventually(t, 5*time.Second, "link gone", func() bool { return s.AgentCount() == 0 })
	}
}
