package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/causeway/causeway/bench/internal/proc"
)

// bench/scale's names: Ingress, Service and EndpointSlice i.
func name(i int) string { return fmt.Sprintf("app-%05d", i) }
func host(i int) string { return fmt.Sprintf("h%05d.bench.test", i) }

// measure runs ingress-nginx on namespace ns (n Ingresses) and returns
// its rows: start → ready and → the last host served, Ingress changes,
// endpoint changes, reloads, memory.
func measure(ctx context.Context, o options, client kubernetes.Interface, ns string, n int, b backend) ([]row, error) {
	if _, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("namespace %s: %w (run bench/scale -kubeconfig %s -sizes %d first)", ns, err, o.kubeconfig, n)
	}
	fmt.Fprintf(os.Stderr, "%s: pointing the EndpointSlices at this run's backend ...\n", ns)
	if err := pointAll(ctx, client, ns, n, b); err != nil {
		return nil, err
	}
	start := time.Now()
	c, err := startController(ctx, o, client, ns)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	p := newProber(c.httpPort)
	addr := "127.0.0.1:" + strconv.Itoa(c.httpPort)
	ready, err := c.waitReady(ctx, start, 10*time.Minute)
	if err != nil {
		return nil, err
	}
	last, err := p.wait(ctx, addr, host(n-1), b.addr(b.port), start, 10*time.Minute)
	if err != nil {
		return nil, err
	}
	afterReady := proc.Of(c.controllerPid())
	rows := []row{
		{"controller start → ready (/healthz 200)", ready.Round(10 * time.Millisecond).String()},
		{"controller start → the last Ingress's host served, by traffic", last.Round(10 * time.Millisecond).String()},
	}
	// Let the start's syncs run out.
	time.Sleep(3 * time.Second)
	reloadsBefore := c.reloads()
	var changes []time.Duration
	for i := range o.changes {
		ing, err := client.NetworkingV1().Ingresses(ns).Get(ctx, name(i), metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		newHost := fmt.Sprintf("peer-%d-%d.bench.test", i, time.Now().Unix())
		ing.Spec.Rules[0].Host = newHost
		t0 := time.Now()
		if _, err := client.NetworkingV1().Ingresses(ns).Update(ctx, ing, metav1.UpdateOptions{}); err != nil {
			return nil, err
		}
		took, err := p.wait(ctx, addr, newHost, "", t0, time.Minute)
		if err != nil {
			return nil, err
		}
		changes = append(changes, took)
	}
	slices.Sort(changes)
	rows = append(rows, row{fmt.Sprintf("one Ingress changed → live, by traffic (median / max of %d)", o.changes),
		fmt.Sprintf("%s / %s", ms(changes[len(changes)/2]), ms(changes[len(changes)-1]))})
	rows = append(rows, row{"reloads for those Ingress changes", fmt.Sprint(c.reloads() - reloadsBefore)})
	time.Sleep(2 * time.Second)

	// bench/scale's endpoint change moves the one endpoint to another
	// port of its address: ingress-nginx ignores an EndpointSlice update
	// whose endpoints are unchanged (it compares .endpoints, not .ports),
	// so a few of those first, then the same move with the endpoint's
	// zone set to the port, which it does see.
	reloadsBefore = c.reloads()
	idx := spread(o.changes, n, o.samples+o.portOnly)
	portOnly := endpointSamples(ctx, client, ns, idx[:o.portOnly], b, p, o.portOnlyLimit, false)
	marked := endpointSamples(ctx, client, ns, idx[o.portOnly:], b, p, o.limit, true)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	rows = append(rows,
		row{fmt.Sprintf("one EndpointSlice changed, port only (bench/scale's change) → traffic on the new endpoint, p50 / p99 / max (n), given up after %s", o.portOnlyLimit), portOnly.value()},
		row{"one EndpointSlice changed, port and endpoint zone → traffic on the new endpoint, p50 / p99 / max (n)", marked.value()},
		row{"  of which the API server's answer to the write, p50 / p99", fmt.Sprintf("%s / %s", ms(percentile(marked.writes, 0.5)), ms(percentile(marked.writes, 0.99)))},
		row{"reloads for those endpoint changes", fmt.Sprint(c.reloads() - reloadsBefore)},
		row{"nginx reloads in all (start included)", fmt.Sprint(c.reloads())},
	)
	peak := proc.Of(c.controllerPid())
	rows = append(rows,
		row{"controller RSS after ready / peak (VmHWM)", fmt.Sprintf("%s / %s", mib(afterReady.Current), mib(peak.Peak))},
		row{"nginx RSS, master + workers", mib(c.nginxRSS())},
	)
	if info, err := os.Stat(c.root + "/etc/nginx/nginx.conf"); err == nil {
		rows = append(rows, row{"rendered configuration", fmt.Sprintf("%.1f MiB in 1 file", float64(info.Size())/(1<<20))})
	}
	if o.keepLog {
		fmt.Fprintf(os.Stderr, "%s: controller log %s\n", ns, c.log)
	}
	return rows, nil
}

