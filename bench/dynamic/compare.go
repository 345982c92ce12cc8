package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/causeway/causeway/bench/internal/proc"
)

// side is one of the nginx configurations compared in (d) and (e).
type side struct {
	name      string
	httpAddr  string
	httpsAddr string
	host      string // Host header for plain HTTP
	// varCert makes TLS clients ask for a certificate's variable-path
	// host (certificate.varHost) on the hand-written nginx.
	varCert bool
	// luaCert asks for certificate.luaHost instead (ssl_certificate_by_lua).
	luaCert bool
	master  func() int
	// controller, when set, is the pid of the controller driving this
	// side's nginx, whose CPU is read too: it relays nginx's access log.
	controller func() int
}

// tlsHost is the server name a TLS client sends to this side for cert.
func (sd side) tlsHost(cert *certificate) string {
	if sd.varCert {
		return cert.varHost
	}
	if sd.luaCert {
		return cert.luaHost
	}
	return cert.host
}

// sample is one timed load run against one side.
type sample struct {
	count   int // successful requests (or handshakes)
	bad     int // non-2xx answers and errors
	why     map[string]int
	elapsed time.Duration
	cpu     time.Duration // CPU used by the side's nginx workers meanwhile
	ctlCPU  time.Duration // CPU used by the side's controller, if any
}

func (s sample) rate() float64 { return float64(s.count) / s.elapsed.Seconds() }

// cpuPer is the workers' CPU time per successful request or handshake.
func (s sample) cpuPer() time.Duration {
	if s.count == 0 {
		return 0
	}
	return s.cpu / time.Duration(s.count)
}

// ctlCPUPer is the controller's CPU time per successful request.
func (s sample) ctlCPUPer() time.Duration {
	if s.count == 0 {
		return 0
	}
	return s.ctlCPU / time.Duration(s.count)
}

// cpuPerValue is cpuPer as a number, for roundRatio.
func (s sample) cpuPerValue() float64 { return float64(s.cpuPer()) }

// roundRatio is the median over rounds of f(a) / f(b) within the same
// round. A round in which either side served nothing (a stall of the
// machine) has no ratio.
func roundRatio(a, b []sample, f func(sample) float64) float64 {
	var rs []float64
	for k := range min(len(a), len(b)) {
		if r := f(a[k]) / f(b[k]); finite(r) && r > 0 {
			rs = append(rs, r)
		}
	}
	return median(rs)
}

// medianPer is the median over rounds of a per-request time, such as
// sample.cpuPer.
func medianPer(ss []sample, f func(sample) time.Duration) time.Duration {
	var ds []time.Duration
	for _, s := range ss {
		ds = append(ds, f(s))
	}
	return percentile(sortedCopy(ds), 50)
}

// failureNote sums the failures of every run into one table note.
func failureNote(res [][]sample) string {
	why := map[string]int{}
	bad := 0
	for _, side := range res {
		for _, s := range side {
			bad += s.bad
			for k, v := range s.why {
				why[k] += v
			}
		}
	}
	if bad == 0 {
		return "No failed requests in any run."
	}
	if len(why) == 0 {
		return fmt.Sprintf("Failed requests (non-2xx answers and errors) in all runs: %d.", bad)
	}
	return fmt.Sprintf("Failed requests in all runs: %d: %s.", bad, formatFailures(why))
}

