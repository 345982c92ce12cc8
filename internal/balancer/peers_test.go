package balancer_test

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/test/harness"
)

// closingEndpoint is an endpoint on ip whose every attempt fails, and
// the count of attempts on it.
func closingEndpoint(t *testing.T, ip string) (balancer.Endpoint, *atomic.Int64) {
	t.Helper()
	port, n := harness.ClosingListener(t, ip, 0)
	return balancer.Endpoint{Address: ip, Port: port, Ready: true}, n
}

// Passive health checks (max_fails, fail_timeout_ms): an endpoint whose
// attempts fail is skipped for the fail timeout once max_fails have
// failed, whatever the method; without max_fails it keeps being tried.
// One worker, so that the per-worker counts are exact.
func TestPassiveHealthChecks(t *testing.T) {
	const key = "ns/passive/80"
	const total = 40
	for _, tc := range []struct {
		name string
		b    balancer.Backend
		hdr  func(i int) map[string]string
		// wantAttempts bounds the attempts on the failing endpoint.
		minAttempts, maxAttempts int64
	}{
		{name: "no max_fails: tried again and again", b: balancer.Backend{}, minAttempts: total / 4, maxAttempts: total},
		{name: "round_robin, max_fails 1", b: balancer.Backend{MaxFails: 1, FailTimeoutMs: 60000}, minAttempts: 1, maxAttempts: 1},
		{name: "round_robin, max_fails 3", b: balancer.Backend{MaxFails: 3, FailTimeoutMs: 60000}, minAttempts: 3, maxAttempts: 3},
		{name: "least_conn", b: balancer.Backend{Method: balancer.LeastConn, MaxFails: 1, FailTimeoutMs: 60000}, minAttempts: 1, maxAttempts: 1},
		// ewma itself shuns a failing endpoint for a while (a failure
		// counts as a second of latency), so max_fails 2 may not be reached.
		{name: "ewma", b: balancer.Backend{Method: balancer.EWMA, MaxFails: 2, FailTimeoutMs: 60000}, minAttempts: 1, maxAttempts: 2},
		{name: "p2c", b: balancer.Backend{Method: balancer.P2C, MaxFails: 1, FailTimeoutMs: 60000}, minAttempts: 1, maxAttempts: 1},
		// chash would send every key that hashes to the failing endpoint
		// there first; the skip moves them on without an attempt.
		{name: "chash", b: balancer.Backend{Method: balancer.CHash, HashKey: "$http_x_user", MaxFails: 1, FailTimeoutMs: 60000},
			hdr: func(i int) map[string]string { return map[string]string{"X-User": strconv.Itoa(i)} }, minAttempts: 1, maxAttempts: 1},
		{name: "sticky", b: balancer.Backend{Method: balancer.Sticky, MaxFails: 1, FailTimeoutMs: 60000}, minAttempts: 1, maxAttempts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := startNginx(t, nginxOptions{keys: []string{key}, workers: 1})
			live := startBackend(t, "127.0.0.9", "live")
			bad, attempts := closingEndpoint(t, "127.0.0.2")
			b := tc.b
			b.Key = key
			b.Endpoints = []balancer.Endpoint{bad, live.endpoint()}
			n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{b}})
			got := n.counts(t, n.url(0, "/"), total, 1, tc.hdr)
			if got["live"] != total {
				t.Errorf("%d of %d requests served, want all (the retry moves on): %v", got["live"], total, got)
			}
			if a := attempts.Load(); a < tc.minAttempts || a > tc.maxAttempts {
				t.Errorf("%d attempts on the failing endpoint, want %d to %d", a, tc.minAttempts, tc.maxAttempts)
			}
		})
	}
}

// After the fail timeout the endpoint is tried again: one more failure
// takes it out again at once (the count is not cleared without a
// success), and a success clears the count.
func TestPassiveHealthCheckRecovers(t *testing.T) {
	const key = "ns/recover/80"
	n := startNginx(t, nginxOptions{keys: []string{key}, workers: 1})
	live := startBackend(t, "127.0.0.9", "live")
	bad, attempts := closingEndpoint(t, "127.0.0.2")
	b := balancer.Backend{Key: key, MaxFails: 2, FailTimeoutMs: 400, Endpoints: []balancer.Endpoint{bad, live.endpoint()}}
	n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{b}})
	if got := n.counts(t, n.url(0, "/"), 20, 1, nil); got["live"] != 20 {
		t.Fatalf("not every request served: %v", got)
	}
	if a := attempts.Load(); a != 2 {
		t.Fatalf("%d attempts, want 2 before the endpoint is out", a)
	}
	time.Sleep(600 * time.Millisecond)
	if got := n.counts(t, n.url(0, "/"), 20, 1, nil); got["live"] != 20 {
		t.Fatalf("not every request served: %v", got)
	}
	if a := attempts.Load(); a != 3 {
		t.Fatalf("%d attempts, want one more after the fail timeout (and out again after it)", a)
	}

	// The endpoint heals: the next try after the timeout succeeds and
	// it is back in rotation.
	healed := startBackend(t, "127.0.0.3", "healed")
	b.Endpoints = []balancer.Endpoint{healed.endpoint(), live.endpoint()}
	n.replace(t, balancer.State{Generation: 2, Backends: []balancer.Backend{b}})
	got := n.counts(t, n.url(0, "/"), 20, 1, nil)
	if got["healed"] == 0 || got["live"] == 0 {
		t.Errorf("a new endpoint carries no old failures, want both used: %v", got)
	}
}

