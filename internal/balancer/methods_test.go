package balancer_test

import (
	"fmt"
	"github.com/causeway/causeway/internal/balancer"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"
)

// Smooth weighted round robin is deterministic within a worker: starting
// from a fresh state, each endpoint's count after L picks is within 1 of
// L*w/W. With two workers (requests may land on either) the total is
// within 2, so ±3 leaves a margin and still fails any real imbalance.
func TestRoundRobinDistribution(t *testing.T) {
	const key = "ns/rr/80"
	tests := []struct {
		name    string
		weights []int
		total   int
	}{
		{"equal weights", []int{1, 1, 1}, 600},
		{"weights 1:3", []int{1, 3}, 800},
		{"weights 2:3:5", []int{2, 3, 5}, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := startNginx(t, nginxOptions{keys: []string{key}})
			var eps []balancer.Endpoint
			sum := 0
			for i, w := range tc.weights {
				b := startBackend(t, fmt.Sprintf("127.0.0.%d", i+2), fmt.Sprintf("b%d", i))
				e := b.endpoint()
				e.Weight = w
				eps = append(eps, e)
				sum += w
			}
			n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{{Key: key, Endpoints: eps}}})
			got := n.counts(t, n.url(0, "/"), tc.total, 4, nil)
			t.Logf("weights %v over %d requests: %v", tc.weights, tc.total, got)
			for i, w := range tc.weights {
				want := tc.total * w / sum
				if c := got[fmt.Sprintf("b%d", i)]; c < want-3 || c > want+3 {
					t.Errorf("b%d (weight %d): %d requests, want %d±3", i, w, c, want)
				}
			}
		})
	}
}

// One endpoint answers in 150 ms, the other at once; 8 clients send the
// requests. Round robin (the control) gives the slow one half. The
// load-aware methods see its requests pile up in flight (and, for p2c and
// ewma, its latency) and send it only the odd request: about one per
// 150 ms per worker against hundreds to the fast one, 1–5% measured. We
// allow 15%: slow scheduling under -race raises the fast endpoint's
// latency and so the slow one's share, but not by a factor of three.
func TestLoadAwareMethodsPreferIdleEndpoint(t *testing.T) {
	const key = "ns/slow/80"
	tests := []struct {
		method   balancer.Method
		total    int     // requests; fewer for the control, which waits on the slow one
		min, max float64 // bounds on the slow endpoint's share
	}{
		{balancer.RoundRobin, 80, 0.40, 0.60},
		{balancer.LeastConn, 200, 0, 0.15},
		{balancer.P2C, 200, 0, 0.15},
		{balancer.EWMA, 200, 0, 0.15},
	}
	for _, tc := range tests {
		t.Run(string(tc.method), func(t *testing.T) {
			n := startNginx(t, nginxOptions{keys: []string{key}})
			slow := startBackend(t, "127.0.0.2", "slow")
			slow.delay.Store(int64(150 * time.Millisecond))
			fast := startBackend(t, "127.0.0.3", "fast")
			n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{{Key: key, Method: tc.method,
				Endpoints: []balancer.Endpoint{slow.endpoint(), fast.endpoint()}}}})
			got := n.counts(t, n.url(0, "/"), tc.total, 8, nil)
			share := float64(got["slow"]) / float64(tc.total)
			t.Logf("%s: %v (slow share %.1f%%)", tc.method, got, 100*share)
			if got["slow"]+got["fast"] != tc.total {
				t.Fatalf("failed requests: %v", got)
			}
			if share < tc.min || share > tc.max {
				t.Errorf("slow endpoint got %.1f%% of requests, want %.0f%%..%.0f%%", 100*share, 100*tc.min, 100*tc.max)
			}
		})
	}
}

// With equally fast endpoints the load-aware methods must still spread
// load. The even share is 1/3, but both methods rightly shift load away
// from an endpoint that stalls for a moment (a GC pause in a test server
// under -race), so we assert that none is starved:
//   - least_conn rotates ties and is usually within a few requests of
//     100 each; after a stall one endpoint has had as few as 62. At least
//     10% each.
//   - p2c breaks in-flight ties by latency EWMA, and at this concurrency
//     most comparisons are ties, so an endpoint with one slow response
//     loses ties for a while; it still wins whenever its rival is busier.
//     The lowest measured is 47 of 300. At least 5% each.
func TestLoadAwareMethodsSpreadEqualEndpoints(t *testing.T) {
	const key = "ns/eq/80"
	tests := []struct {
		method balancer.Method
		min    float64
	}{
		{balancer.LeastConn, 0.10},
		{balancer.P2C, 0.05},
	}
	for _, tc := range tests {
		t.Run(string(tc.method), func(t *testing.T) {
			n := startNginx(t, nginxOptions{keys: []string{key}})
			var eps []balancer.Endpoint
			for i := 0; i < 3; i++ {
				eps = append(eps, startBackend(t, fmt.Sprintf("127.0.0.%d", i+2), fmt.Sprintf("b%d", i)).endpoint())
			}
			n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{{Key: key, Method: tc.method, Endpoints: eps}}})
			const total = 300
			got := n.counts(t, n.url(0, "/"), total, 4, nil)
			t.Logf("%s: %v", tc.method, got)
			for i := 0; i < 3; i++ {
				if c := got[fmt.Sprintf("b%d", i)]; float64(c) < tc.min*total {
					t.Errorf("b%d got %d of %d requests, want at least %.0f%%", i, c, total, 100*tc.min)
				}
			}
		})
	}
}