// compareTable lays out one row per side: the median rate (of unit things
// per second, such as "req") over rounds,
// the median over rounds of its ratio to side ref in the same round, and
// the same for nginx worker CPU per request. It returns the two ratios of
// every side.
func compareTable(t *table, unit string, sides []side, res [][]sample, ref int, describe func(int) []string) (ratios, cpuRatios []float64) {
	t.header = append(t.header, unit+"/s", "vs "+sides[ref].name, "nginx CPU/"+unit, "CPU vs "+sides[ref].name, "nginx worker busy", "each round ("+unit+"/s)")
	ratios = make([]float64, len(sides))
	cpuRatios = make([]float64, len(sides))
	for i, sd := range sides {
		var rates, busy []float64
		var per []string
		for _, s := range res[i] {
			rates = append(rates, s.rate())
			busy = append(busy, s.cpu.Seconds()/s.elapsed.Seconds())
			per = append(per, num(s.rate()))
		}
		ratios[i] = roundRatio(res[i], res[ref], sample.rate)
		cpuRatios[i] = roundRatio(res[i], res[ref], sample.cpuPerValue)
		row := append([]string{sd.name}, describe(i)...)
		t.add(append(row, num(median(rates)), pct(ratios[i]), us(medianPer(res[i], sample.cpuPer)),
			fmt.Sprintf("%.2f×", cpuRatios[i]), pct(median(busy)), strings.Join(per, ", "))...)
	}
	return ratios, cpuRatios
}

// finite reports whether x is a number other than ±Inf.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// withCPU runs load and adds the CPU the side's nginx workers used.
func withCPU(sd side, load func() (sample, error)) (sample, error) {
	_, before, err := nginxWorkers(sd.master())
	if err != nil {
		return sample{}, err
	}
	var ctlBefore time.Duration
	if sd.controller != nil {
		if ctlBefore, err = proc.CPU(sd.controller()); err != nil {
			return sample{}, err
		}
	}
	s, err := load()
	if err != nil {
		return s, err
	}
	_, after, err := nginxWorkers(sd.master())
	if err != nil {
		return s, err
	}
	s.cpu = after - before
	if sd.controller != nil {
		ctlAfter, err := proc.CPU(sd.controller())
		if err != nil {
			return s, err
		}
		s.ctlCPU = ctlAfter - ctlBefore
	}
	return s, nil
}

// abRounds runs load against each side in turn, A B A B … (or A B C A B
// C …), after one short unrecorded warm-up run of each. out[i] holds side
// i's samples, one per round.
func abRounds(ctx context.Context, rounds int, sides []side, warmup, d time.Duration, load func(side, time.Duration) (sample, error)) ([][]sample, error) {
	out := make([][]sample, len(sides))
	for _, sd := range sides {
		if _, err := load(sd, warmup); err != nil {
			return out, fmt.Errorf("warm-up %s: %w", sd.name, err)
		}
	}
	for range rounds {
		for i, sd := range sides {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			s, err := withCPU(sd, func() (sample, error) { return load(sd, d) })
			if err != nil {
				return out, fmt.Errorf("%s: %w", sd.name, err)
			}
			out[i] = append(out[i], s)
		}
	}
	return out, nil
}

