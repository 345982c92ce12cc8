package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/causeway/causeway/internal/balancer"
)

// ingress-nginx's default histogram bounds (--time-buckets,
// --length-buckets, --size-buckets).
var (
	DefaultTimeBuckets   = prometheus.DefBuckets
	DefaultLengthBuckets = prometheus.LinearBuckets(10, 10, 10)
	DefaultSizeBuckets   = prometheus.ExponentialBuckets(10, 10, 7)
)

// RequestOptions configure the per-request metrics (ingress-nginx's flags
// of the same meaning in parentheses).
type RequestOptions struct {
	// TimeBuckets, LengthBuckets and SizeBuckets are the histograms'
	// upper bounds (--time-buckets, --length-buckets, --size-buckets).
	TimeBuckets, LengthBuckets, SizeBuckets []float64
	// PerHost adds the host label (--metrics-per-host); PerUndefinedHost
	// also counts requests for hosts no Ingress defines
	// (--metrics-per-undefined-host).
	PerHost, PerUndefinedHost bool
	// StatusClasses reports 2xx instead of 200 (--report-status-classes).
	StatusClasses bool
	// Exclude names metrics not to collect, with or without the
	// nginx_ingress_controller_ prefix (--exclude-socket-metrics).
	Exclude []string
	// ConstLabels are on every series (controller_namespace,
	// controller_class, controller_pod).
	ConstLabels prometheus.Labels
	// Grace is how long a series key stays known after the configuration
	// stopped naming it: old workers still finish requests and write their
	// last lines (2 minutes when 0).
	Grace time.Duration
	// Log receives what is wrong with a metrics log line (at debug level).
	Log *slog.Logger
}

// SocketMetrics are the metrics ingress-nginx collects from its nginx
// through a socket, with their names, types and labels.
var SocketMetrics = append([]string{"requests", "ingress_upstream_latency_seconds"}, histogramNames()...)

func histogramNames() []string {
	var out []string
	for _, h := range balancer.Histograms {
		out = append(out, h.Name)
	}
	return out
}

// Requests counts the per-request metrics from the lines nginx's workers
// write to the metrics log (RequestLog reads it). It holds the cumulative
// counts and serves them as ingress-nginx's
// nginx_ingress_controller_requests counter and histograms.
type Requests struct {
	opts       RequestOptions
	histograms []histogramSpec // enabled, in balancer.Histograms' order
	requestsOn bool
	latencyOn  bool // ingress_upstream_latency_seconds, from the connect time
	connectAt  int  // index of connect_duration_seconds in histograms, or -1
	labelNames []string
	requests   *prometheus.Desc
	latency    *prometheus.Desc

	// sources are the observed values a metrics log line carries;
	// sourceAt[i] is histogram i's. withHost: the host of undefined-host
	// series is read from the line's last field (the request's Host).
	// vals, fields and entry (a shared series' SharedSeriesEntry) are
	// countLine's scratch space.
	sources  []string
	sourceAt []int
	withHost bool
	nfields  int // balancer.MetricsLogFields
	vals     []float64
	fields   [][]byte
	entry    []byte

	lines   prometheus.Counter
	dropped prometheus.Counter
	// oldWorkers is how long old workers may live after a reload, as
	// SetSeries was last told.
	oldWorkers time.Duration

	mu     sync.Mutex
	keys   Keys[*balancer.SeriesLabels]
	series map[seriesID]*seriesCounts
	now    func() time.Time
}

type histogramSpec struct {
	name   string
	bounds []float64
	desc   *prometheus.Desc
}

type seriesID struct {
	key, method, host string
	status            int
}

type seriesCounts struct {
	requests float64
	hist     []histCounts
}

type histCounts struct {
	count   uint64
	sum     float64
	buckets []uint64 // per bound, not cumulative; the last is +Inf
}

