package balancer_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/balancer"
)

// BenchmarkPatchAtScale times a patch of one backend among n, and from
// its return to the first request served by the new endpoint (the worker
// applying the write), for n of 100, 1,000 and 10,000 backends of three
// endpoints each: with the per-backend store both stay flat in n. It also
// reports the full replace that set the n backends up.
//
//	go test -run '^$' -bench PatchAtScale -benchtime 200x ./internal/balancer
func BenchmarkPatchAtScale(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("backends=%d", n), func(b *testing.B) {
			const key = "ns/target/80"
			ng := startNginx(b, nginxOptions{keys: []string{key}, dictSize: "64m"})
			x, y := startBackend(b, "127.0.0.2", "a"), startBackend(b, "127.0.0.3", "b")
			st := balancer.State{Generation: 10}
			for i := range n - 1 {
				st.Backends = append(st.Backends, balancer.Backend{Key: fmt.Sprintf("ns/svc-%d/80", i), Endpoints: []balancer.Endpoint{
					{Address: fmt.Sprintf("10.1.%d.%d", i>>8, i&255), Port: 8080, Weight: 1, Ready: true},
					{Address: fmt.Sprintf("10.2.%d.%d", i>>8, i&255), Port: 8080, Weight: 1, Ready: true},
					{Address: fmt.Sprintf("10.3.%d.%d", i>>8, i&255), Port: 8080, Weight: 1, Ready: true}}})
			}
			st.Backends = append(st.Backends, balancer.Backend{Key: key, Endpoints: []balancer.Endpoint{x.endpoint()}})
			t0 := time.Now()
			if err := ng.client.Replace(b.Context(), st); err != nil {
				b.Fatal(err)
			}
			replace := time.Since(t0)
			c := &http.Client{}
			gen := st.Generation
			var patch, served []time.Duration
			b.ResetTimer()
			for i := range b.N {
				to := x
				if i%2 == 0 {
					to = y
				}
				t0 := time.Now()
				if err := ng.client.Patch(b.Context(), gen, gen+1, []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{to.endpoint()}}}, nil); err != nil {
					b.Fatal(err)
				}
				gen++
				t1 := time.Now()
				for tries := 0; ng.get(b, c, ng.url(0, "/"), nil).backend != to.name; tries++ {
					if tries > 1000 {
						b.Fatalf("patch %d not served", i)
					}
				}
				patch, served = append(patch, t1.Sub(t0)), append(served, time.Since(t1))
			}
			b.StopTimer()
			slices.Sort(patch)
			slices.Sort(served)
			q := func(d []time.Duration, p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Microseconds()) }
			b.ReportMetric(q(patch, 0.5), "patch-p50-µs")
			b.ReportMetric(q(patch, 0.99), "patch-p99-µs")
			b.ReportMetric(q(served, 0.5), "served-p50-µs")
			b.ReportMetric(q(served, 0.99), "served-p99-µs")
			b.ReportMetric(float64(replace.Microseconds()), "first-replace-µs")
			ng.stop()
		})
	}
}