// Consistent hashing: a key always lands on the same endpoint; removing
// one of N endpoints moves exactly the keys it owned and no others. The
// share it owned is 1/N on average; with 100 md5-placed points per
// endpoint and 600 sampled keys its standard deviation is about 12% of
// 1/N (simulated over random ports), so [0.5/N, 1.6/N] is a band of more
// than 4σ on either side.
func TestConsistentHash(t *testing.T) {
	const key = "ns/chash/80"
	const endpoints = 5
	const keys = 600
	n := startNginx(t, nginxOptions{keys: []string{key}})
	var eps []balancer.Endpoint
	for i := 0; i < endpoints; i++ {
		eps = append(eps, startBackend(t, fmt.Sprintf("127.0.0.%d", i+2), fmt.Sprintf("b%d", i)).endpoint())
	}
	push := func(gen int64, eps []balancer.Endpoint) {
		n.replace(t, balancer.State{Generation: gen, Backends: []balancer.Backend{{Key: key, Method: balancer.CHash, HashKey: "$http_x_user", Endpoints: eps}}})
	}
	route := func() map[string]string {
		m := map[string]string{}
		for i := 0; i < keys; i++ {
			user := fmt.Sprintf("user-%d", i)
			r := n.get(t, n.http, n.url(0, "/"), map[string]string{"X-User": user})
			if r.status != 200 {
				t.Fatalf("user %s: status %d", user, r.status)
			}
			m[user] = r.backend
		}
		return m
	}
	push(1, eps)
	before := route()
	per := map[string]int{}
	for _, b := range before {
		per[b]++
	}
	t.Logf("keys per endpoint: %v", per)
	for i := 0; i < endpoints; i++ {
		if c := per[fmt.Sprintf("b%d", i)]; c < keys/endpoints/2 {
			t.Errorf("b%d owns %d of %d keys, want at least %d", i, c, keys, keys/endpoints/2)
		}
	}
	// Stability: the same keys again, over fresh connections (so other
	// workers too), go to the same endpoints.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 0; i < keys; i += 6 {
		user := fmt.Sprintf("user-%d", i)
		if r := n.get(t, fresh, n.url(0, "/"), map[string]string{"X-User": user}); r.backend != before[user] {
			t.Errorf("%s moved from %s to %s with no change", user, before[user], r.backend)
		}
	}

	// Remove b2.
	push(2, append(append([]balancer.Endpoint{}, eps[:2]...), eps[3:]...))
	after := route()
	moved := 0
	for user, b := range before {
		if after[user] == "b2" {
			t.Fatalf("%s still routed to the removed endpoint", user)
		}
		if after[user] != b {
			moved++
			if b != "b2" {
				t.Errorf("%s moved from %s to %s although %s is still there", user, b, after[user], b)
			}
		}
	}
	frac := float64(moved) / keys
	t.Logf("removing 1 of %d endpoints remapped %d of %d keys (%.3f; 1/N = %.3f)", endpoints, moved, keys, frac, 1.0/endpoints)
	if frac < 0.5/endpoints || frac > 1.6/endpoints {
		t.Errorf("remapped fraction %.3f, want within [%.2f, %.2f]", frac, 0.5/endpoints, 1.6/endpoints)
	}
	if moved != per["b2"] {
		t.Errorf("remapped %d keys, but b2 owned %d", moved, per["b2"])
	}
}

// Other hash keys: a cookie, and two variables concatenated.
func TestConsistentHashKeys(t *testing.T) {
	const key = "ns/chash/80"
	tests := []struct {
		hashKey string
		hdr     func(i int) map[string]string
	}{
		{"$cookie_id", func(i int) map[string]string { return map[string]string{"Cookie": fmt.Sprintf("other=1; id=c%d", i)} }},
		{"$arg_user", nil},
		{"$host$request_uri", nil},
	}
	for _, tc := range tests {
		t.Run(tc.hashKey, func(t *testing.T) {
			n := startNginx(t, nginxOptions{keys: []string{key}})
			var eps []balancer.Endpoint
			for i := 0; i < 3; i++ {
				eps = append(eps, startBackend(t, fmt.Sprintf("127.0.0.%d", i+2), fmt.Sprintf("b%d", i)).endpoint())
			}
			n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{{Key: key, Method: balancer.CHash, HashKey: tc.hashKey, Endpoints: eps}}})
			seen := map[string]bool{}
			for i := 0; i < 40; i++ {
				url := n.url(0, fmt.Sprintf("/p?user=u%d&x=%d", i, i))
				var hdr map[string]string
				if tc.hdr != nil {
					hdr = tc.hdr(i)
				}
				first := n.get(t, n.http, url, hdr).backend
				seen[first] = true
				for j := 0; j < 3; j++ {
					if again := n.get(t, n.http, url, hdr).backend; again != first {
						t.Fatalf("request %d went to %s, then %s", i, first, again)
					}
				}
			}
			if len(seen) < 2 {
				t.Errorf("40 distinct keys all went to %v: the key expression is not evaluated", seen)
			}
		})
	}
}

