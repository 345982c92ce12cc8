// Command dynamic benchmarks Causeway's reload-free updates with the real
// causeway binary, real nginx and local echo backends, and prints Markdown
// tables. It is a benchmark, not a test: it reports numbers against the
// targets of issue 4 and asserts nothing.
//
//	go run ./bench/dynamic                 # full run, a few minutes
//	go run ./bench/dynamic -quick          # under a minute
//	go run ./bench/dynamic -out results.md # also write the tables to a file
//
// It measures, in order:
//
//	(a) change-to-traffic latency of an EndpointSlice swap;
//	(b) errors while one endpoint is replaced every 100 ms under constant load;
//	(c) nginx reloads during (a) and (b);
//	(d) requests/s through the generated config vs a hand-written nginx proxy;
//	(e) full TLS handshakes/s for a host with its own certificate, loaded per
//	    handshake by the generated config vs statically by a hand-written one;
//	(f) requests per nginx CPU-second through a location carrying common
//	    ingress-nginx annotations (regex rewrite, CORS, timeouts, buffering,
//	    body size, custom headers) vs the same behaviour written by hand;
//	(g) requests/s over HTTP/2 (h2load, 100 concurrent streams) through the
//	    generated TLS listener vs a hand-written `listen ... ssl http2`;
//	(h) canary weight change to the new split in traffic, reloads, and the
//	    nginx CPU a split location costs;
//	(i) what basic auth and source-address lists add to nginx CPU per
//	    request, generated vs written by hand;
//	(j) external authentication with a cached answer vs hand-written
//	    auth_request and proxy_cache;
//	(k) TCP through a TransportServer (stream module) vs a hand-written
//	    nginx stream proxy: bulk MiB/s and short connections per second.
//
// Everything listens on 127.0.0.0/8 only, and every load loop is bounded by
// a duration or a count. Ctrl-C stops the run and every process it started.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// config holds the command-line settings of one run.
type config struct {
	out  string
	bin  string
	keep bool
	only string

	plane dataPlane
	// alsoAngie, when set, is a `make angie` directory whose Angie runs
	// the same sections after the first data plane, in the same run.
	alsoAngie string

	syncQuiet, syncMaxDelay time.Duration

	latencyIterations int
	latencyKeepAlive  bool
	latencyTimeout    time.Duration
	pollInterval      time.Duration

	churn          time.Duration
	churnInterval  time.Duration
	churnRate      int
	churnEndpoints int
	drain          time.Duration

	loader       string
	tputDuration time.Duration
	tputBackends int
	tputKinds    string
	pin          bool
	rounds       int
	conns        int

	tlsDuration time.Duration
	tlsConns    int
	tlsKeys     string

	h2Conns, h2Streams int
	h2H1               bool

	streamConns, streamShortConns int
	streamDuration                time.Duration
}

