package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// Section (h): a canary weight change, from the rename of the canary
// Ingress's manifest to the first response from the backend the new
// weight chooses. The weight alternates between 100 and 0, so that a
// single request tells which weight a worker applies.

const canaryService = "web-canary"

// canaryServiceYAML is the canary's Service and its only EndpointSlice.
func canaryServiceYAML(port int, ip string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %[1]s-1
  namespace: %[2]s
  labels: {kubernetes.io/service-name: %[1]s}
addressType: IPv4
ports: [{name: http, port: %[3]d, protocol: TCP}]
endpoints:
  - addresses: [%[4]q]
    conditions: {ready: true}
---
`, canaryService, ns, port, ip)
}

// canaryIngressYAML is the canary of the benchmark host at weight w.
func canaryIngressYAML(w int) string { return canaryOfYAML(httpHost, w) }

// canaryOfYAML is a canary of host at weight w, with a header rule (which
// requests without the header pass over).
func canaryOfYAML(host string, w int) string {
	return annotatedIngressYAML("web-canary", host, canaryService,
		[2]string{"canary", "true"}, [2]string{"canary-by-header", "X-Canary"}, [2]string{"canary-weight", strconv.Itoa(w)})
}

// twoBackends starts a pool with two backends: the main's and the
// canary's.
func twoBackends(e *env) (*pool, []*backend, error) {
	p, err := newPool(e)
	if err != nil {
		return nil, nil, err
	}
	bs, err := p.startN(2)
	if err != nil {
		p.close()
		return nil, nil, err
	}
	return p, bs, nil
}

// runCanary runs section (h) against a controller with default settings.
func runCanary(ctx context.Context, e *env, c *config, rep *report) error {
	p, bs, err := twoBackends(e)
	if err != nil {
		return err
	}
	defer p.close()
	main, canary := bs[0], bs[1]
	ctl, err := e.startController(ctx, "canary", map[string]string{
		"app.yaml":    ingressClassYAML + serviceYAML() + ingressYAML("web", httpHost) + canaryServiceYAML(p.port, canary.IP),
		"slice.yaml":  sliceYAML(p.port, main.IP),
		"canary.yaml": canaryIngressYAML(0),
	}, c)
	if err != nil {
		return err
	}
	defer ctl.stop()
	workers, _, err := nginxWorkers(ctl.nginxPID())
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "(h) %d canary weight changes ...\n", c.latencyIterations)
	r, err := flipWeights(ctx, c, ctl, workers, ctl.HTTPAddr(), main, canary, func(weight int) (time.Time, error) {
		return ctl.WriteManifest("canary.yaml", canaryIngressYAML(weight))
	})
	if err != nil {
		return err
	}
	r.reportCanary(c, rep)
	return measureCanaryCost(ctx, e, c, rep)
}

// reportCanary adds section (h)'s table and summary rows.
func (r *latencyResult) reportCanary(c *config, rep *report) {
	r.reportWeights(rep, "(h)", "Canary weight change", "canary",
		"Each change rewrites the canary Ingress (temp file + rename), its canary-weight alternating between 100 and 0, so one response tells which weight served it; the time runs from the rename to the first response from the backend the new weight chooses.")
}

// reportWeights adds the table and summary rows of a weight-change
// section: (h) a canary's, (p) an HTTPRoute's.
func (r *latencyResult) reportWeights(rep *report, section, what, short, how string) {
	s, rtt := sortedCopy(r.samples), sortedCopy(r.rtts)
	a, rest := sortedCopy(r.apply), sortedCopy(r.rest)
	t := &table{title: section + " " + what + " → traffic split visible", header: []string{"", "changes", "p50", "p90", "p99", "max", "not seen in time", "stale answers after", "failed polls"}}
	t.add("**rename → first response from the backend the new weight chooses**", fmt.Sprint(len(s)+r.timeouts), ms(percentile(s, 50)), ms(percentile(s, 90)), ms(percentile(s, 99)), ms(percentile(s, 100)),
		fmt.Sprint(r.timeouts), fmt.Sprintf("%d of %d", r.stale, (len(s)+r.timeouts)*staleChecks), fmt.Sprint(r.failed))
	t.add("of which: controller, event → push returned", fmt.Sprint(len(a)), ms(percentile(a, 50)), ms(percentile(a, 90)), ms(percentile(a, 99)), ms(percentile(a, 100)), "", "", "")
	t.add("of which: the rest (file event, files-source batching, poll)", fmt.Sprint(len(rest)), ms(percentile(rest, 50)), ms(percentile(rest, 90)), ms(percentile(rest, 99)), ms(percentile(rest, 100)), "", "", "")
	t.note("%s", how)
	t.note("nginx has %d workers; polls are a new connection each; a poll's round trip is %s p50, %s p99 (%d polls in all). After the first answer, %d more requests follow; \"stale answers\" counts those still served by the other backend.",
		r.workers, ms(percentile(rtt, 50)), ms(percentile(rtt, 99)), r.polls, staleChecks)
	t.note("nginx reloads over the run: %v; dynamic updates pushed: %v.", num(r.counters.reloads), num(r.counters.updates))
	rep.addTable(t)
	p99 := percentile(s, 99)
	rep.target(section+" "+short+" weight change → split visible p99", "≤ 50 ms", ms(p99), pass(r.timeouts == 0 && len(s) > 0 && p99 <= 50*time.Millisecond))
	rep.target(section+" reloads during "+short+" weight changes", "0", num(r.counters.reloads), pass(r.counters.reloads == 0))
}

// measureCanaryCost compares nginx CPU per request on a location without
// a canary and on split locations (canary weight 0 and 100, with a header
// rule the requests do not match), through one controller with one worker
// and the access log off, in alternating rounds of wrk (or vegeta) load.
func measureCanaryCost(ctx context.Context, e *env, c *config, rep *report) error {
	p, bs, err := twoBackends(e)
	if err != nil {
		return err
	}
	defer p.close()
	quiet := map[string]string{"worker-processes": "1", "disable-access-log": "true"}
	app := ingressClassYAML + configMapYAML(quiet) + serviceYAML() + ingressYAML("web", httpHost) + canaryServiceYAML(p.port, bs[1].IP)
	hosts := map[int]string{0: "canary0.bench.test", 100: "canary100.bench.test"}
	for w, host := range hosts {
		app += ingressYAML(fmt.Sprintf("web-%d", w), host) +
			strings.Replace(canaryOfYAML(host, w), "name: web-canary\n", fmt.Sprintf("name: web-canary-%d\n", w), 1)
	}
	ctl, err := e.startController(ctx, "canary-cost", map[string]string{"app.yaml": app, "slice.yaml": sliceYAML(p.port, bs[0].IP)}, c)
	if err != nil {
		return err
	}
	defer ctl.stop()
	for host, want := range map[string]string{httpHost: bs[0].Addr, hosts[0]: bs[0].Addr, hosts[100]: bs[1].Addr} {
		if err := waitServedBy(ctx, hostClient(ctl.HTTPAddr(), host), want, 10*time.Second); err != nil {
			return fmt.Errorf("%s: %w", host, err)
		}
	}
	loader := c.resolvedLoader()
	load := func(sd side, d time.Duration) (sample, error) {
		if loader == "wrk" {
			return wrkLoad(ctx, "http://"+sd.httpAddr+"/", sd.host, nil, c.conns, d, -1)
		}
		return vegetaLoad(ctx, "http://"+sd.httpAddr+"/", sd.host, nil, c.conns, d)
	}
	sides := []side{
		{name: "no canary", httpAddr: ctl.HTTPAddr(), host: httpHost, master: ctl.nginxPID},
		{name: "split, weight 0 (main chosen)", httpAddr: ctl.HTTPAddr(), host: hosts[0], master: ctl.nginxPID},
		{name: "split, weight 100 (canary chosen)", httpAddr: ctl.HTTPAddr(), host: hosts[100], master: ctl.nginxPID},
	}
	fmt.Fprintf(os.Stderr, "(h) per-request cost: %s, %d rounds of %s per location ...\n", loader, c.rounds, c.tputDuration)
	res, err := abRounds(ctx, c.rounds, sides, time.Second, c.tputDuration, load)
	if err != nil {
		return err
	}
	t := &table{title: "(h) Canary: nginx CPU per request, split locations vs a location without a canary", header: []string{"location"}}
	_, cpu := compareTable(t, "req", sides, res, 0, func(int) []string { return nil })
	t.note("One controller, ConfigMap `worker-processes: \"1\"` and `disable-access-log: \"true\"`, metrics on; Go echo backends (one each side); %s with %d keep-alive connections, %d rounds of %s per location, each round every location in turn. The split's rule has a header, which the requests do not send, and the weight.", loader, c.conns, c.rounds, c.tputDuration)
	t.note("%s", failureNote(res))
	rep.addTable(t)
	rep.target("(h) nginx CPU per request, split location / no canary", "informational", fmt.Sprintf("weight 0: %.2f×, weight 100: %.2f×", cpu[1], cpu[2]), nil)
	return nil
}

