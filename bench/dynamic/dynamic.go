package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// runDynamic runs sections (a), (b) and their part of (c) against one
// controller with default settings (worker_processes auto, access log on),
// so that endpoint changes must reach every worker.
func runDynamic(ctx context.Context, e *env, c *config, rep *report) error {
	p, err := newPool(e)
	if err != nil {
		return err
	}
	defer p.close()
	first, err := p.start()
	if err != nil {
		return err
	}
	ctl, err := e.startController(ctx, "dynamic", map[string]string{
		"app.yaml":   ingressClassYAML + serviceYAML() + ingressYAML("web", httpHost),
		"slice.yaml": sliceYAML(p.port, first.IP),
	}, c)
	if err != nil {
		return err
	}
	defer ctl.stop()
	start, err := ctl.snapshot()
	if err != nil {
		return err
	}
	workers, _, err := nginxWorkers(ctl.nginxPID())
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "controller ready: nginx %s with %d workers, %v reloads at start\n", ctl.HTTPAddr(), workers, start.reloads)

	reloads := &table{title: "(c) nginx reloads", header: []string{"run", "reloads", "endpoint updates pushed", "failed pushes", "controller event→live (mean)"}}
	reloads.note("Counted from `causeway_nginx_reloads_total` on the metrics port, as the change over each run; the %v reload(s) at start are excluded.", start.reloads)
	reloads.note("Event→live is the controller's `causeway_config_apply_seconds`: from its source noticing a change to the push returning; it excludes the files source's own 10 ms batching of file events.")
	addReloads := func(name string, d counters) {
		reloads.add(name, num(d.reloads), num(d.updates), num(d.updateFailures), ms(d.applyMean()))
		rep.target("(c) reloads during "+name, "0", num(d.reloads), pass(d.reloads == 0))
	}

	if c.section("a") {
		fmt.Fprintf(os.Stderr, "(a) %d endpoint swaps ...\n", c.latencyIterations)
		r, err := measureLatency(ctx, c, ctl, p, first, workers)
		if err != nil {
			return fmt.Errorf("(a) change-to-traffic latency: %w", err)
		}
		r.report(c, rep)
		addReloads("(a) latency", r.counters)
	}
	if c.section("b") {
		fmt.Fprintf(os.Stderr, "(b) churn for %s at %d req/s ...\n", c.churn, c.churnRate)
		r, err := measureChurn(ctx, c, ctl, p)
		if err != nil {
			return fmt.Errorf("(b) errors under churn: %w", err)
		}
		r.report(c, rep)
		addReloads("(b) churn", r.counters)
	}
	if n := countInFile(ctl.LogPath, "[error]"); n > 0 {
		reloads.note("The controller's log (nginx error log included) has %d `[error]` lines.", n)
	}
	rep.addTable(reloads)
	return nil
}

// countInFile counts the lines of path that contain s.
func countInFile(path, s string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n := 0
	for line := range bytes.Lines(data) {
		if bytes.Contains(line, []byte(s)) {
			n++
		}
	}
	return n
}

// httpClient sends requests for any URL to addr, so the URL's host only
// sets the Host header.
func httpClient(addr string, keepAlive bool) *http.Client {
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			},
			DisableKeepAlives:   !keepAlive,
			MaxIdleConnsPerHost: 4,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