func main() {
	var c config
	quick := flag.Bool("quick", false, "short durations and counts (under a minute); explicit flags still win")
	flag.StringVar(&c.out, "out", "", "also write the Markdown tables to this file")
	flag.StringVar(&c.plane.binary, "binary", "nginx", "the data plane under test, nginx or angie (.cache/angie/sbin/angie after make angie); backend nginx stays Debian's")
	flag.StringVar(&c.alsoAngie, "also-angie", "", "run the selected sections again on the Angie that `make angie` built in this directory (.cache/angie), in the same run, for a side-by-side report")
	flag.StringVar(&c.plane.modules, "modules-dir", debianModules, "the binary's dynamic modules (.cache/angie/modules for Angie)")
	flag.StringVar(&c.plane.luaPath, "lua-package-path", "", "where the binary's lua-resty-core is, as the controller's --lua-package-path ('$PWD/.cache/angie/lualib/?.lua;;' for Angie)")
	flag.StringVar(&c.bin, "causeway", "", "causeway binary to run (default: go build ./cmd/causeway)")
	flag.BoolVar(&c.keep, "keep", false, "keep the work directory (configs, controller and nginx logs)")
	flag.StringVar(&c.only, "only", "a,b,d,e,f,g,h,i,j,k,l,m,n,o,p", "comma-separated sections to run (a and b include their part of c)")
	flag.DurationVar(&c.syncQuiet, "sync-quiet-period", 5*time.Millisecond, "controller --sync-quiet-period")
	flag.DurationVar(&c.syncMaxDelay, "sync-max-delay", 100*time.Millisecond, "controller --sync-max-delay")
	flag.IntVar(&c.latencyIterations, "latency-iterations", 100, "(a) endpoint swaps measured")
	flag.BoolVar(&c.latencyKeepAlive, "latency-keepalive", false, "(a) poll over one keep-alive connection instead of a new connection per request")
	flag.DurationVar(&c.pollInterval, "poll-interval", time.Millisecond, "(a) pause between polls; 0 polls back to back")
	flag.DurationVar(&c.latencyTimeout, "latency-timeout", 5*time.Second, "(a) give up on one swap after this long")
	flag.DurationVar(&c.churn, "churn", 60*time.Second, "(b) how long endpoints are churned under load")
	flag.DurationVar(&c.churnInterval, "churn-interval", 100*time.Millisecond, "(b) one endpoint is replaced this often")
	flag.IntVar(&c.churnRate, "churn-rate", 500, "(b) constant load in requests/s")
	flag.IntVar(&c.churnEndpoints, "churn-endpoints", 3, "(b) ready endpoints at any time (at least 2)")
	flag.DurationVar(&c.drain, "drain", 2*time.Second, "(b) how long a removed backend keeps running")
	flag.StringVar(&c.loader, "loader", "auto", "(d, f) closed-loop load generator: wrk, vegeta, or auto (wrk when installed); (g) always uses h2load")
	flag.DurationVar(&c.tputDuration, "tput-duration", 10*time.Second, "(d, f, g) duration of each throughput run")
	flag.IntVar(&c.tputBackends, "tput-backends", 2, "(d, e, f, g) backends behind both configs")
	flag.StringVar(&c.tputKinds, "tput-backend-kinds", "nginx,go", "(d, f, g) backend kinds, each compared on its own: nginx (return 200, cheap) and go (the echo server); (e) runs behind go")
	flag.BoolVar(&c.pin, "pin", true, "(d, f, g) behind nginx backends, pin the nginx under test to CPU 1 and the load generator and the backends to CPU 0")
	flag.IntVar(&c.rounds, "rounds", 3, "(d, e, f, g) A/B rounds, alternating generated and hand-written")
	flag.IntVar(&c.conns, "conns", 50, "(d, f) concurrent keep-alive connections")
	flag.DurationVar(&c.tlsDuration, "tls-duration", 5*time.Second, "(e) duration of each handshake run")
	flag.IntVar(&c.tlsConns, "tls-conns", 8, "(e) concurrent handshaking clients")
	flag.StringVar(&c.tlsKeys, "tls-keys", "ecdsa,rsa2048", "(e) and (m) certificate key types: ecdsa, rsa2048")
	flag.IntVar(&c.h2Conns, "h2-conns", 1, "(g) h2load connections (-c)")
	flag.IntVar(&c.h2Streams, "h2-streams", 100, "(g) concurrent streams per connection (h2load -m); at most 128, nginx's http2_max_concurrent_streams on both sides")
	flag.BoolVar(&c.h2H1, "h2-h1", false, "(g) for comparison: the same load over HTTP/1.1 with TLS (h2load --h1, h2-conns × h2-streams connections), not the target's protocol")
	flag.IntVar(&c.streamConns, "stream-conns", 8, "(k) parallel bulk connections, each writing 64 KiB chunks")
	flag.IntVar(&c.streamShortConns, "stream-short-conns", 8, "(k) parallel clients opening short connections (1 KiB echoed)")
	flag.DurationVar(&c.streamDuration, "stream-duration", 5*time.Second, "(k) duration of each run")
	flag.Parse()
	if *quick {
		c.applyQuick()
	}
	if err := c.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once; children still get SIGTERM (Pdeathsig)
	}()
	err := run(ctx, &c)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			err = errors.New("interrupted")
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// applyQuick shortens every duration and count that was not set on the
// command line.
func (c *config) applyQuick() {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	quick := map[string]func(){
		"latency-iterations": func() { c.latencyIterations = 20 },
		"churn":              func() { c.churn = 10 * time.Second },
		"drain":              func() { c.drain = time.Second },
		"tput-duration":      func() { c.tputDuration = 2 * time.Second },
		"rounds":             func() { c.rounds = 2 },
		"tls-duration":       func() { c.tlsDuration = time.Second },
		"tls-keys":           func() { c.tlsKeys = "ecdsa" },
		"stream-duration":    func() { c.streamDuration = 2 * time.Second },
	}
	for name, apply := range quick {
		if !set[name] {
			apply()
		}
	}
}

