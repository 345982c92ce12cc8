package balancer_test

import (
	"github.com/causeway/causeway/internal/balancer"
	"io"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"
)

// Every worker serves the new endpoint promptly after Replace returns.
//
// Each of 50 changes switches the backend between endpoints a and b.
// Right after Replace returns we send rounds of 4 concurrent probes, each
// on a new connection (reuseport spreads them over the workers), until
// both workers have answered from the new endpoint. A sample is the time
// from Replace returning to the end of the first such response from a
// worker: 100 samples, 2 per change.
//
// The design makes the change visible to any request that starts after
// the push returned, so two things are asserted:
//   - no probe is ever served by the previous endpoint (exact), and
//   - p99 of the samples ≤ 50 ms. A sample includes one full proxied round
//     trip (about 1 ms, a few under -race), so it over-states propagation;
//     no further tolerance is added.
func TestPropagationToAllWorkers(t *testing.T) {
	const key = "ns/prop/80"
	const changes = 50
	const workers = 2
	n := startNginx(t, nginxOptions{keys: []string{key}, workers: workers})
	eps := []*testBackend{startBackend(t, "127.0.0.2", "a"), startBackend(t, "127.0.0.3", "b")}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	url := n.url(0, "/")

	type probe struct {
		backend, worker string
		at              time.Duration
		err             error
	}
	var (
		samples, pushes []time.Duration
		stale           int
	)
	for i := 0; i < changes; i++ {
		target := eps[i%2]
		start := time.Now()
		n.replace(t, balancer.State{Generation: int64(i + 1), Backends: []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{target.endpoint()}}}})
		t0 := time.Now()
		pushes = append(pushes, t0.Sub(start))

		seen := map[string]time.Duration{}
		for len(seen) < workers {
			if time.Since(t0) > 2*time.Second {
				t.Fatalf("change %d: after 2s only workers %v served %s", i, seen, target.name)
			}
			results := make([]probe, 4)
			var wg sync.WaitGroup
			for j := range results {
				wg.Add(1)
				go func(p *probe) {
					defer wg.Done()
					resp, err := fresh.Get(url)
					if err != nil {
						p.err = err
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					p.at = time.Since(t0)
					p.backend, p.worker = resp.Header.Get("X-Backend"), resp.Header.Get("X-Worker")
				}(&results[j])
			}
			wg.Wait()
			for _, p := range results {
				switch {
				case p.err != nil:
					t.Fatalf("change %d: %v", i, p.err)
				case p.backend != target.name:
					stale++
				default:
					if at, ok := seen[p.worker]; !ok || p.at < at {
						seen[p.worker] = p.at
					}
				}
			}
		}
		for _, at := range seen {
			samples = append(samples, at)
		}
	}

	p := func(d []time.Duration, q float64) time.Duration {
		s := append([]time.Duration(nil), d...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[int(q*float64(len(s)-1)+0.5)]
	}
	t.Logf("%d changes, %d samples: Replace() took p50 %v p99 %v; first new-endpoint response per worker p50 %v p99 %v max %v",
		changes, len(samples), p(pushes, 0.5), p(pushes, 0.99), p(samples, 0.5), p(samples, 0.99), p(samples, 1))
	if stale > 0 {
		t.Errorf("%d requests sent after Replace returned were served by the previous endpoint", stale)
	}
	if p99 := p(samples, 0.99); p99 > 50*time.Millisecond {
		t.Errorf("propagation p99 %v, want ≤ 50ms", p99)
	}
}
