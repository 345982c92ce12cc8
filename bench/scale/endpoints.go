package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Issue 35's targets for an EndpointSlice write → the first request on
// the new endpoint, through the API server, alone and under churn.
const (
	targetEndpointP50 = 5 * time.Millisecond
	targetEndpointP99 = 20 * time.Millisecond
	// targetChurnCPU is the controller's CPU during the churn, in cores.
	targetChurnCPU = 0.5
	// endpointUpdateMetric is the controller's histogram of an endpoint
	// change, event → pushed to nginx (the incremental push path).
	endpointUpdateMetric = "causeway_endpoint_update_seconds"
)

// prober sends requests through nginx on kept-alive connections and
// waits for an answer from a given endpoint.
type prober struct {
	client *http.Client
	// interval is the least pause between two requests of one wait; the
	// pause grows with the wait (pause), so that a slow change does not
	// flood nginx, nor take the CPU the controller needs.
	interval time.Duration
}

// pause is the pause after a request waitEndpoint sent waited into a
// wait: interval, or 1/50 of the wait so far (a resolution of 2 %), up
// to 50 ms.
func (p *prober) pause(waited time.Duration) time.Duration {
	return max(p.interval, min(waited/50, 50*time.Millisecond))
}

// newProber keeps up to conns connections open per nginx address.
func newProber(interval time.Duration, conns int) *prober {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute, DisableCompression: true}
	return &prober{client: &http.Client{Transport: tr, Timeout: time.Second}, interval: interval}
}

// waitEndpoint polls host at addr until the echo backend answering is
// want (ip:port), and returns the time since start; an error once limit
// has passed since start.
func (p *prober) waitEndpoint(ctx context.Context, addr, host, want string, start time.Time, limit time.Duration) (time.Duration, error) {
	return p.waitFor(ctx, addr, host, start, limit, "an answer from "+want, func(resp *http.Response) bool {
		return resp.Header.Get("X-Echo-Endpoint") == want
	})
}

// waitFor polls host at addr until an answer is done, and returns the
// time since start to that answer; an error naming what once limit has
// passed since start.
func (p *prober) waitFor(ctx context.Context, addr, host string, start time.Time, limit time.Duration, what string, done func(*http.Response) bool) (time.Duration, error) {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		req.Host = host
		resp, err := p.client.Do(req)
		if err == nil {
			took := time.Since(start)
			ok := done(resp)
			// Read to the end, or the connection is not reused.
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if ok {
				return took, nil
			}
		}
		if time.Since(start) > limit {
			return 0, fmt.Errorf("%s: no %s within %s", host, what, limit)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(p.pause(time.Since(start))):
		}
	}
}

// flipped is a copy of EndpointSlice s with its one endpoint moved to
// b's other port: to b.other when it is at b.port, else to b.port (also
// when an earlier run left it at another backend). want is the endpoint
// that answers once nginx has it.
func flipped(s *discoveryv1.EndpointSlice, b backend) (out *discoveryv1.EndpointSlice, want string) {
	to := b.port
	if s.Endpoints[0].Addresses[0] == b.ip && *s.Ports[0].Port == int32(b.port) {
		to = b.other
	}
	out = s.DeepCopy()
	out.Endpoints[0].Addresses[0], out.Ports[0].Port = b.ip, ptr.To(int32(to))
	return out, net.JoinHostPort(b.ip, strconv.Itoa(to))
}

// spread picks count of the objects in [lo, hi), evenly apart, each
// once before any twice.
func spread(lo, hi, count int) []int {
	span := hi - lo
	if span <= 0 {
		return nil
	}
	out := make([]int, count)
	for k := range out {
		if count <= span {
			out[k] = lo + k*span/count
		} else {
			out[k] = lo + k%span
		}
	}
	return out
}

// pointAtBackend points the EndpointSlices of objects idx that an earlier
// run left at its own backend (gone since) at this run's, and waits until
// nginx has them, untimed: nginx would otherwise wait for the old backend
// on every poll of the first change of each. The slices already at this
// run's backend (either port) are left as they are.
func pointAtBackend(ctx context.Context, client kubernetes.Interface, set objectSet, c *controller, idx []int, b backend, p *prober) error {
	list, err := client.DiscoveryV1().EndpointSlices(set.namespace()).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	live := map[string]bool{} // the slices at this run's backend, by name
	for _, s := range list.Items {
		if len(s.Endpoints) > 0 && len(s.Endpoints[0].Addresses) > 0 && len(s.Ports) > 0 && s.Ports[0].Port != nil {
			port := int(*s.Ports[0].Port)
			live[s.Name] = s.Endpoints[0].Addresses[0] == b.ip && (port == b.port || port == b.other)
		}
	}
	var stale []int
	for _, i := range idx {
		if !live[name(i)+"-1"] && !slices.Contains(stale, i) {
			stale = append(stale, i)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	fmt.Fprintf(os.Stderr, "pointing %d EndpointSlices of an earlier run at this run's backend ...\n", len(stale))
	if _, err := concurrently(ctx, len(stale), 8, func(k int) error {
		return setSlicePort(ctx, client, set.namespace(), stale[k], b.ip, b.port)
	}); err != nil {
		return err
	}
	// The last one written answering says the controller has caught up.
	last := stale[len(stale)-1]
	addr, err := set.addr(ctx, c, last)
	if err != nil {
		return err
	}
	if _, err := p.waitEndpoint(ctx, addr, host(last), net.JoinHostPort(b.ip, strconv.Itoa(b.port)), time.Now(), time.Minute); err != nil {
		return err
	}
	time.Sleep(time.Second)
	return nil
}

// settle waits until the controller has neither synced nor reloaded for
// quiet (at most limit), so that the endpoint changes do not start beside
// the start-up's last syncs (with -endpoints-only nothing else waited
// for them: a Gateway's listeners, say, come once its Service is
// written).
func (c *controller) settle(ctx context.Context, quiet, limit time.Duration) {
	last, since := c.syncState(), time.Now()
	c.settleFrom(ctx, last, since, quiet, limit)
}

// syncState is the count of syncs that went live, of reloads, and of
// changes that took no sync (a Service nothing names; 0 from a controller
// before 2026-11-30, which synced for them).
func (c *controller) syncState() [3]float64 {
	return [3]float64(c.metrics("causeway_config_apply_seconds_count", "causeway_nginx_reloads_total", "causeway_changes_without_sync_total"))
}

// settleAfter is settle once a sync later than before (a syncState read
// before the writes that cause it) has gone live, or the controller
// counted a change that takes none, with a quiet of at
// least 1.5 times the mean sync: a sync of 10,000 Ingresses takes longer
// than 300 ms, and a count that does not change for less than a sync
// may be one running (the next write would then wait for it).
func (c *controller) settleAfter(ctx context.Context, before [3]float64, quiet, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for now := c.syncState(); now[0] <= before[0] && now[2] <= before[2] && time.Now().Before(deadline); now = c.syncState() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(metricsPoll):
		}
	}
	if v := c.metrics("causeway_config_apply_seconds_count", "causeway_config_apply_seconds_sum"); v[0] > 0 {
		mean := v[1] / v[0]
		quiet = max(quiet, time.Duration(1.5*mean*float64(time.Second)))
	}
	c.settleFrom(ctx, c.syncState(), time.Now(), quiet, time.Until(deadline))
}