// runComparison starts a controller with one nginx worker (ConfigMap
// worker-processes "1", access log off) and the hand-written baseline,
// both in front of the same backends of one kind, and runs section (d)
// and, behind the Go backends, (e).
func runComparison(ctx context.Context, e *env, c *config, rep *report, kind string) error {
	p, bs, backendMaster, err := newKindPool(ctx, e, kind, c.tputBackends, "")
	if err != nil {
		return err
	}
	defer p.close()
	runTput := c.section("d") && slices.Contains(c.tputKindList(), kind)
	runTLS := kind == goBackends && c.section("e")
	plain := serviceYAML() + ingressYAML("web", httpHost)
	quiet := map[string]string{"worker-processes": "1", "disable-access-log": "true"}
	app := ingressClassYAML + configMapYAML(quiet) + plain
	var certs []*certificate
	var keys []string
	if runTLS {
		keys = c.keys()
	}
	for _, k := range keys {
		cert, err := newCertificate(k+".tls.bench.test", keyBits[k])
		if err != nil {
			return err
		}
		certs = append(certs, cert)
		app += cert.secretYAML("tls-"+k) + tlsIngressYAML("tls-"+k, cert.host, "tls-"+k)
	}
	slice := sliceYAML(p.port, ips(bs)...)
	gen, err := e.startController(ctx, "generated-"+kind, map[string]string{"app.yaml": app, "slice.yaml": slice}, c)
	if err != nil {
		return err
	}
	defer gen.stop()
	var variants []side
	if runTput {
		if err := gen.checkRendered("generated", []string{metricsHook, accessLogOff}, nil); err != nil {
			return err
		}
		if variants, err = startVariants(ctx, e, c, kind, plain, slice); err != nil {
			return err
		}
	}
	hand, err := e.startHandNginx(ctx, "handwritten-"+kind, bs, certs, handOptions{})
	if err != nil {
		return err
	}
	sides := []side{
		{name: "generated", httpAddr: gen.HTTPAddr(), httpsAddr: gen.HTTPSAddr(), host: httpHost, master: gen.nginxPID, controller: gen.pid},
		{name: "hand-written", httpAddr: hand.HTTPAddr(), httpsAddr: hand.HTTPSAddr(), host: httpHost, master: hand.masterPID},
		// The same hand-written nginx, with the certificate path made
		// variable as the generated config does: (e) uses it to tell the
		// cost of per-handshake loading from everything else.
		{name: "hand-written, variable path", httpAddr: hand.HTTPAddr(), httpsAddr: hand.HTTPSAddr(), host: httpHost, varCert: true, master: hand.masterPID},
		// The same again with the generated config's proxy headers: (d)
		// uses it to tell their cost from the Lua balancer's.
		{name: "hand-written + generated's headers", httpAddr: hand.HeadersAddr(), host: httpHost, master: hand.masterPID},
		// The same with a minimal Lua balancer: the floor of any config
		// that balances in Lua by a per-location key, as the generated
		// one does (with proxy_buffering off, as the generated one).
		{name: "hand-written + headers + proxy_buffering off + minimal Lua balancer", httpAddr: hand.FloorAddr(), host: httpHost, master: hand.masterPID},
		// The same hand-written nginx loading the certificate through
		// ssl_certificate_by_lua with a per-worker cache: the other way
		// to renew certificates without a reload.
		{name: "hand-written, ssl_certificate_by_lua", httpAddr: hand.HTTPAddr(), httpsAddr: hand.HTTPSAddr(), host: httpHost, luaCert: true, master: hand.masterPID},
		// The headers again with ingress-nginx's proxy_buffering off,
		// which the generated config sets at http level: (d) uses it so
		// that unbuffered proxying is not counted as the Lua balancer's.
		{name: "hand-written + headers + proxy_buffering off", httpAddr: hand.UnbufferedAddr(), host: httpHost, master: hand.masterPID},
	}
	// In tputOrder: generated, its variants, then the hand-written rows.
	tputSides := append(append([]side{sides[0]}, variants...), sides[1], sides[3], sides[6], sides[4])
	tlsSides := []side{sides[0], sides[1], sides[2], sides[5]}
	if err := checkSides(ctx, append(sides, variants...), bs, certs); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "comparing generated (%s) with hand-written (%s), one worker each, %s backends\n", gen.HTTPAddr(), hand.HTTPAddr(), kind)
	if runTput {
		pin := planPinning(c, kind, c.resolvedLoader())
		var fronts []int
		for _, sd := range tputSides {
			fronts = append(fronts, sd.master())
		}
		if err := pin.apply(fronts, backendMaster); err != nil {
			return err
		}
		if err := measureThroughput(ctx, c, kind, pin, tputSides, rep); err != nil {
			return fmt.Errorf("(d) throughput: %w", err)
		}
	}
	if runTLS {
		for _, cert := range certs {
			if err := measureTLS(ctx, c, tlsSides, cert, rep); err != nil {
				return fmt.Errorf("(e) TLS handshakes: %w", err)
			}
		}
	}
	return nil
}

// The rendered lines that tell (d)'s generated rows apart.
const (
	metricsHook  = "causeway_metrics buffer=64k flush=1s;" // a location's metrics log
	accessLogOn  = "access_log /dev/stderr causeway"
	accessLogOff = "    access_log off;\n    # --- End of the access log."
)

