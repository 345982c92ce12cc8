package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// churnResult is what section (b) measured.
type churnResult struct {
	elapsed      time.Duration
	replacements int
	requests     int
	ok           int
	non2xx       int
	errors       int
	failures     map[string]int // status or error text, for the notes
	latencies    []time.Duration
	endpoints    int           // distinct backends that answered
	lateToOld    int           // requests started after their backend's removal was written
	maxLate      time.Duration // the latest of those, after the removal
	counters     counters
}

// served is one response's backend and when its request started.
type served struct {
	endpoint string
	at       time.Time
}

// measureChurn runs a constant-rate load (keep-alive on) while one
// endpoint is replaced by a fresh backend every c.churnInterval. The
// replaced backend keeps running for c.drain, then shuts down gracefully,
// as a terminating pod would.
func measureChurn(ctx context.Context, c *config, ctl *controllerProc, p *pool) (*churnResult, error) {
	active, err := p.startN(c.churnEndpoints)
	if err != nil {
		return nil, err
	}
	if _, err := ctl.WriteManifest("slice.yaml", sliceYAML(p.port, ips(active)...)); err != nil {
		return nil, err
	}
	client := httpClient(ctl.HTTPAddr(), false)
	if err := waitServedBy(ctx, client, active[len(active)-1].Addr, 10*time.Second); err != nil {
		return nil, err
	}
	before, err := ctl.snapshot()
	if err != nil {
		return nil, err
	}

	atk := vegeta.NewAttacker(vegeta.KeepAlive(true), vegeta.Timeout(5*time.Second),
		vegeta.Workers(8), vegeta.MaxWorkers(512), vegeta.Connections(512), vegeta.Redirects(vegeta.NoFollow))
	target := vegeta.Target{Method: http.MethodGet, URL: "http://" + ctl.HTTPAddr() + "/", Header: http.Header{"Host": {httpHost}}}
	results := atk.Attack(vegeta.NewStaticTargeter(target), vegeta.Rate{Freq: c.churnRate, Per: time.Second}, c.churn, "churn")

	r := &churnResult{failures: map[string]int{}}
	var servedLog []served
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for res := range results {
			r.requests++
			r.latencies = append(r.latencies, res.Latency)
			switch {
			case res.Code == 0:
				r.errors++
				r.failures[res.Error]++
			case res.Code < 200 || res.Code > 299:
				r.non2xx++
				r.failures[fmt.Sprintf("HTTP %d", res.Code)]++
			default:
				r.ok++
				servedLog = append(servedLog, served{res.Headers.Get("X-Echo-Endpoint"), res.Timestamp})
			}
		}
	}()

	var mu sync.Mutex
	removedAt := map[string]time.Time{}
	churnErr := func() error {
		start := time.Now()
		defer func() { r.elapsed = time.Since(start) }()
		tick := time.NewTicker(c.churnInterval)
		defer tick.Stop()
		for time.Since(start) < c.churn {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
			fresh, err := p.start()
			if err != nil {
				return err
			}
			old := active[0]
			active = append(active[1:], fresh)
			at, err := ctl.WriteManifest("slice.yaml", sliceYAML(p.port, ips(active)...))
			if err != nil {
				return err
			}
			mu.Lock()
			removedAt[old.Addr] = at
			mu.Unlock()
			p.stopAfter(old, c.drain)
			r.replacements++
		}
		return nil
	}()
	if churnErr != nil {
		atk.Stop()
	}
	<-collected
	if churnErr != nil {
		return nil, churnErr
	}
	after, err := ctl.snapshot()
	if err != nil {
		return nil, err
	}
	r.counters = after.delta(before)

	seen := map[string]bool{}
	for _, s := range servedLog {
		seen[s.endpoint] = true
		if at, ok := removedAt[s.endpoint]; ok && s.at.After(at) {
			r.lateToOld++
			r.maxLate = max(r.maxLate, s.at.Sub(at))
		}
	}
	r.endpoints = len(seen)
	return r, nil
}

// report adds section (b)'s table and summary rows.
func (r *churnResult) report(c *config, rep *report) {
	s := sortedCopy(r.latencies)
	t := &table{title: "(b) Errors under endpoint churn", header: []string{"requests", "2xx", "non-2xx", "errors", "p50", "p99", "p99.9", "max", "replacements", "backends that answered"}}
	t.add(num(float64(r.requests)), num(float64(r.ok)), num(float64(r.non2xx)), num(float64(r.errors)),
		ms(percentile(s, 50)), ms(percentile(s, 99)), ms(percentile(s, 99.9)), ms(percentile(s, 100)),
		num(float64(r.replacements)), num(float64(r.endpoints)))
	t.note("vegeta at a constant %d req/s for %s, keep-alive on; every %s one of %d endpoints is replaced by a backend on a fresh address, in one EndpointSlice write (%d replacements in %s).",
		c.churnRate, c.churn, c.churnInterval, c.churnEndpoints, r.replacements, r.elapsed.Round(time.Millisecond))
	t.note("A removed backend keeps serving for %s after its removal is written, then shuts down gracefully (finishes in-flight requests, closes idle connections).", c.drain)
	t.note("%d requests that started after their backend's removal was written still reached it, the last %s after the write (the change-to-traffic delay under load).", r.lateToOld, ms(r.maxLate))
	if len(r.failures) > 0 {
		t.note("Failures: %s.", formatFailures(r.failures))
	}
	rep.addTable(t)
	rep.target("(b) non-2xx under churn", "0", num(float64(r.non2xx)), pass(r.non2xx == 0))
	rep.target("(b) transport errors under churn", "0", num(float64(r.errors)), pass(r.errors == 0))
}
