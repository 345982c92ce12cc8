package loopback

import (
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// roundRobin is the "load balancer" in front of server replicas: each new
// connection goes to the next backend in turn.
type roundRobin struct {
	ln       net.Listener
	backends []string
	next     atomic.Uint64
	wg       sync.WaitGroup
}

func startRoundRobin(t testing.TB, backends ...string) *roundRobin {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rr := &roundRobin{ln: ln, backends: backends}
	rr.wg.Add(1)
	go func() {
		defer rr.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b := rr.backends[int(rr.next.Add(1)-1)%len(rr.backends)]
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", b)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { io.Copy(u, c); u.(*net.TCPConn).CloseWrite() }()
				io.Copy(c, u)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); rr.wg.Wait() })
	return rr
}

// TestThreeReplicas puts three servers behind a round-robin proxy: every
// agent must end up linked to all three, so a client of any replica reaches
// any agent.
func TestThreeReplicas(t *testing.T) {
	p := newPKI(t)
	var servers []*srv
	var addrs []string
	for _, id := range []string{"s1", "s2", "s3"} {
		s := startServer(t, p, serverOpts{id: id, count: 3})
		servers = append(servers, s)
		addrs = append(addrs, s.agentAddr)
	}
	lb := startRoundRobin(t, addrs...)
	backend := echoBackend(t, "127.0.0.1")
	var agents []*agt
	for _, n := range []string{"edge-a", "edge-b"} {
		agents = append(agents, startAgent(t, p, agentOpts{node: n, server: lb.ln.Addr().String(),
			defaultRoute: true, allow: []string{"127.0.0.0/8"}}))
	}
	took := eventually(t, 10*time.Second, "every agent linked to every replica", func() bool {
		for _, s := range servers {
			if s.AgentCount() != len(agents) {
				return false
			}
		}
		return true
	})
	t.Logf("2 agents linked to 3 replicas in %s", took)
	for _, a := range agents {
		ids := a.ServerIDs()
		sort.Strings(ids)
		if strings.Join(ids, ",") != "s1,s2,s3" {
			t.Errorf("agent holds %v, want s1,s2,s3 exactly once each", ids)
		}
	}
	for _, s := range servers {
		c, err := connectUDS(t, s, backend)
		if err != nil {
			t.Fatalf("through %s: %v", s.Table().Destinations(), err)
		}
		echo(t, c, "via every replica")
	}
}

// TestServerCountChange restarts a lone replica with a larger count and a
// second replica appears: the agent notices and links to both.
func TestServerCountChange(t *testing.T) {
	p := newPKI(t)
	s1 := startServer(t, p, serverOpts{id: "s1", count: 1})
	s2 := startServer(t, p, serverOpts{id: "s2", count: 2})
	lb := startRoundRobin(t, s1.agentAddr, s2.agentAddr)
	a := startAgent(t, p, agentOpts{node: "edge", server: lb.ln.Addr().String(), defaultRoute: true})
	// The first link decides: with count 1 from s1 the agent is satisfied,
	// with count 2 from s2 it dials again and gets s1 too.
	eventually(t, 5*time.Second, "one link", func() bool { return len(a.ServerIDs()) >= 1 })
	s1.SetServerCount(2)
	eventually(t, 5*time.Second, "links to both replicas", func() bool { return len(a.ServerIDs()) == 2 })
}

// TestReconnect kills the server and starts it again on the same port,
// then does the same to the agent; both links must be back within 2 s.
func TestReconnect(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p, serverOpts{})
	addr := s.agentAddr
	a := startAgent(t, p, agentOpts{node: "edge", server: addr, defaultRoute: true})
	eventually(t, 5*time.Second, "first link", a.Ready)

	s.stop()
	eventually(t, 3*time.Second, "agent notices the dead server", func() bool { return !a.Ready() })
	time.Sleep(700 * time.Millisecond) // let the agent's backoff grow
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	s2 := startServer(t, p, serverOpts{agentLn: ln})
	eventually(t, 2*time.Second, "agent relinks to the restarted server", func() bool { return s2.AgentCount() == 1 })
	t.Logf("server restart → agent linked: %s", time.Since(restarted))

	a.stop()
	eventually(t, 2*time.Second, "server notices the agent left", func() bool { return s2.AgentCount() == 0 })
	restarted = time.Now()
	startAgent(t, p, agentOpts{node: "edge", server: addr, defaultRoute: true})
	eventually(t, 2*time.Second, "restarted agent linked", func() bool { return s2.AgentCount() == 1 })
	t.Logf("agent restart → linked: %s", time.Since(restarted))
}

// TestDeadPeerDetected freezes the network path (the proxy stops moving
// bytes without closing anything): keepalives must tear the link down on
// both sides within seconds.
func TestDeadPeerDetected(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p, serverOpts{})
	fz := startFreezer(t, s.agentAddr)
	a := startAgent(t, p, agentOpts{node: "edge", server: fz.addr(), defaultRoute: true})
	eventually(t, 5*time.Second, "link", func() bool { return s.AgentCount() == 1 && a.Ready() })
	fz.freeze()
	start := time.Now()
	eventually(t, 5*time.Second, "both sides drop the frozen link", func() bool {
		return s.AgentCount() == 0 && !a.Ready()
	})
	t.Logf("frozen link detected on both sides in %s", time.Since(start))
}

// freezer is a TCP proxy that can stop forwarding without closing.
type freezer struct {
	ln     net.Listener
	frozen atomic.Bool
}

func startFreezer(t testing.TB, target string) *freezer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, u)
			mu.Unlock()
			go f.pipe(u, c)
			go f.pipe(c, u)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		f.frozen.Store(false)
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return f
}

func (f *freezer) addr() string { return f.ln.Addr().String() }
func (f *freezer) freeze()      { f.frozen.Store(true) }

func (f *freezer) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		for f.frozen.Load() {
			time.Sleep(50 * time.Millisecond) // hold the bytes, like a dead path
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}
