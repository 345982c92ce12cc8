package balancer_test

import (
	"github.com/causeway/causeway/internal/balancer"
	"slices"
	"syscall"
	"testing"
	"time"
)

// The upstream keepalive pool works with the Lua balancer (it only does
// when keepalive follows balancer_by_lua_block): 200 requests reach the
// backend over a handful of connections, not 200.
func TestUpstreamKeepalive(t *testing.T) {
	const key = "ns/ka/80"
	n := startNginx(t, nginxOptions{keys: []string{key}})
	a := startBackend(t, "127.0.0.2", "a")
	n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{a.endpoint()}}}})
	got := n.counts(t, n.url(0, "/"), 200, 2, nil)
	if got["a"] != 200 {
		t.Fatalf("%v", got)
	}
	// At most one connection per concurrent request per worker.
	if c := a.conns.Load(); c > 4 {
		t.Errorf("200 requests used %d upstream connections, want ≤ 4", c)
	}
}

// The state lives in shared memory, which nginx keeps across a reload:
// new workers serve the pushed endpoints without a new push.
func TestStateSurvivesReload(t *testing.T) {
	const key = "ns/a/80"
	n := startNginx(t, nginxOptions{keys: []string{key}})
	a := startBackend(t, "127.0.0.2", "a")
	n.replace(t, balancer.State{Generation: 5, Backends: []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{a.endpoint()}}}})
	old := n.workerPIDs()
	slices.Sort(old)
	if err := n.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// Wait for a new set of workers.
	deadline := time.Now().Add(10 * time.Second)
	for {
		cur := n.workerPIDs()
		if len(cur) >= 2 && !slices.ContainsFunc(cur, func(p int) bool { return slices.Contains(old, p) }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workers %v not replaced after reload", old)
		}
		time.Sleep(20 * time.Millisecond)
	}
	n.http.CloseIdleConnections() // old connections belong to old workers
	if gen, err := n.client.Generation(ctxT(t)); err != nil || gen != 5 {
		t.Errorf("after reload: generation %d, %v; want 5", gen, err)
	}
	got := n.counts(t, n.url(0, "/"), 20, 2, nil)
	if got["a"] != 20 {
		t.Errorf("after reload: %v, want all from a", got)
	}
}