func (c *config) validate() error {
	switch {
	case c.latencyIterations < 1 || c.latencyIterations > 10000:
		return fmt.Errorf("-latency-iterations %d: want 1 to 10000", c.latencyIterations)
	case c.churnEndpoints < 2 || c.churnEndpoints > 100:
		return fmt.Errorf("-churn-endpoints %d: want 2 to 100, so one is always left while another is replaced", c.churnEndpoints)
	case c.churnRate < 1 || c.churnRate > 20000:
		return fmt.Errorf("-churn-rate %d: want 1 to 20000", c.churnRate)
	case c.churnInterval < 10*time.Millisecond:
		return fmt.Errorf("-churn-interval %s: want at least 10ms", c.churnInterval)
	case c.churn <= 0 || c.churn > 30*time.Minute, c.tputDuration <= 0 || c.tputDuration > 10*time.Minute,
		c.tlsDuration <= 0 || c.tlsDuration > 10*time.Minute, c.streamDuration <= 0 || c.streamDuration > 10*time.Minute:
		return errors.New("-churn, -tput-duration, -tls-duration and -stream-duration must be positive and bounded (30m, 10m, 10m, 10m)")
	case c.streamConns < 1 || c.streamConns > 256, c.streamShortConns < 1 || c.streamShortConns > 256:
		return errors.New("-stream-conns and -stream-short-conns: want 1 to 256")
	case c.rounds < 1 || c.rounds > 20:
		return fmt.Errorf("-rounds %d: want 1 to 20", c.rounds)
	case c.conns < 1 || c.conns > 1000, c.tlsConns < 1 || c.tlsConns > 256:
		return errors.New("-conns (1-1000) or -tls-conns (1-256) out of range")
	case c.tputBackends < 1 || c.tputBackends > 50:
		return fmt.Errorf("-tput-backends %d: want 1 to 50", c.tputBackends)
	case c.h2Conns < 1 || c.h2Conns > 100, c.h2Streams < 1 || c.h2Streams > 128:
		return errors.New("-h2-conns (1-100) or -h2-streams (1-128, nginx's http2_max_concurrent_streams) out of range")
	}
	for _, s := range splitList(c.only) {
		if !slices.Contains([]string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"}, s) {
			return fmt.Errorf("-only: unknown section %q (want a to p)", s)
		}
	}
	switch c.loader {
	case "auto", "wrk", "vegeta":
	default:
		return fmt.Errorf("-loader %q: want auto, wrk or vegeta", c.loader)
	}
	for _, k := range c.tputKindList() {
		if k != goBackends && k != nginxBackends {
			return fmt.Errorf("-tput-backend-kinds: unknown kind %q (want nginx or go)", k)
		}
	}
	for _, k := range c.keys() {
		if _, ok := keyBits[k]; !ok {
			return fmt.Errorf("-tls-keys: unknown key type %q", k)
		}
	}
	return nil
}

// keys lists the -tls-keys entries.
func (c *config) keys() []string { return splitList(c.tlsKeys) }

// tputKindList lists the backend kinds (d), (f) and (g) run behind.
func (c *config) tputKindList() []string { return splitList(c.tputKinds) }

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// comparisonKinds lists the backend kinds to start a comparison behind:
// those of (d), and go for (e).
func (c *config) comparisonKinds() []string {
	var out []string
	if c.section("d") {
		out = c.tputKindList()
	}
	if c.section("e") && !slices.Contains(out, goBackends) {
		out = append(out, goBackends)
	}
	return out
}

// section reports whether -only selects a section.
func (c *config) section(name string) bool { return slices.Contains(splitList(c.only), name) }