// NewRequests validates opts and returns the collector, registered with
// its own counters on reg.
func NewRequests(opts RequestOptions, reg prometheus.Registerer) (*Requests, error) {
	if opts.PerUndefinedHost && !opts.PerHost {
		return nil, errors.New("--metrics-per-undefined-host needs --metrics-per-host")
	}
	if opts.Grace == 0 {
		opts.Grace = 2 * time.Minute
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	excluded := map[string]bool{}
	for _, n := range opts.Exclude {
		n = strings.TrimPrefix(strings.TrimSpace(n), CompatPrefix)
		if !slices.Contains(SocketMetrics, n) {
			return nil, fmt.Errorf("--exclude-socket-metrics: unknown metric %q (want one of %s)", n, strings.Join(SocketMetrics, ", "))
		}
		excluded[n] = true
	}
	r := &Requests{opts: opts, connectAt: -1, series: map[seriesID]*seriesCounts{}, now: time.Now,
		keys: Keys[*balancer.SeriesLabels]{Same: func(a, b *balancer.SeriesLabels) bool { return *a == *b }}}
	r.labelNames = []string{"status", "method", "path", "namespace", "ingress", "service", "canary"}
	if opts.PerHost {
		r.labelNames = append(r.labelNames, "host")
	}
	bucketsOf := map[string][]float64{"time": opts.TimeBuckets, "length": opts.LengthBuckets, "size": opts.SizeBuckets}
	for kind, b := range bucketsOf {
		if err := balancer.CheckBuckets(b); err != nil {
			return nil, fmt.Errorf("--%s-buckets: %w", kind, err)
		}
	}
	for _, h := range balancer.Histograms {
		if excluded[h.Name] {
			continue
		}
		if h.Name == "connect_duration_seconds" {
			r.connectAt = len(r.histograms)
		}
		r.histograms = append(r.histograms, histogramSpec{name: h.Name, bounds: bucketsOf[h.Buckets],
			desc: prometheus.NewDesc(CompatPrefix+h.Name, h.Help, r.labelNames, opts.ConstLabels)})
	}
	r.requestsOn = !excluded["requests"]
	r.requests = prometheus.NewDesc(CompatPrefix+"requests", "The total number of client requests.", r.labelNames, opts.ConstLabels)
	r.latencyOn = !excluded["ingress_upstream_latency_seconds"] && r.connectAt >= 0
	r.latency = prometheus.NewDesc(CompatPrefix+"ingress_upstream_latency_seconds",
		"Deprecated by ingress-nginx: the upstream connect time per Ingress, in seconds (sum and count only).",
		[]string{"ingress", "namespace", "service", "canary"}, opts.ConstLabels)
	var err error
	if r.sources, r.sourceAt, err = balancer.MetricsLogSources(r.Histograms()); err != nil {
		return nil, err
	}
	r.withHost = opts.PerHost && opts.PerUndefinedHost
	fields, err := balancer.MetricsLogFields(r.Histograms())
	if err != nil {
		return nil, err
	}
	r.nfields = len(fields)
	r.vals = make([]float64, len(r.sources))
	r.lines = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "causeway_metrics_log_lines_total",
		Help: "Lines read from nginx's metrics log: one per counted request.",
	})
	r.dropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "causeway_metrics_dropped_requests_total",
		Help: "Requests nginx logged that no series could hold: an unknown series key, a malformed line or more than the series limit.",
	})
	if reg != nil {
		if err := reg.Register(r); err != nil {
			return nil, err
		}
		reg.MustRegister(r.lines, r.dropped)
	}
	return r, nil
}

// OldWorkers is how long old workers may live after a reload, as SetSeries
// was last told (0 before).
func (r *Requests) OldWorkers() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.oldWorkers
}

// Histograms are the names of the histograms nginx must observe, for the
// configuration (render.Metrics.Histograms).
func (r *Requests) Histograms() []string {
	out := make([]string, len(r.histograms))
	for i, h := range r.histograms {
		out[i] = h.name
	}
	return out
}

// oldWorkerSlack is what a line of an old worker may take beyond its
// last request: the buffer's flush (1 s) and a read of the log (1 s),
// with room.
const oldWorkerSlack = 30 * time.Second

// SetSeries makes keys the configuration's series keys. Call it before
// the configuration goes live, so that no worker sends a key the
// collector does not know. Keys no longer named expire after the grace
// period, or once the old workers are gone if they may live longer
// (oldWorkers: the configuration's worker-shutdown-timeout), and their
// series with them (as ingress-nginx removes the metrics of a deleted
// Ingress).
func (r *Requests) SetSeries(keys map[string]*balancer.SeriesLabels, oldWorkers time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.oldWorkers = oldWorkers
	grace := max(r.opts.Grace, oldWorkers+oldWorkerSlack)
	now := r.now()
	r.keys.Set(keys, now, grace)
	r.expire(now)
}

// AddSeries makes keys the configuration's series keys too, beside those
// SetSeries made: the keys of hosts the table serves ahead of the next
// configuration (which names them itself).
func (r *Requests) AddSeries(keys map[string]*balancer.SeriesLabels) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys.Add(keys)
}

