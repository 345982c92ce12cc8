package loopback

import (
	"net"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/tunnel/server"
)

// TestRoutePolicy runs the server with the policy `causeway tunnel server`
// builds from --route-allow: an agent may claim a CIDR inside its rule, and
// an agent claiming more (a wider CIDR, or the default route) is refused
// before it becomes routable, so the traffic it wanted never reaches it.
func TestRoutePolicy(t *testing.T) {
	p := newPKI(t)
	rule, err := server.ParseRouteRule("edge-*=127.0.20.0/24")
	if err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	s := startServer(t, p, serverOpts{log: logs.logger(),
		authz: server.Policy{Routes: server.RouteRules{rule}}})
	backend := echoBackend(t, "127.0.0.1")
	_, port, _ := net.SplitHostPort(backend)
	loop := []string{"127.0.0.0/8"}
	tagged := taggedDialer(backend)
	agents := []agentOpts{
		{node: "edge-ok", cidrs: []string{"127.0.20.0/25"}},
		{node: "edge-greedy", cidrs: []string{"127.0.0.0/8"}},
		{node: "edge-default", defaultRoute: true},
		{node: "other", cidrs: []string{"127.0.20.0/24"}},
	}
	for _, o := range agents {
		o.server, o.allow, o.dial = s.agentAddr, loop, tagged(o.node)
		startAgent(t, p, o)
	}
	for _, why := range []string{
		`CIDR 127.0.0.0/8 is not allowed for node \"edge-greedy\"`,
		`the default route is not allowed for node \"edge-default\"`,
		`CIDR 127.0.20.0/24 is not allowed for node \"other\"`,
	} {
		eventually(t, 5*time.Second, "refusal: "+why, func() bool {
			return logs.contains("agent registration refused") && logs.contains(why)
		})
	}
	eventually(t, 5*time.Second, "the allowed agent", func() bool { return s.AgentCount() == 1 })
	time.Sleep(300 * time.Millisecond) // the refused agents retry meanwhile
	if n := s.AgentCount(); n != 1 {
		t.Fatalf("%d agents registered, want only edge-ok", n)
	}

	c, err := connectUDS(t, s, net.JoinHostPort("127.0.20.9", port))
	if err != nil {
		t.Fatal(err)
	}
	expectCarrier(t, c, "edge-ok")
	// Only the refused CIDR or the refused default route would carry these.
	for _, host := range []string{"127.0.20.200", "127.0.30.1"} {
		if c, err := connectUDS(t, s, net.JoinHostPort(host, port)); err == nil {
			c.Close()
			t.Errorf("CONNECT to %s succeeded; no allowed route covers it", host)
		}
	}
}