// runSections runs the selected sections on e's data plane.
func runSections(ctx context.Context, e *env, c *config, rep *report) error {
	if c.section("a") || c.section("b") {
		if err := runDynamic(ctx, e, c, rep); err != nil {
			return err
		}
	}
	if c.section("h") {
		if err := runCanary(ctx, e, c, rep); err != nil {
			return fmt.Errorf("(h) canary weight change: %w", err)
		}
	}
	if c.section("p") {
		if err := runRouteWeight(ctx, e, c, rep); err != nil {
			return fmt.Errorf("(p) HTTPRoute weight change: %w", err)
		}
	}
	if c.section("d") || c.section("e") {
		for _, kind := range c.comparisonKinds() {
			if err := runComparison(ctx, e, c, rep, kind); err != nil {
				return err
			}
		}
	}
	if c.section("f") {
		for _, kind := range c.tputKindList() {
			if err := runAnnotated(ctx, e, c, rep, kind); err != nil {
				return err
			}
		}
	}
	if c.section("j") {
		for _, kind := range c.tputKindList() {
			if err := runExtAuth(ctx, e, c, rep, kind); err != nil {
				return err
			}
		}
	}
	if c.section("g") {
		for _, kind := range c.tputKindList() {
			if err := runH2(ctx, e, c, rep, kind); err != nil {
				return err
			}
		}
	}
	if c.section("i") {
		for _, kind := range c.tputKindList() {
			if err := runAccess(ctx, e, c, rep, kind); err != nil {
				return err
			}
		}
	}
	if c.section("k") {
		if err := runStream(ctx, e, c, rep); err != nil {
			return fmt.Errorf("(k) TCP through a TransportServer: %w", err)
		}
	}
	if c.section("l") {
		if err := runVirtualServer(ctx, e, c, rep); err != nil {
			return fmt.Errorf("(l) VirtualServer vs Ingresses: %w", err)
		}
	}
	if c.section("m") {
		if err := runPassthrough(ctx, e, c, rep); err != nil {
			return fmt.Errorf("(m) TLS passthrough: %w", err)
		}
	}
	if c.section("n") {
		if err := runModSecurity(ctx, e, c, rep); err != nil {
			return fmt.Errorf("(n) ModSecurity: %w", err)
		}
	}
	if c.section("o") {
		if err := runTracing(ctx, e, c, rep); err != nil {
			return fmt.Errorf("(o) tracing: %w", err)
		}
	}
	return nil
}

// run builds the binary, runs the selected sections on each data plane
// and prints the report.
func run(ctx context.Context, c *config) error {
	e, err := newEnv(c.keep)
	if err != nil {
		return err
	}
	defer e.close()
	if c.bin == "" {
		fmt.Fprintln(os.Stderr, "building ./cmd/causeway ...")
		if c.bin, err = e.build(ctx); err != nil {
			return err
		}
	}
	e.bin = c.bin
	if err := c.plane.detect(ctx); err != nil {
		return err
	}
	e.plane = c.plane
	rep := newReport(c)

	planes := []dataPlane{c.plane}
	if c.alsoAngie != "" {
		dir, err := filepath.Abs(c.alsoAngie)
		if err != nil {
			return err
		}
		angie := dataPlane{binary: filepath.Join(dir, "sbin", "angie"), modules: filepath.Join(dir, "modules"), luaPath: filepath.Join(dir, "lualib") + "/?.lua;;"}
		if err := angie.detect(ctx); err != nil {
			return fmt.Errorf("-also-angie: %w", err)
		}
		planes = append(planes, angie)
	}
	for i, p := range planes {
		if err := e.usePlane(p, i); err != nil {
			return err
		}
		if len(planes) > 1 {
			rep.tag = " [" + p.flavour.String() + "]"
		}
		if err := runSections(ctx, e, c, rep); err != nil {
			return fmt.Errorf("%s: %w", p.flavour, err)
		}
	}
	out := rep.String()
	fmt.Print("\n" + out)
	if c.out != "" {
		if err := os.WriteFile(c.out, []byte(out), 0o644); err != nil {
			return fmt.Errorf("write -out: %w", err)
		}
	}
	return nil
}
