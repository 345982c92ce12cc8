package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Section (g): requests/s over HTTP/2, through the generated config's TLS
// listener (HTTP/2 on by default, use-http2) and through a hand-written
// nginx with `listen ... ssl http2`, with h2load (nghttp2-client) as the
// load generator.
const (
	h2Host = "h2.bench.test"
	// h2KeepaliveRequests is keepalive_requests on both sides. nginx sends
	// GOAWAY after that many requests on one connection (1000 by default,
	// for HTTP/2 too since 1.19.7), and h2load does not reconnect in a
	// timed run (-D): its clients would stop after 1000 requests.
	h2KeepaliveRequests = 100_000_000
)

// runH2 starts backends of one kind, a controller serving a TLS Ingress
// with one nginx worker and a hand-written nginx offering HTTP/2 with the
// same certificate, and runs section (g), or notes why it cannot.
func runH2(ctx context.Context, e *env, c *config, rep *report, kind string) error {
	if _, err := exec.LookPath("h2load"); err != nil {
		fmt.Fprintln(os.Stderr, "(g) skipped: h2load not found (apt-get install -y nghttp2-client)")
		rep.skip(fmt.Sprintf("(g) HTTP/2 generated / hand-written req/s, %s backends", kind), "≥ 90%", "h2load not installed (apt-get install -y nghttp2-client)")
		return nil
	}
	p, bs, backendMaster, err := newKindPool(ctx, e, kind, c.tputBackends, "")
	if err != nil {
		return err
	}
	defer p.close()
	cert, err := newCertificate(h2Host, keyBits["ecdsa"])
	if err != nil {
		return err
	}
	app := ingressClassYAML + configMapYAML(map[string]string{"worker-processes": "1", "disable-access-log": "true",
		"keep-alive-requests": strconv.Itoa(h2KeepaliveRequests)}) +
		serviceYAML() + ingressYAML("web", httpHost) + cert.secretYAML("h2") + tlsIngressYAML("h2", cert.host, "h2")
	gen, err := e.startController(ctx, "h2-generated-"+kind, map[string]string{"app.yaml": app, "slice.yaml": sliceYAML(p.port, ips(bs)...)}, c)
	if err != nil {
		return err
	}
	defer gen.stop()
	hand, err := e.startHandNginx(ctx, "h2-handwritten-"+kind, bs, []*certificate{cert}, handOptions{http2: true, keepaliveRequests: h2KeepaliveRequests, tlsSteps: true})
	if err != nil {
		return err
	}
	sides := []side{
		{name: "generated", httpAddr: gen.HTTPAddr(), httpsAddr: gen.HTTPSAddr(), host: httpHost, master: gen.nginxPID},
		{name: "hand-written", httpAddr: hand.HTTPAddr(), httpsAddr: hand.HTTPSAddr(), host: httpHost, master: hand.masterPID},
		// The steps from the minimal proxy towards the generated config,
		// as in (d): what ingress-nginx's behaviour costs over HTTP/2, and
		// the floor of any Lua-balanced upstream on top of it.
		{name: "hand-written + headers + proxy_buffering off", httpAddr: hand.UnbufferedAddr(), httpsAddr: hand.HTTPSUnbufferedAddr(), host: httpHost, master: hand.masterPID},
		{name: "hand-written + headers + proxy_buffering off + minimal Lua balancer", httpAddr: hand.FloorAddr(), httpsAddr: hand.HTTPSFloorAddr(), host: httpHost, master: hand.masterPID},
	}
	if err := checkSides(ctx, sides, bs, []*certificate{cert}); err != nil {
		return err
	}
	pin := planPinning(c, kind, "h2load")
	if err := pin.apply([]int{gen.nginxPID(), hand.masterPID()}, backendMaster); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "(g) comparing generated (%s) with hand-written (%s) over HTTP/2, one worker each, %s backends\n", gen.HTTPSAddr(), hand.HTTPSAddr(), kind)
	if err := measureH2(ctx, c, kind, pin, sides, cert, rep); err != nil {
		return fmt.Errorf("(g) HTTP/2 throughput: %w", err)
	}
	return nil
}

