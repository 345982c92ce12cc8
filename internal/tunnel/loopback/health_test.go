package loopback

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/tunnel/metrics"
	"github.com/causeway/causeway/internal/tunnel/tunneltest"
)

// probe sends GET path to h and returns the status and body.
func probe(h http.Handler, path string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// TestHealthEndpoints drives the handler both commands serve on
// --health-bind-address, wired as they wire it, with a real server and
// agent. /healthz always answers. The agent's /readyz follows its links: it
// is ready once it holds a link to every replica the servers report, not
// before and not after losing one. The server's follows its flag, which the
// command sets once its listeners are up. /metrics exposes each side's
// collectors.
func TestHealthEndpoints(t *testing.T) {
	p := newPKI(t)
	ln, err := tunneltest.ListenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the agent starts before any server listens here

	a := startAgent(t, p, agentOpts{node: "edge", server: addr, nodeIPs: []string{"127.0.0.1"}})
	ah := metrics.Handler(a.reg, a.Ready)
	expect := func(h http.Handler, path string, code int, body string) {
		t.Helper()
		got, b := probe(h, path)
		if got != code || !strings.Contains(b, body) {
			t.Fatalf("GET %s = %d %q, want %d containing %q", path, got, b, code, body)
		}
	}
	expect(ah, "/healthz", http.StatusOK, "ok")
	expect(ah, "/readyz", http.StatusServiceUnavailable, "not ready")

	if ln, err = net.Listen("tcp", addr); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, p, serverOpts{count: 2, agentLn: ln})
	eventually(t, 5*time.Second, "link", func() bool { return s.AgentCount() == 1 })
	// One link, but the server reports two replicas.
	expect(ah, "/readyz", http.StatusServiceUnavailable, "not ready")
	expect(ah, "/metrics", http.StatusOK, "causeway_tunnel_agent_links 1")
	s.SetServerCount(1)
	eventually(t, 5*time.Second, "agent ready with a link to the only replica", a.Ready)
	expect(ah, "/readyz", http.StatusOK, "ok")

	var ready metrics.Flag
	sh := metrics.Handler(s.reg, ready.Get)
	expect(sh, "/healthz", http.StatusOK, "ok")
	expect(sh, "/readyz", http.StatusServiceUnavailable, "not ready")
	ready.Set(true)
	expect(sh, "/readyz", http.StatusOK, "ok")
	c, err := connectUDS(t, s, echoBackend(t, "127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	echo(t, c, "counted")
	expect(sh, "/metrics", http.StatusOK, `causeway_tunnel_server_links{server_id="s1"} 1`)
	expect(sh, "/metrics", http.StatusOK, `causeway_tunnel_server_dials_total{frontend="connect-uds",result="ok"} 1`)
	expect(ah, "/metrics", http.StatusOK, `causeway_tunnel_agent_dials_total{frontend="connect-uds",result="ok"} 1`)

	s.stop()
	eventually(t, 3*time.Second, "agent not ready without its link", func() bool {
		code, _ := probe(ah, "/readyz")
		return code == http.StatusServiceUnavailable
	})
	expect(ah, "/healthz", http.StatusOK, "ok")
}