// Sticky sessions: the cookie pins a client to its endpoint; when that
// endpoint leaves the set, becomes not ready, or dies, the session moves
// and the cookie is re-issued.
func TestStickySessions(t *testing.T) {
	const key = "ns/sticky/80"
	n := startNginx(t, nginxOptions{keys: []string{key}})
	bs := []*testBackend{
		startBackend(t, "127.0.0.2", "b0"),
		startBackend(t, "127.0.0.3", "b1"),
		startBackend(t, "127.0.0.4", "b2"),
	}
	byName := map[string]*testBackend{}
	for _, b := range bs {
		byName[b.name] = b
	}
	opts := &balancer.StickyOptions{Cookie: "route", Path: "/", MaxAge: 60, SameSite: "Lax"}
	push := func(gen int64, eps ...balancer.Endpoint) {
		n.replace(t, balancer.State{Generation: gen, Backends: []balancer.Backend{{Key: key, Method: balancer.Sticky, Sticky: opts, Endpoints: eps}}})
	}
	all := func() []balancer.Endpoint {
		return []balancer.Endpoint{bs[0].endpoint(), bs[1].endpoint(), bs[2].endpoint()}
	}
	push(1, all()...)

	newClient := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, Transport: &http.Transport{DisableKeepAlives: true}}
	}
	url := n.url(0, "/")

	// A new session gets a cookie with the configured attributes.
	c := newClient()
	r := n.get(t, c, url, nil)
	first := r.backend
	sc := r.header.Get("Set-Cookie")
	if !strings.HasPrefix(sc, "route=") || !strings.HasSuffix(sc, "; Path=/; Max-Age=60; SameSite=Lax; HttpOnly") {
		t.Fatalf("Set-Cookie %q lacks the configured attributes", sc)
	}
	if strings.Contains(sc, "127.0.0.") {
		t.Errorf("cookie %q leaks the endpoint address", sc)
	}
	// Pinned: 30 more requests (on new connections, so both workers) all
	// go there, without re-issuing the cookie.
	for i := 0; i < 30; i++ {
		r := n.get(t, c, url, nil)
		if r.backend != first {
			t.Fatalf("request %d went to %s, session is on %s", i, r.backend, first)
		}
		if r.header.Get("Set-Cookie") != "" {
			t.Fatalf("cookie re-issued for a valid session: %q", r.header.Get("Set-Cookie"))
		}
	}
	// New sessions are spread by round robin.
	sessions := map[string]int{}
	for i := 0; i < 30; i++ {
		sessions[n.get(t, newClient(), url, nil).backend]++
	}
	t.Logf("30 new sessions: %v", sessions)
	for _, b := range bs {
		if sessions[b.name] < 5 {
			t.Errorf("%s got %d of 30 new sessions", b.name, sessions[b.name])
		}
	}

	// move asserts the session leaves `from`, gets a new cookie, and then
	// sticks to its new endpoint.
	move := func(step, from string) string {
		t.Helper()
		r := n.get(t, c, url, nil)
		if r.status != 200 || r.backend == from {
			t.Fatalf("%s: status %d from %q, want 200 from an endpoint other than %s", step, r.status, r.backend, from)
		}
		if !strings.HasPrefix(r.header.Get("Set-Cookie"), "route=") {
			t.Fatalf("%s: cookie not re-issued", step)
		}
		for i := 0; i < 10; i++ {
			if again := n.get(t, c, url, nil).backend; again != r.backend {
				t.Fatalf("%s: session moved to %s, then went to %s", step, r.backend, again)
			}
		}
		return r.backend
	}

	// 1. The endpoint is removed from the set.
	var eps []balancer.Endpoint
	for _, b := range bs {
		if b.name != first {
			eps = append(eps, b.endpoint())
		}
	}
	push(2, eps...)
	second := move("endpoint removed", first)

	// 2. The endpoint becomes not ready.
	eps = all()
	for i := range eps {
		if bs[i].name == second {
			eps[i].Ready = false
		}
	}
	push(3, eps...)
	third := move("endpoint not ready", second)

	// 3. The endpoint dies but is still listed: the failed attempt is
	// retried elsewhere and the cookie follows the endpoint that answered.
	push(4, all()...)
	if got := n.get(t, c, url, nil).backend; got != third {
		t.Fatalf("session on %s went to %s", third, got)
	}
	byName[third].srv.Close()
	move("endpoint dead", third)
}