// measureH2 runs h2load against both sides in alternating rounds and
// reports requests/s and nginx CPU per request.
func measureH2(ctx context.Context, c *config, kind string, pin pinning, sides []side, cert *certificate, rep *report) error {
	proto := "h2"
	if c.h2H1 {
		proto = "HTTP/1.1"
	}
	fmt.Fprintf(os.Stderr, "(g) %s throughput behind %s backends: h2load %s, %d rounds of %s per side ...\n", proto, kind, c.h2Args(), c.rounds, c.tputDuration)
	cpu := -1
	if pin.on {
		cpu = loadCPU
	}
	var mu sync.Mutex
	negotiated := map[string]bool{}
	load := func(sd side, d time.Duration) (sample, error) {
		s, neg, err := h2Load(ctx, c, sd.httpsAddr, cert.host, d, cpu)
		mu.Lock()
		negotiated[neg] = true
		mu.Unlock()
		return s, err
	}
	res, err := abRounds(ctx, c.rounds, sides, time.Second, c.tputDuration, load)
	if err != nil {
		return err
	}
	const ref = 1
	title := fmt.Sprintf("(g) HTTP/2 throughput behind %s backends: generated vs hand-written config", kind)
	if c.h2H1 {
		title = fmt.Sprintf("(g) HTTP/1.1 over TLS (-h2-h1) behind %s backends: generated vs hand-written config", kind)
	}
	t := &table{title: title, header: []string{"config"}}
	ratios, cpuRatios := compareTable(t, "req", sides, res, ref, func(int) []string { return nil })
	var negs []string
	for n := range negotiated {
		negs = append(negs, n)
	}
	slices.Sort(negs)
	t.note("Load: `h2load %s -D %s` against `https://%s/` (`--connect-to` the side's address), %s; negotiated: %s. Each round runs both configs in turn, after a 1 s warm-up of each. \"vs\" columns are the median over rounds of the ratio within the same round.",
		c.h2Args(), h2Seconds(c.tputDuration), cert.host, c.h2Concurrency(), strings.Join(negs, "; "))
	backends := "Go echo servers (the in-process `test/echo` handler)"
	if kind == nginxBackends {
		backends = "`return 200` servers of one more nginx (one worker)"
	}
	t.note("Backends: %d %s, reached over HTTP/1.1 with upstream keepalive on both sides.", c.tputBackends, backends)
	if pin.on {
		t.note("CPUs: each nginx under test pinned to CPU %d, h2load and the backend nginx to CPU %d.", frontCPU, loadCPU)
	} else {
		t.note("CPUs: not pinned (%s).", pin.why)
	}
	t.note("Both: one nginx worker, access log off, the same ECDSA P-256 certificate for `%s`, `ssl_protocols TLSv1.2 TLSv1.3`, a shared session cache, nginx's `http2_max_concurrent_streams 128`, `keepalive_requests %d` (h2load does not reconnect after nginx's GOAWAY in a timed run). Generated: an Ingress with `tls` for the host (HTTP/2 from the default `use-http2: \"true\"`), ConfigMap `worker-processes: \"1\"`, `disable-access-log: \"true\"`, `keep-alive-requests`; the certificate from `ssl_certificate_by_lua`, the Lua balancer and the forwarding headers of (d). Hand-written: (d)'s minimal proxy (a plain `upstream` with `keepalive 320`, `proxy_http_version 1.1`, `proxy_set_header Connection \"\"`) on `listen ... ssl http2` with a static `ssl_certificate`. The two rows after it are (d)'s steps over the same TLS listener settings, each on a port of its own of the hand-written nginx: ingress-nginx's forwarding headers, X-Request-ID, HSTS, retries and `proxy_buffering off`; then a minimal Lua balancer on top (set a key, read it, rotate over fixed peers, `set_current_peer`): the floor of any Lua-balanced configuration.", cert.host, h2KeepaliveRequests)
	t.note("h2load, the backends, nginx and whatever else runs on the machine share its %d CPUs. When \"nginx worker busy\" is well below 100%%, nginx is not the bottleneck and the req/s ratio understates nginx's own difference; nginx CPU/req (the worker's user+system CPU per request, from /proc, 10 ms ticks) does not.", runtime.NumCPU())
	t.note("%s", failureNote(res))
	rep.addTable(t)
	what := "(g) HTTP/2 generated / hand-written req/s"
	if c.h2H1 {
		what = "(g) HTTP/1.1 over TLS (-h2-h1, not the target's protocol) generated / hand-written req/s"
	}
	var ok *bool
	if !c.h2H1 {
		ok = pass(ratios[0] >= 0.9)
	}
	rep.target(fmt.Sprintf("%s, %s backends", what, kind), "≥ 90%", pct(ratios[0]), ok)
	rep.target(fmt.Sprintf("(g) nginx CPU per request over %s, generated / hand-written, %s backends", proto, kind),
		"informational (≤ 1.11× for 90% when nginx is the bottleneck)", fmt.Sprintf("%.2f×", cpuRatios[0]), nil)
	rep.target(fmt.Sprintf("(g) ingress-nginx's headers and unbuffered responses alone over %s: hand-written + headers + proxy_buffering off / hand-written req/s, %s backends", proto, kind),
		"informational", fmt.Sprintf("%s (nginx CPU %.2f×)", pct(ratios[2]), cpuRatios[2]), nil)
	rep.target(fmt.Sprintf("(g) the floor over %s: hand-written + headers + minimal Lua balancer / hand-written req/s, %s backends", proto, kind),
		"informational", fmt.Sprintf("%s (nginx CPU %.2f×)", pct(ratios[3]), cpuRatios[3]), nil)
	rep.target(fmt.Sprintf("(g) over %s: generated / the floor, req/s, %s backends", proto, kind),
		"informational", pct(roundRatio(res[0], res[3], sample.rate)), nil)
	return nil
}