// samples are timed endpoint changes.
type samples struct {
	took, writes []time.Duration
	failed       int
	limit        time.Duration
}

func (l samples) value() string {
	slices.Sort(l.took)
	value := "none arrived"
	if len(l.took) > 0 {
		value = fmt.Sprintf("%s / %s / %s (%d)", ms(percentile(l.took, 0.5)), ms(percentile(l.took, 0.99)), ms(l.took[len(l.took)-1]), len(l.took))
	}
	if l.failed > 0 {
		value += fmt.Sprintf("; %d of %d not within %s", l.failed, l.failed+len(l.took), l.limit)
	}
	return value
}

// endpointSamples times single EndpointSlice changes, one at a time, on
// the Services of Ingresses idx: the one endpoint moves between b.port
// and b.other; with mark its zone names the port too, so that its
// endpoints differ. From just before the write to the first answer from
// the new endpoint, given up after limit.
func endpointSamples(ctx context.Context, client kubernetes.Interface, ns string, idx []int, b backend, p *prober, limit time.Duration, mark bool) samples {
	l := samples{limit: limit}
	api := client.DiscoveryV1().EndpointSlices(ns)
	for _, i := range idx {
		cur, err := api.Get(ctx, name(i)+"-1", metav1.GetOptions{})
		if err != nil {
			l.failed++
			continue
		}
		to := b.other
		if *cur.Ports[0].Port == int32(b.other) {
			to = b.port
		}
		next := cur.DeepCopy()
		next.Endpoints[0].Addresses[0], next.Ports[0].Port = b.ip, ptr.To(int32(to))
		if mark {
			next.Endpoints[0].Zone = ptr.To(fmt.Sprintf("port-%d", to))
		}
		t0 := time.Now()
		if _, err := api.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			l.failed++
			continue
		}
		l.writes = append(l.writes, time.Since(t0))
		if d, err := p.wait(ctx, "127.0.0.1:"+strconv.Itoa(p.port), host(i), b.addr(to), t0, limit); err != nil {
			fmt.Fprintln(os.Stderr, err)
			l.failed++
		} else {
			l.took = append(l.took, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
	slices.Sort(l.writes)
	return l
}

// pointAll points every EndpointSlice of ns at b.ip:b.port, 16 at once,
// untimed: bench/scale's backend is gone once it has exited.
func pointAll(ctx context.Context, client kubernetes.Interface, ns string, n int, b backend) error {
	api := client.DiscoveryV1().EndpointSlices(ns)
	jobs := make(chan int)
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			var first error
			for i := range jobs {
				s, err := api.Get(ctx, name(i)+"-1", metav1.GetOptions{})
				if err == nil && !pointsAt(s, b) {
					s.Endpoints[0].Addresses[0], s.Ports[0].Port = b.ip, ptr.To(int32(b.port))
					_, err = api.Update(ctx, s, metav1.UpdateOptions{})
				}
				if err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	var first error
	for range 16 {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func pointsAt(s *discoveryv1.EndpointSlice, b backend) bool {
	return s.Endpoints[0].Addresses[0] == b.ip && *s.Ports[0].Port == int32(b.port)
}

// prober sends requests on kept-alive connections.
// port is nginx's HTTP port.
type prober struct {
	client *http.Client
	port   int
}

func newProber(port int) *prober {
	tr := &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute, DisableCompression: true}
	return &prober{client: &http.Client{Transport: tr, Timeout: time.Second}, port: port}
}

// wait polls host at addr until the answer comes from endpoint want (any
// 200 when want is ""), and returns the time since start. The pause
// between two requests is 0.5 ms, or 1/50 of the wait so far, up to 50 ms,
// as bench/scale polls.
func (p *prober) wait(ctx context.Context, addr, host, want string, start time.Time, limit time.Duration) (time.Duration, error) {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		req.Host = host
		if resp, err := p.client.Do(req); err == nil {
			got := resp.Header.Get("X-Echo-Endpoint")
			took := time.Since(start)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && (want == "" || got == want) {
				return took, nil
			}
		}
		waited := time.Since(start)
		if waited > limit {
			return 0, fmt.Errorf("%s: no answer from %q within %s", host, want, limit)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(max(500*time.Microsecond, min(waited/50, 50*time.Millisecond))):
		}
	}
}

// spread picks count of [lo, hi), evenly apart.
func spread(lo, hi, count int) []int {
	out := make([]int, count)
	for k := range out {
		out[k] = lo + (k*(hi-lo)/count)%(hi-lo)
	}
	return out
}

func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[max(int(math.Ceil(q*float64(len(sorted))))-1, 0)]
}

func ms(d time.Duration) string {
	if d < 100*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return d.Round(time.Millisecond).String()
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