func (c *controller) settleFrom(ctx context.Context, last [3]float64, since time.Time, quiet, limit time.Duration) {
	state := c.syncState
	for deadline := time.Now().Add(limit); time.Now().Before(deadline) && time.Since(since) < quiet; {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		if now := state(); now != last {
			last, since = now, time.Now()
		}
	}
	if time.Since(since) < quiet {
		fmt.Fprintf(os.Stderr, "the controller still syncs after %s; measuring anyway\n", limit)
	}
}

// latencies are timed changes: the times of those that arrived, and the
// number that did not within the limit.
type latencies struct {
	took   []time.Duration
	failed int
	// writes are the API server's answers to the updates, each a part
	// of its change's time.
	writes []time.Duration
}

// percentile is the q-quantile of the sorted times by nearest rank.
func percentile(sorted []time.Duration, q float64) time.Duration {
	k := max(int(math.Ceil(q*float64(len(sorted))))-1, 0)
	return sorted[k]
}

// row is the p50 / p99 / max of l against issue 35's targets.
func (l latencies) row(what string) row {
	slices.Sort(l.took)
	total := len(l.took) + l.failed
	if len(l.took) == 0 {
		return row{what: what, value: fmt.Sprintf("none of %d arrived", total), target: latencyTarget}
	}
	p50, p99, worst := percentile(l.took, 0.5), percentile(l.took, 0.99), l.took[len(l.took)-1]
	value := fmt.Sprintf("%s / %s / %s (%d)", ms(p50), ms(p99), ms(worst), len(l.took))
	if l.failed > 0 {
		value += fmt.Sprintf("; %d of %d not within the limit", l.failed, total)
	}
	return row{what: what, value: value, target: latencyTarget,
		met: l.failed == 0 && p50 <= targetEndpointP50 && p99 <= targetEndpointP99, num: p50.Seconds()}
}

// writeRow is the p50 / p99 of the updates' round trips.
func (l latencies) writeRow(what string) row {
	slices.Sort(l.writes)
	if len(l.writes) == 0 {
		return row{what: what, value: "none"}
	}
	p50 := percentile(l.writes, 0.5)
	return row{what: what, value: fmt.Sprintf("%s / %s", ms(p50), ms(percentile(l.writes, 0.99))), num: p50.Seconds()}
}

var latencyTarget = fmt.Sprintf("p50 ≤ %s, p99 ≤ %s", targetEndpointP50, targetEndpointP99)

// ms prints d in milliseconds, to a tenth below 100 ms.
func ms(d time.Duration) string {
	if d < 100*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return d.Round(time.Millisecond).String()
}

// endpointSamples times single EndpointSlice changes, one at a time, on
// the Services of objects idx (in turn): from just before the API update
// to the first answer from the new endpoint, given up after limit.
func (c *controller) endpointSamples(ctx context.Context, client kubernetes.Interface, set objectSet, idx []int, b backend, p *prober, limit time.Duration) (latencies, error) {
	var l latencies
	slicesAPI := client.DiscoveryV1().EndpointSlices(set.namespace())
	for k, i := range idx {
		addr, err := set.addr(ctx, c, i)
		if err != nil {
			return l, err
		}
		cur, err := slicesAPI.Get(ctx, name(i)+"-1", metav1.GetOptions{})
		if err != nil {
			return l, err
		}
		next, want := flipped(cur, b)
		start := time.Now()
		if _, err := slicesAPI.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
			return l, err
		}
		l.writes = append(l.writes, time.Since(start))
		took, err := p.waitEndpoint(ctx, addr, host(i), want, start, limit)
		if ctx.Err() != nil {
			return l, ctx.Err()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "endpoint sample %d: %v\n", k, err)
			l.failed++
		} else {
			l.took = append(l.took, took)
		}
		if (k+1)%50 == 0 {
			fmt.Fprintf(os.Stderr, "endpoint samples: %d/%d\n", k+1, len(idx))
		}
		// A moment apart, so that a sample does not start inside the
		// work the last one caused after its answer.
		time.Sleep(20 * time.Millisecond)
	}
	return l, nil
}
