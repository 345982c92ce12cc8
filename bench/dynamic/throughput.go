package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// closedLoop is the load of (d), (f) and (h): keep-alive requests for
// path with headers from c.conns connections, by wrk (pinned to loadCPU
// when pin is on) or vegeta, for the duration asked.
func closedLoop(ctx context.Context, c *config, pin pinning, path string, headers []string) func(side, time.Duration) (sample, error) {
	loader := c.resolvedLoader()
	cpu := -1
	if pin.on {
		cpu = loadCPU
	}
	return func(sd side, d time.Duration) (sample, error) {
		url := "http://" + sd.httpAddr + path
		if loader == "wrk" {
			return wrkLoad(ctx, url, sd.host, headers, c.conns, d, cpu)
		}
		return vegetaLoad(ctx, url, sd.host, headers, c.conns, d)
	}
}

// measureThroughput runs closed-loop keep-alive load (wrk -t1, or vegeta
// with a fixed pool of workers and no rate limit) against both sides, in
// alternating rounds, and reports requests/s and the ratio.
func measureThroughput(ctx context.Context, c *config, kind string, pin pinning, sides []side, rep *report) error {
	loader := c.resolvedLoader()
	fmt.Fprintf(os.Stderr, "(d) throughput behind %s backends: %s, %d connections, %d rounds of %s per side ...\n", kind, loader, c.conns, c.rounds, c.tputDuration)
	res, err := abRounds(ctx, c.rounds, sides, time.Second, c.tputDuration, closedLoop(ctx, c, pin, "/", nil))
	if err != nil {
		return err
	}

	// sides, in runComparison's order: the generated rows, then the
	// hand-written reference and the hand-written rows that add to it
	// what the generated config does, step by step.
	const (
		gen, genOff, genDefaults, ref, headers, unbuffered, floor = 0, 1, 2, 3, 4, 5, 6
	)
	backends := "Go echo servers (the in-process `test/echo` handler)"
	if kind == nginxBackends {
		backends = "`return 200` servers of one more nginx (one worker), cheap enough that the front nginx is the bottleneck"
	}
	t := &table{title: fmt.Sprintf("(d) Throughput behind %s backends: generated vs hand-written config", kind), header: []string{"config"}}
	ratios, cpuRatios := compareTable(t, "req", sides, res, ref, func(int) []string { return nil })
	how := fmt.Sprintf("`wrk -t1 -c%d -d%s`", c.conns, wrkSeconds(c.tputDuration))
	if loader == "vegeta" {
		how = fmt.Sprintf("vegeta with %d workers and no rate limit (closed loop) for %s", c.conns, c.tputDuration)
	}
	t.note("Load: %s, keep-alive on; each round runs every config in turn, after a 1 s warm-up of each. \"vs\" columns are the median over rounds of the ratio within the same round.", how)
	t.note("Backends: %d %s.", c.tputBackends, backends)
	if pin.on {
		t.note("CPUs: each nginx under test pinned to CPU %d, wrk and the backend nginx to CPU %d, so that the front nginx is the bottleneck in every round.", frontCPU, loadCPU)
	} else {
		t.note("CPUs: not pinned (%s).", pin.why)
	}
	t.note("All: one nginx worker, the same backends, upstream keepalive 320. Generated: ConfigMap `worker-processes: \"1\"`, `disable-access-log: \"true\"`, metrics on (each location writes a line per request to the metrics log, which the controller reads); Lua balancer (round robin: the balancer handler only), its forwarding headers and ingress-nginx's http-level defaults (`proxy_buffering off` among them). \"generated, metrics off\" is the same with `--enable-metrics=false` (no metrics log rendered). \"generated, defaults\" has only `worker-processes: \"1\"` in its ConfigMap: metrics, HSTS and the access log on, the log in ingress-nginx's format to nginx's stderr, a pipe the controller reads and copies, line by line, to its own output (here a file on tmpfs).")
	t.note("Hand-written: access log off, a plain `upstream` with `keepalive`, `proxy_http_version 1.1`, `proxy_set_header Connection \"\"`. \"+ generated's headers\" adds the generated config's `proxy_set_header` lines through the same maps (Host, Connection/Upgrade, X-Real-IP, X-Forwarded-For/-Host/-Port/-Proto, X-Request-ID), its HTTPS-only `add_header Strict-Transport-Security` and `proxy_next_upstream`; \"+ proxy_buffering off\" adds ingress-nginx's unbuffered responses as well: generated minus it is the Lua balancer's cost (and the metrics'). The last adds the least a Lua balancer keyed per location does (a `set` of the key in the location; `balancer_by_lua` reading it, rotating over fixed peers, calling `set_current_peer` and `set_more_tries`): generated minus it is what Causeway's own Lua costs beyond that floor.")
	t.note("wrk, the backends, nginx and whatever else runs on the machine share its %d CPUs. When \"nginx worker busy\" (its CPU time over the run's) is well below 100%%, nginx is not the bottleneck and the req/s ratio understates nginx's own difference.", runtime.NumCPU())
	t.note("nginx CPU/req is the worker's user+system CPU per request (from /proc, 10 ms ticks). Where nginx is the bottleneck, req/s scales as its inverse.")
	t.note("Controller CPU per request (its process, all threads; not in the nginx columns): %s.", ctlCPUNote(sides, res))
	t.note("%s", failureNote(res))
	rep.addTable(t)

	cpuOf := func(i int) string { return us(medianPer(res[i], sample.cpuPer)) }
	onOff := roundRatio(res[gen], res[genOff], sample.cpuPerValue)
	rep.target(fmt.Sprintf("(d) metrics on / off: nginx CPU per request, %s backends", kind), "≤ 1.05×",
		fmt.Sprintf("%.2f× (%s vs %s)", onOff, cpuOf(gen), cpuOf(genOff)), pass(onOff <= 1.05))
	rep.target(fmt.Sprintf("(d) generated at defaults (metrics, access log, HSTS) / hand-written req/s, %s backends", kind), "≥ 90%",
		pct(ratios[genDefaults]), pass(ratios[genDefaults] >= 0.9))
	rep.target(fmt.Sprintf("(d) nginx CPU per request, generated at defaults / hand-written, %s backends", kind), "informational (≤ 1.11× for 90% when nginx is the bottleneck)",
		fmt.Sprintf("%.2f× (%s vs %s)", cpuRatios[genDefaults], cpuOf(genDefaults), cpuOf(ref)), nil)
	rep.target(fmt.Sprintf("(d) generated (access log off) / hand-written req/s, %s backends", kind), "informational (target (2) is the row at defaults)",
		fmt.Sprintf("%s (nginx CPU %.2f×)", pct(ratios[gen]), cpuRatios[gen]), nil)
	rep.target(fmt.Sprintf("(d) proxy_buffering off: nginx CPU per request, hand-written + headers + proxy_buffering off / + headers, %s backends", kind), "informational",
		fmt.Sprintf("%.2f× (%s vs %s)", roundRatio(res[unbuffered], res[headers], sample.cpuPerValue), cpuOf(unbuffered), cpuOf(headers)), nil)
	rep.target(fmt.Sprintf("(d) Lua balancer and metrics: nginx CPU per request, generated / hand-written + headers + proxy_buffering off, %s backends", kind), "informational",
		fmt.Sprintf("%.2f×", roundRatio(res[gen], res[unbuffered], sample.cpuPerValue)), nil)
	rep.target(fmt.Sprintf("(d) generated / minimal Lua balancer req/s, %s backends", kind), "informational",
		fmt.Sprintf("%s (nginx CPU %.2f×)", pct(roundRatio(res[gen], res[floor], sample.rate)), roundRatio(res[gen], res[floor], sample.cpuPerValue)), nil)
	return nil
}