// hostClient sends requests to addr with Host host.
func hostClient(addr, host string) *http.Client {
	c := httpClient(addr, false)
	c.Transport = hostTransport{host: host, next: c.Transport}
	return c
}

type hostTransport struct {
	host string
	next http.RoundTripper
}

func (t hostTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = t.host
	return t.next.RoundTrip(r)
}

// flipWeights changes a weight c.latencyIterations times through write
// (100 sends every request to canary, 0 to main) and measures each
// change until the first response, through addr, from the backend the
// new weight chooses: sections (h) and (p).
func flipWeights(ctx context.Context, c *config, ctl *controllerProc, workers int, addr string, main, canary *backend,
	write func(weight int) (time.Time, error)) (*latencyResult, error) {
	client := httpClient(addr, c.latencyKeepAlive)
	defer client.CloseIdleConnections()
	if err := waitServedBy(ctx, client, main.Addr, 10*time.Second); err != nil {
		return nil, err
	}
	r := &latencyResult{workers: workers}
	before, err := ctl.snapshot()
	if err != nil {
		return nil, err
	}
	prev := before
	for i := range c.latencyIterations {
		weight, want := 100, canary.Addr
		if i%2 == 1 {
			weight, want = 0, main.Addr
		}
		at, err := write(weight)
		if err != nil {
			return nil, err
		}
		took := time.Duration(-1)
		for {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if ep, _ := r.poll(ctx, client); ep == want {
				took = time.Since(at)
				r.samples = append(r.samples, took)
				break
			}
			if time.Since(at) > c.latencyTimeout {
				r.timeouts++
				break
			}
			if c.pollInterval > 0 {
				time.Sleep(c.pollInterval)
			}
		}
		for range staleChecks {
			if ep, ok := poll(ctx, client); ok && ep != want {
				r.stale++
			}
		}
		now, err := ctl.snapshot()
		if err != nil {
			return nil, err
		}
		if d := now.delta(prev); d.applyCount == 1 && took >= 0 {
			apply := time.Duration(d.applySum * float64(time.Second))
			r.apply, r.rest = append(r.apply, apply), append(r.rest, took-apply)
		}
		prev = now
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