// When every endpoint is out, requests get 502 at once without an
// attempt, as nginx's "no live upstreams"; a backend with one endpoint
// never takes it out.
func TestPassiveHealthCheckNoLiveEndpoint(t *testing.T) {
	const two, one = "ns/two/80", "ns/one/80"
	n := startNginx(t, nginxOptions{keys: []string{two, one}, workers: 1})
	a, attemptsA := closingEndpoint(t, "127.0.0.2")
	b, attemptsB := closingEndpoint(t, "127.0.0.3")
	c, attemptsC := closingEndpoint(t, "127.0.0.4")
	n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{
		{Key: two, MaxFails: 1, FailTimeoutMs: 60000, Endpoints: []balancer.Endpoint{a, b}},
		{Key: one, MaxFails: 1, FailTimeoutMs: 60000, Endpoints: []balancer.Endpoint{c}},
	}})
	got := n.counts(t, n.url(0, "/"), 10, 1, nil)
	if got["status 502"] != 10 {
		t.Errorf("want 502 for every request: %v", got)
	}
	if sum := attemptsA.Load() + attemptsB.Load(); sum != 2 {
		t.Errorf("%d attempts, want 2: the first request tries both, later ones none", sum)
	}
	if !strings.Contains(n.logs(), "ns/two/80: no live endpoint") {
		t.Error("no log line names the backend without a live endpoint")
	}
	got = n.counts(t, n.url(1, "/"), 10, 1, nil)
	if got["status 502"] != 10 || attemptsC.Load() != 10 {
		t.Errorf("a single endpoint is always tried: %v, %d attempts", got, attemptsC.Load())
	}
}

// max_conns bounds the requests in flight to an endpoint: the next one
// goes elsewhere, and when every endpoint is at its bound it gets 502.
func TestMaxConns(t *testing.T) {
	const key = "ns/maxconns/80"
	for _, tc := range []struct {
		name     string
		maxConns int
		method   balancer.Method
		want502  int
	}{
		{name: "round_robin, max_conns 1: the third request has no endpoint", maxConns: 1, want502: 1},
		{name: "least_conn, max_conns 1", maxConns: 1, method: balancer.LeastConn, want502: 1},
		{name: "chash, max_conns 1", maxConns: 1, method: balancer.CHash, want502: 1},
		{name: "round_robin, max_conns 2: room for all", maxConns: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := startNginx(t, nginxOptions{keys: []string{key}, workers: 1})
			x := startBackend(t, "127.0.0.2", "x")
			y := startBackend(t, "127.0.0.3", "y")
			for _, be := range []*testBackend{x, y} {
				be.delay.Store(int64(700 * time.Millisecond))
			}
			b := balancer.Backend{Key: key, Method: tc.method, MaxConns: tc.maxConns, Endpoints: []balancer.Endpoint{x.endpoint(), y.endpoint()}}
			if tc.method == balancer.CHash {
				b.HashKey = "$request_uri"
			}
			n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{b}})
			var (
				mu  sync.Mutex
				got = map[string]int{}
				wg  sync.WaitGroup
			)
			for i := 0; i < 3; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := n.get(t, n.http, n.url(0, "/same"), nil)
					k := r.backend
					if r.status != 200 {
						k = "status " + strconv.Itoa(r.status)
					}
					mu.Lock()
					got[k]++
					mu.Unlock()
				}()
				time.Sleep(100 * time.Millisecond) // in flight before the next
			}
			wg.Wait()
			if got["status 502"] != tc.want502 {
				t.Errorf("%d answered 502, want %d: %v", got["status 502"], tc.want502, got)
			}
			if got["x"] > tc.maxConns || got["y"] > tc.maxConns {
				t.Errorf("an endpoint got more than %d at once: %v", tc.maxConns, got)
			}
			if tc.want502 > 0 && !strings.Contains(n.logs(), "no live endpoint") {
				t.Error("no log line says why")
			}
			// Finished requests free their slots.
			if r := n.get(t, n.http, n.url(0, "/same"), nil); r.status != 200 {
				t.Errorf("after the burst: status %d", r.status)
			}
		})
	}
}