// ctlCPUNote lists the controller's median CPU per request for the sides
// driven by a controller.
func ctlCPUNote(sides []side, res [][]sample) string {
	var out []string
	for i, sd := range sides {
		if sd.controller != nil {
			out = append(out, fmt.Sprintf("%s %s", sd.name, us(medianPer(res[i], sample.ctlCPUPer))))
		}
	}
	return strings.Join(out, "; ")
}

// resolvedLoader is -loader with auto decided: wrk when installed.
func (c *config) resolvedLoader() string {
	if c.loader != "auto" {
		return c.loader
	}
	if _, err := exec.LookPath("wrk"); err == nil {
		return "wrk"
	}
	return "vegeta"
}

var (
	wrkRequests = regexp.MustCompile(`(\d+) requests in ([0-9.]+)(us|ms|s|m)`)
	wrkNon2xx   = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkSocket   = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// wrkSeconds is d as wrk's -d argument: whole seconds, at least one.
func wrkSeconds(d time.Duration) string {
	return fmt.Sprintf("%ds", max(1, int(math.Round(d.Seconds()))))
}

// wrkLoad runs wrk with one thread and conns keep-alive connections, on
// CPU cpu unless it is negative. Every request sends Host: host and the
// extra headers ("Name: value").
func wrkLoad(ctx context.Context, url, host string, headers []string, conns int, d time.Duration, cpu int) (sample, error) {
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	args := []string{"wrk", "-t1", "-c" + strconv.Itoa(conns), "-d" + wrkSeconds(d), "--timeout", "5s", "-H", "Host: " + host}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	args = append(args, url)
	if cpu >= 0 {
		args = append([]string{"taskset", "-c", strconv.Itoa(cpu)}, args...)
	}
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return sample{}, fmt.Errorf("wrk: %w\n%s", err, out)
	}
	m := wrkRequests.FindSubmatch(out)
	if m == nil {
		return sample{}, fmt.Errorf("wrk: no request count in its output:\n%s", out)
	}
	n, _ := strconv.Atoi(string(m[1]))
	v, _ := strconv.ParseFloat(string(m[2]), 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "m": time.Minute}[string(m[3])]
	s := sample{count: n, elapsed: time.Duration(v * float64(unit))}
	if m := wrkNon2xx.FindSubmatch(out); m != nil {
		bad, _ := strconv.Atoi(string(m[1]))
		s.bad += bad
		s.count -= bad
	}
	if m := wrkSocket.FindSubmatch(out); m != nil {
		for _, f := range m[1:] {
			bad, _ := strconv.Atoi(string(f))
			s.bad += bad
		}
	}
	return s, nil
}