// KnownSeries finds a series key the collector knows, with its labels:
// the render's Params.KnownSeries, so that its series share the key
// strings and labels held here.
func (r *Requests) KnownSeries(key []byte) (string, *balancer.SeriesLabels, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kk, ok := r.keys.GetBytes(key)
	if !ok {
		return "", nil, false
	}
	return kk.Name, kk.Labels, true
}

// expire forgets keys past their grace and their series; r.mu is held.
func (r *Requests) expire(now time.Time) {
	gone := r.keys.Expire(now)
	if len(gone) == 0 {
		return
	}
	for id := range r.series {
		if gone[id.key] {
			delete(r.series, id)
		}
	}
}

// MaxSeries bounds the series the collector holds: beyond, the requests
// of new series are dropped (and counted). The configuration bounds the
// series but for --metrics-per-undefined-host, whose host label the
// client chooses.
const MaxSeries = 100000

// methods are the methods counted under their own name; the others are
// counted as "OTHER", so that a client cannot make up a series per
// request.
var methods = map[string]string{
	"GET": "GET", "HEAD": "HEAD", "POST": "POST", "PUT": "PUT", "DELETE": "DELETE",
	"CONNECT": "CONNECT", "OPTIONS": "OPTIONS", "TRACE": "TRACE", "PATCH": "PATCH",
}

// requestHostRe is what a request's Host may be as a label: nginx
// lower-cases it and refuses most else; anything outside this is counted
// under "invalid".
var requestHostRe = regexp.MustCompile(`^[a-z0-9._:\[\]-]{0,253}$`)

// Count counts the complete lines of data, each one request as nginx
// wrote it to the metrics log (balancer.MetricsLogFields). A line that
// cannot be used (malformed, an unknown series key, beyond MaxSeries) is
// counted in causeway_metrics_dropped_requests_total, never exported as it
// came.
func (r *Requests) Count(data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lines, dropped float64
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		lines++
		if err := r.countLine(line); err != nil {
			dropped++
			r.opts.Log.Debug("metrics log line dropped", "err", err)
		}
	}
	r.lines.Add(lines)
	if dropped > 0 {
		r.dropped.Add(dropped)
	}
}

// countLine counts one line; r.mu is held.
func (r *Requests) countLine(line []byte) error {
	n := r.nfields
	sep := []byte(balancer.MetricsLogSeparator)
	field, rest := r.fields[:0], line
	for len(field) < n-1 {
		f, tail, ok := bytes.Cut(rest, sep)
		if !ok {
			return fmt.Errorf("%d fields, want %d", len(field)+1, n)
		}
		field, rest = append(field, f), tail
	}
	field = append(field, rest) // the host, last: it may hold sep
	r.fields = field
	key := field[0]
	if balancer.IsSharedSeriesKey(key) {
		// A shared server's location: its series follow the host.
		r.entry = balancer.AppendSharedSeriesEntry(r.entry[:0], key, field[n-1])
		key = r.entry
	}
	kk, known := r.keys.GetBytes(key)
	if !known {
		if !balancer.ValidSeriesKey(string(field[0])) {
			return fmt.Errorf("series key %q is malformed", field[0])
		}
		if balancer.IsSharedSeriesKey(field[0]) {
			return fmt.Errorf("series key %q has no host %q in any recent configuration", field[0], field[n-1])
		}
		return fmt.Errorf("series key %q is not in any recent configuration", field[0])
	}
	status, ok := parseStatus(field[1])
	if !ok {
		return fmt.Errorf("status %q", field[1])
	}
	method, ok := methods[string(field[2])]
	if !ok {
		method = "OTHER"
	}
	vals := r.vals[:len(r.sources)]
	for i := range vals {
		vals[i] = parseObserved(field[3+i])
	}
	host := ""
	if r.withHost && kk.Labels.HostFromRequest {
		host = "invalid"
		if requestHostRe.Match(field[n-1]) {
			host = string(field[n-1])
		}
	}
	id := seriesID{key: kk.Name, status: status, method: method, host: host}
	s := r.series[id]
	if s == nil {
		if len(r.series) >= MaxSeries {
			return fmt.Errorf("more than %d series", MaxSeries)
		}
		s = &seriesCounts{hist: make([]histCounts, len(r.histograms))}
		for i, h := range r.histograms {
			s.hist[i].buckets = make([]uint64, len(h.bounds)+1)
		}
		r.series[id] = s
	}
	s.requests++
	for i, h := range r.histograms {
		v := vals[r.sourceAt[i]]
		if v < 0 {
			continue // not observed: no upstream, or several attempts
		}
		hc := &s.hist[i]
		hc.count++
		hc.sum += v
		hc.buckets[sort.SearchFloat64s(h.bounds, v)]++
	}
	return nil
}