// h2Args is h2load's concurrency flags: -c clients (connections), -m
// streams per connection, and --h1 under -h2-h1.
func (c *config) h2Args() string {
	if c.h2H1 {
		return fmt.Sprintf("--h1 -c%d -m1", c.h2Conns*c.h2Streams)
	}
	return fmt.Sprintf("-c%d -m%d", c.h2Conns, c.h2Streams)
}

// h2Concurrency says what h2Args means in streams and connections.
func (c *config) h2Concurrency() string {
	if c.h2H1 {
		return fmt.Sprintf("HTTP/1.1 over TLS, %d connections with one request in flight each (the same concurrency as %d×%d HTTP/2 streams)", c.h2Conns*c.h2Streams, c.h2Conns, c.h2Streams)
	}
	return fmt.Sprintf("%d concurrent HTTP/2 streams: %d connection(s) with %d streams in flight each", c.h2Conns*c.h2Streams, c.h2Conns, c.h2Streams)
}

// h2Seconds is d as h2load's -D argument: whole milliseconds.
func h2Seconds(d time.Duration) string {
	return fmt.Sprintf("%dms", max(1, d.Milliseconds()))
}

var (
	h2Finished = regexp.MustCompile(`(?m)^finished in ([0-9.]+)(us|ms|s|m|h), `)
	// h2Pair is one "N name" field of a summary line ("requests: ...",
	// "status codes: ..."); see h2Fields.
	h2Pair = regexp.MustCompile(`(\d+) ([0-9A-Za-z]+)`)
	h2Info = regexp.MustCompile(`(?m)^(TLS Protocol|Cipher|Application protocol): (.*)$`)
)

// h2Fields parses the h2load summary line that starts with prefix into its
// "N name" pairs ("requests: 10 total, 9 done" gives total 10, done 9).
func h2Fields(out, prefix string) (map[string]int, bool) {
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		m := map[string]int{}
		for _, f := range h2Pair.FindAllStringSubmatch(rest, -1) {
			m[f[2]], _ = strconv.Atoi(f[1])
		}
		return m, true
	}
	return nil, false
}

// h2Load runs one timed h2load against addr with server name and
// :authority host, on CPU cpu unless it is negative. It counts 2xx answers
// as successes, everything else as failures, and returns the negotiated
// protocol, TLS version and cipher. Anything but h2 (unless -h2-h1) is an
// error: h2load falls back to HTTP/1.1 silently when ALPN does.
func h2Load(ctx context.Context, c *config, addr, host string, d time.Duration, cpu int) (sample, string, error) {
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	args := append([]string{"h2load", "-t1"}, strings.Fields(c.h2Args())...)
	args = append(args, "-D", h2Seconds(d), "--connect-to", addr, "https://"+host+"/")
	if cpu >= 0 {
		args = append([]string{"taskset", "-c", strconv.Itoa(cpu)}, args...)
	}
	raw, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	out := string(raw)
	if err != nil {
		return sample{}, "", fmt.Errorf("h2load: %w\n%s", err, out)
	}
	info := map[string]string{}
	for _, m := range h2Info.FindAllStringSubmatch(out, -1) {
		info[m[1]] = strings.TrimSpace(m[2])
	}
	neg := fmt.Sprintf("%s, %s, %s", info["Application protocol"], info["TLS Protocol"], info["Cipher"])
	want := "h2"
	if c.h2H1 {
		want = "http/1.1"
	}
	if info["Application protocol"] != want {
		return sample{}, neg, fmt.Errorf("h2load negotiated %q, want %s:\n%s", info["Application protocol"], want, out)
	}
	fin := h2Finished.FindStringSubmatch(out)
	reqs, ok1 := h2Fields(out, "requests: ")
	codes, ok2 := h2Fields(out, "status codes: ")
	if fin == nil || !ok1 || !ok2 {
		return sample{}, neg, fmt.Errorf("h2load: no summary in its output:\n%s", out)
	}
	v, _ := strconv.ParseFloat(fin[1], 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour}[fin[2]]
	s := sample{count: codes["2xx"], elapsed: time.Duration(v * float64(unit)), why: map[string]int{}}
	// h2load's failed counts transport errors (errored), timeouts and
	// answers of 4xx and 5xx; 3xx it counts as success, this as failure.
	s.why["h2load: stream or connection errors"] = reqs["errored"]
	s.why["h2load: timeouts"] = reqs["timeout"]
	s.why["HTTP 3xx"] = codes["3xx"]
	s.why["HTTP 4xx"] = codes["4xx"]
	s.why["HTTP 5xx"] = codes["5xx"]
	if other := reqs["failed"] - reqs["errored"] - reqs["timeout"] - codes["4xx"] - codes["5xx"]; other > 0 {
		s.why["h2load: other failures"] = other
	}
	for k, n := range s.why {
		if n <= 0 {
			delete(s.why, k)
			continue
		}
		s.bad += n
	}
	if s.count == 0 {
		return s, neg, fmt.Errorf("h2load: no 2xx answers:\n%s", out)
	}
	return s, neg, nil
}