// vegetaLoad runs vegeta as a closed loop: conns workers, each sending its
// next request as soon as the last one is answered, for d. Headers are as
// for wrkLoad.
func vegetaLoad(ctx context.Context, url, host string, headers []string, conns int, d time.Duration) (sample, error) {
	atk := vegeta.NewAttacker(vegeta.KeepAlive(true), vegeta.Timeout(5*time.Second), vegeta.Workers(uint64(conns)),
		vegeta.MaxWorkers(uint64(conns)), vegeta.Connections(conns), vegeta.MaxConnections(conns), vegeta.Redirects(vegeta.NoFollow))
	target := vegeta.Target{Method: http.MethodGet, URL: url, Header: http.Header{"Host": {host}}}
	for _, h := range headers {
		if name, value, ok := strings.Cut(h, ":"); ok {
			target.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
	start := time.Now()
	var s sample
	stop := context.AfterFunc(ctx, func() { atk.Stop() })
	defer stop()
	for res := range atk.Attack(vegeta.NewStaticTargeter(target), vegeta.Rate{}, d, "throughput") {
		if res.Code >= 200 && res.Code <= 299 {
			s.count++
		} else {
			s.bad++
		}
	}
	s.elapsed = time.Since(start)
	return s, ctx.Err()
}

// pct formats a ratio as a percentage.
func pct(r float64) string { return fmt.Sprintf("%.1f%%", 100*r) }

// us formats a duration in microseconds.
func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond)) }