// parseStatus reads nginx's $status: three digits.
func parseStatus(b []byte) (int, bool) {
	if len(b) != 3 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// parseObserved reads an observed value as nginx writes it: digits with
// an optional fraction ("0.004", "215"). It is -1 when the request has
// none: "-" (no upstream), or a list of several attempts ("0.004,
// 0.010", "0.002 : 0.001"), which ingress-nginx does not observe either.
func parseObserved(b []byte) float64 {
	if len(b) == 0 || len(b) > 20 {
		return -1
	}
	var whole, frac, scale float64 = 0, 0, 1
	dot := false
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if dot {
				scale *= 10
				frac = frac*10 + float64(c-'0')
			} else {
				whole = whole*10 + float64(c-'0')
			}
		case c == '.' && !dot:
			dot = true
		default:
			return -1
		}
	}
	return whole + frac/scale
}

// Describe implements prometheus.Collector.
func (r *Requests) Describe(ch chan<- *prometheus.Desc) {
	if r.requestsOn {
		ch <- r.requests
	}
	if r.latencyOn {
		ch <- r.latency
	}
	for _, h := range r.histograms {
		ch <- h.desc
	}
}

// Collect implements prometheus.Collector. Series of one label set (two
// keys may share labels when statuses fold into classes) are summed.
func (r *Requests) Collect(ch chan<- prometheus.Metric) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expire(r.now())
	type merged struct {
		labels []string
		counts *seriesCounts
	}
	byLabels := map[string]*merged{}
	type latencyKey struct{ ingress, namespace, service, canary string }
	latency := map[latencyKey]*histCounts{}
	for id, s := range r.series {
		kk, _ := r.keys.Get(id.key)
		l := kk.Labels
		status := fmt.Sprintf("%03d", id.status) // 000: no response (nginx's $status)
		if r.opts.StatusClasses {
			status = status[:1] + "xx"
		}
		values := []string{status, id.method, l.Path, l.Namespace, l.Ingress, l.Service, l.Canary}
		if r.opts.PerHost {
			host := l.Host
			if l.HostFromRequest {
				host = id.host
			}
			values = append(values, host)
		}
		k := strings.Join(values, "\x00")
		m := byLabels[k]
		if m == nil {
			m = &merged{labels: values, counts: &seriesCounts{hist: make([]histCounts, len(s.hist))}}
			for i := range s.hist {
				m.counts.hist[i].buckets = make([]uint64, len(s.hist[i].buckets))
			}
			byLabels[k] = m
		}
		m.counts.requests += s.requests
		for i := range s.hist {
			h, src := &m.counts.hist[i], &s.hist[i]
			h.count += src.count
			h.sum += src.sum
			for j := range h.buckets {
				h.buckets[j] += src.buckets[j]
			}
		}
		if r.latencyOn {
			lk := latencyKey{l.Ingress, l.Namespace, l.Service, l.Canary}
			lc := latency[lk]
			if lc == nil {
				lc = &histCounts{}
				latency[lk] = lc
			}
			lc.count += s.hist[r.connectAt].count
			lc.sum += s.hist[r.connectAt].sum
		}
	}
	for _, m := range byLabels {
		if r.requestsOn {
			ch <- prometheus.MustNewConstMetric(r.requests, prometheus.CounterValue, m.counts.requests, m.labels...)
		}
		for i, h := range r.histograms {
			hc := &m.counts.hist[i]
			if hc.count == 0 {
				continue // no observation (no upstream): no series, as ingress-nginx
			}
			cum := make(map[float64]uint64, len(h.bounds))
			var n uint64
			for j, bound := range h.bounds {
				n += hc.buckets[j]
				cum[bound] = n
			}
			ch <- prometheus.MustNewConstHistogram(h.desc, hc.count, hc.sum, cum, m.labels...)
		}
	}
	for lk, lc := range latency {
		if lc.count == 0 {
			continue
		}
		ch <- prometheus.MustNewConstSummary(r.latency, lc.count, lc.sum, nil, lk.ingress, lk.namespace, lk.service, lk.canary)
	}
}
