package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"time"
)

// staleChecks is how many requests follow the first one served by the new
// endpoint; any of them served by the old one means some worker still had
// the old endpoint set.
const staleChecks = 10

// latencyResult is what section (a) measured.
type latencyResult struct {
	workers int
	samples []time.Duration // rename to first response from the new endpoint
	// apply is the controller's own event→live time of each swap that
	// took exactly one sync, and rest the remainder of the same swap.
	apply, rest []time.Duration
	rtts        []time.Duration // every poll's round trip
	polls       int
	timeouts    int // swaps never seen within -latency-timeout
	stale       int // follow-up requests still served by the old endpoint
	failed      int // polls that got no 200
	counters    counters
}

// measureLatency swaps the Service's only endpoint between two backends,
// c.latencyIterations times, timing each swap from the manifest rename to
// the first response served by the new endpoint. first is the endpoint
// currently in the slice. Both backends keep running until the pool
// closes, so nothing that follows meets a stopped endpoint still listed.
func measureLatency(ctx context.Context, c *config, ctl *controllerProc, p *pool, first *backend, workers int) (*latencyResult, error) {
	second, err := p.start()
	if err != nil {
		return nil, err
	}
	client := httpClient(ctl.HTTPAddr(), c.latencyKeepAlive)
	defer client.CloseIdleConnections()
	r := &latencyResult{workers: workers}
	get := func() (string, bool) { return r.poll(ctx, client) }
	// The controller starts with first; make sure it serves before timing.
	if err := waitServedBy(ctx, client, first.Addr, 10*time.Second); err != nil {
		return nil, err
	}
	before, err := ctl.snapshot()
	if err != nil {
		return nil, err
	}
	prev := before
	cur, next := first, second
	for range c.latencyIterations {
		at, err := ctl.WriteManifest("slice.yaml", sliceYAML(p.port, next.IP))
		if err != nil {
			return nil, err
		}
		deadline := at.Add(c.latencyTimeout)
		took := time.Duration(-1)
		for {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if ep, _ := get(); ep == next.Addr {
				took = time.Since(at)
				r.samples = append(r.samples, took)
				break
			}
			if time.Now().After(deadline) {
				r.timeouts++
				break
			}
			if c.pollInterval > 0 {
				time.Sleep(c.pollInterval)
			}
		}
		for range staleChecks {
			if ep, ok := get(); ok && ep != next.Addr {
				r.stale++
			}
		}
		// The controller's histogram, read once per swap, tells its own
		// share of this swap when exactly one sync ran for it.
		now, err := ctl.snapshot()
		if err != nil {
			return nil, err
		}
		if d := now.delta(prev); d.applyCount == 1 && took >= 0 {
			apply := time.Duration(d.applySum * float64(time.Second))
			r.apply = append(r.apply, apply)
			r.rest = append(r.rest, took-apply)
		}
		prev = now
		cur, next = next, cur
		// A random pause keeps swaps from falling into step with the
		// controller's timers.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20*time.Millisecond + rand.N(40*time.Millisecond)):
		}
	}
	after, err := ctl.snapshot()
	if err != nil {
		return nil, err
	}
	r.counters = after.delta(before)
	return r, nil
}

// poll is the package's poll, counted and timed in r.
func (r *latencyResult) poll(ctx context.Context, client *http.Client) (string, bool) {
	start := time.Now()
	ep, ok := poll(ctx, client)
	r.rtts = append(r.rtts, time.Since(start))
	r.polls++
	if !ok {
		r.failed++
	}
	return ep, ok
}

// poll sends one request for the benchmark host and returns the endpoint
// that served it; ok is false unless the answer was a 200.
func poll(ctx context.Context, client *http.Client) (endpoint string, ok bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+httpHost+"/", nil)
	if err != nil {
		return "", false
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.Header.Get("X-Echo-Endpoint"), resp.StatusCode == http.StatusOK
}

// waitServedBy polls until endpoint answers, for at most timeout.
func waitServedBy(ctx context.Context, client *http.Client, endpoint string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ep, _ := poll(ctx, client)
		if ep == endpoint {
			return nil
		}
		last = ep
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not serving within %s (last answer from %q)", endpoint, timeout, last)
}

// report adds section (a)'s table and summary row.
func (r *latencyResult) report(c *config, rep *report) {
	s := sortedCopy(r.samples)
	rtt := sortedCopy(r.rtts)
	conn := "a new connection per request (keep-alive off), so requests spread over the workers"
	if c.latencyKeepAlive {
		conn = "one keep-alive connection (so one nginx worker)"
	}
	pause := "back to back"
	if c.pollInterval > 0 {
		pause = c.pollInterval.String() + " apart (so that polling does not starve the controller of CPU)"
	}
	t := &table{title: "(a) Change-to-traffic latency", header: []string{"", "swaps", "p50", "p90", "p99", "max", "not seen in time", "stale answers after", "failed polls"}}
	t.add("**rename → first response from the new endpoint**", fmt.Sprint(len(s)+r.timeouts), ms(percentile(s, 50)), ms(percentile(s, 90)), ms(percentile(s, 99)), ms(percentile(s, 100)),
		fmt.Sprint(r.timeouts), fmt.Sprintf("%d of %d", r.stale, (len(s)+r.timeouts)*staleChecks), fmt.Sprint(r.failed))
	a, rest := sortedCopy(r.apply), sortedCopy(r.rest)
	t.add("of which: controller, event → push returned", fmt.Sprint(len(a)), ms(percentile(a, 50)), ms(percentile(a, 90)), ms(percentile(a, 99)), ms(percentile(a, 100)), "", "", "")
	t.add("of which: the rest (file event, files-source batching, poll)", fmt.Sprint(len(rest)), ms(percentile(rest, 50)), ms(percentile(rest, 90)), ms(percentile(rest, 99)), ms(percentile(rest, 100)), "", "", "")
	t.note("Each swap rewrites the EndpointSlice (temp file + rename) so that its only endpoint moves to the other of two backends; the time runs from the rename to the first response from the new backend.")
	t.note("nginx has %d workers; the polling client sends requests %s, over %s; a poll's round trip is %s p50, %s p99 (%d polls in all).",
		r.workers, pause, conn, ms(percentile(rtt, 50)), ms(percentile(rtt, 99)), r.polls)
	t.note("After the first new answer, %d more requests follow; \"stale answers\" counts those still served by the old backend.", staleChecks)
	t.note("The split comes from the controller's `causeway_config_apply_seconds`, read after each swap (swaps that took other than one sync are left out of it). Its clock starts when the files source reports the change, after its fixed 10 ms batching of file events; it includes the `--sync-quiet-period` wait, the model build, the render and the push. Percentiles of each row are taken separately, so they do not add up.")
	rep.addTable(t)
	p99 := percentile(s, 99)
	rep.target("(a) change-to-traffic p99", "≤ 50 ms", ms(p99), pass(r.timeouts == 0 && len(s) > 0 && p99 <= 50*time.Millisecond))
}