// startVariants starts (d)'s other generated configs, behind the same
// backends (plain is the Service and Ingress, slice the EndpointSlice):
// the controller with --enable-metrics=false, and the controller at its
// defaults (metrics, access log and HSTS on; one worker as everywhere).
// The latter's log, which carries a line per request, goes to tmpfs.
func startVariants(ctx context.Context, e *env, c *config, kind, plain, slice string) ([]side, error) {
	shm, err := e.tmpfsDir()
	if err != nil {
		return nil, err
	}
	var out []side
	for _, v := range []struct {
		name, dir    string
		cm           map[string]string
		opt          controllerOptions
		want, refuse []string
	}{
		{"generated, metrics off", "generated-metrics-off-", map[string]string{"worker-processes": "1", "disable-access-log": "true"},
			controllerOptions{args: []string{"--enable-metrics=false"}}, []string{accessLogOff}, []string{metricsHook}},
		{"generated, defaults (access log on)", "generated-defaults-", map[string]string{"worker-processes": "1"},
			controllerOptions{logDir: shm}, []string{metricsHook, accessLogOn}, nil},
	} {
		manifests := map[string]string{"app.yaml": ingressClassYAML + configMapYAML(v.cm) + plain, "slice.yaml": slice}
		ctl, err := e.startControllerWith(ctx, v.dir+kind, manifests, c, v.opt)
		if err != nil {
			return nil, err
		}
		e.onClose(ctl.stop)
		if err := ctl.checkRendered(v.name, v.want, v.refuse); err != nil {
			return nil, err
		}
		out = append(out, side{name: v.name, httpAddr: ctl.HTTPAddr(), host: httpHost, master: ctl.nginxPID, controller: ctl.pid})
	}
	return out, nil
}

// oneWorker makes sure a side's nginx runs exactly one worker, as every
// comparison assumes.
func oneWorker(sd side) error {
	if n, _, err := nginxWorkers(sd.master()); err != nil || n != 1 {
		return fmt.Errorf("%s nginx: want exactly 1 worker, have %d (%v)", sd.name, n, err)
	}
	return nil
}

// checkSides runs oneWorker and checkSide on every side, with certs for
// the sides that serve HTTPS.
func checkSides(ctx context.Context, sides []side, bs []*backend, certs []*certificate) error {
	for _, sd := range sides {
		if err := oneWorker(sd); err != nil {
			return err
		}
		tlsCerts := certs
		if sd.httpsAddr == "" {
			tlsCerts = nil
		}
		if err := checkSide(ctx, sd, bs, tlsCerts); err != nil {
			return err
		}
	}
	return nil
}

// checkSide makes sure a side routes to the backends over HTTP and
// presents each host's own certificate over HTTPS before anything is
// timed: a misrouted benchmark would measure 404s.
func checkSide(ctx context.Context, sd side, bs []*backend, certs []*certificate) error {
	want := map[string]bool{}
	for _, b := range bs {
		want[b.Addr] = true
	}
	client := httpClient(sd.httpAddr, false)
	if err := waitServedBy(ctx, client, bs[0].Addr, 10*time.Second); err != nil {
		return fmt.Errorf("%s: %w", sd.name, err)
	}
	for range 2 * len(bs) {
		if ep, ok := poll(ctx, client); !ok || !want[ep] {
			return fmt.Errorf("%s: answer from %q (ok %v), want one of the benchmark backends", sd.name, ep, ok)
		}
	}
	for _, cert := range certs {
		host := sd.tlsHost(cert)
		cn, status, err := tlsRequest(ctx, sd.httpsAddr, tlsConfig(host))
		if err != nil {
			return fmt.Errorf("%s: HTTPS %s: %w", sd.name, host, err)
		}
		if cn != cert.host || status != 200 {
			return fmt.Errorf("%s: HTTPS %s answered %d with certificate %q, want %q", sd.name, host, status, cn, cert.host)
		}
	}
	return nil
}

// tlsConfig makes every connection a full handshake: no session cache, so
// no resumption, and X25519 only, so the client does not also compute a
// post-quantum key share nginx 1.22 would ignore.
func tlsConfig(host string) *tls.Config {
	return &tls.Config{ServerName: host, InsecureSkipVerify: true, CurvePreferences: []tls.CurveID{tls.X25519}}
}
