package metrics

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/causeway/causeway/internal/balancer"
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
	// stopped naming it: old workers still finish requests and send their
	// last counts (2 minutes when 0).
	Grace time.Duration
	// Log receives what is wrong with a batch.
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

// Requests collects the per-request metrics that nginx's workers count
// (causeway/metrics.lua) and send once a second over a unix socket. It
// holds the cumulative counts and serves them as ingress-nginx's
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

	batches *prometheus.CounterVec
	dropped prometheus.Counter

	mu     sync.Mutex
	keys   map[string]*knownKey
	series map[seriesID]*seriesCounts
	now    func() time.Time
}

type histogramSpec struct {
	name   string
	bounds []float64
	desc   *prometheus.Desc
}

// knownKey is a series key the configuration names (or named until
// expires, when not zero).
type knownKey struct {
	labels  balancer.SeriesLabels
	expires time.Time
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
	r := &Requests{opts: opts, connectAt: -1, keys: map[string]*knownKey{}, series: map[seriesID]*seriesCounts{}, now: time.Now}
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
	r.batches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "causeway_metrics_batches_total",
		Help: "Batches of request counts received from nginx workers, by result (ok, invalid).",
	}, []string{"result"})
	r.dropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "causeway_metrics_dropped_requests_total",
		Help: "Requests nginx counted but no series could hold: a worker's series limit, an unknown series key or an invalid row.",
	})
	if reg != nil {
		if err := reg.Register(r); err != nil {
			return nil, err
		}
		reg.MustRegister(r.batches, r.dropped)
	}
	return r, nil
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

// SetSeries makes keys the configuration's series keys. Call it before
// the configuration goes live, so that no worker sends a key the
// collector does not know. Keys no longer named expire after the grace
// period, and their series with them (as ingress-nginx removes the
// metrics of a deleted Ingress).
func (r *Requests) SetSeries(keys map[string]balancer.SeriesLabels) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	for k, l := range keys {
		r.keys[k] = &knownKey{labels: l}
	}
	for k, kk := range r.keys {
		if _, ok := keys[k]; ok {
			continue
		}
		if kk.expires.IsZero() {
			kk.expires = now.Add(r.opts.Grace)
		}
	}
	r.expire(now)
}

// expire forgets keys past their grace and their series; r.mu is held.
func (r *Requests) expire(now time.Time) {
	gone := map[string]bool{}
	for k, kk := range r.keys {
		if !kk.expires.IsZero() && now.After(kk.expires) {
			delete(r.keys, k)
			gone[k] = true
		}
	}
	if len(gone) == 0 {
		return
	}
	for id := range r.series {
		if gone[id.key] {
			delete(r.series, id)
		}
	}
}

// batch is what metrics.lua sends: its histograms in order, the requests
// it could not count, and one row per series:
// [key, status, method, host, requests, then per histogram count, sum and
// one count per bucket with +Inf last].
type batch struct {
	Version    int               `json:"version"`
	PID        int               `json:"pid"`
	Histograms []string          `json:"histograms"`
	Dropped    float64           `json:"dropped"`
	Series     []json.RawMessage `json:"series"`
}

// maxBatch bounds one batch: 20,000 series of every histogram is about 20
// MB of JSON.
const maxBatch = 64 << 20

// Serve accepts batches on ln until it is closed. Each connection carries
// one batch, answered "ok" once counted (or with the reason it was not).
func (r *Requests) Serve(ln net.Listener) error {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go r.serveConn(conn)
	}
}

func (r *Requests) serveConn(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReaderSize(io.LimitReader(conn, maxBatch), 64<<10).ReadBytes('\n')
	if err != nil {
		r.batches.WithLabelValues("invalid").Inc()
		r.opts.Log.Warn("metrics batch from nginx unreadable", "err", err)
		fmt.Fprintf(conn, "error %s\n", oneLine(err.Error()))
		return
	}
	if err := r.Apply(line); err != nil {
		r.batches.WithLabelValues("invalid").Inc()
		r.opts.Log.Warn("metrics batch from nginx refused", "err", err)
		fmt.Fprintf(conn, "error %s\n", oneLine(err.Error()))
		return
	}
	r.batches.WithLabelValues("ok").Inc()
	io.WriteString(conn, "ok\n")
}

func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// Apply counts one batch. A batch whose shape does not match (another
// histogram list) is refused whole; a row that is invalid or names an
// unknown key is dropped alone and counted in
// causeway_metrics_dropped_requests_total.
func (r *Requests) Apply(data []byte) error {
	var b batch
	if err := json.Unmarshal(data, &b); err != nil {
		return fmt.Errorf("batch: %w", err)
	}
	if b.Version != 1 {
		return fmt.Errorf("batch version %d, want 1", b.Version)
	}
	if want := r.Histograms(); !slices.Equal(b.Histograms, want) {
		return fmt.Errorf("batch histograms %v, want %v", b.Histograms, want)
	}
	width := 1 // the requests, then each histogram's numbers
	for _, h := range r.histograms {
		width += 2 + len(h.bounds) + 1
	}
	dropped := 0.0
	if b.Dropped > 0 && !math.IsInf(b.Dropped, 0) {
		dropped = b.Dropped
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, raw := range b.Series {
		id, values, err := r.parseRow(raw, width)
		if err != nil {
			if len(values) > 0 && values[0] > 0 {
				dropped += values[0]
			}
			r.opts.Log.Debug("metrics row dropped", "row", i, "pid", b.PID, "err", err)
			continue
		}
		r.add(id, values)
	}
	if dropped > 0 {
		r.dropped.Add(dropped)
	}
	return nil
}

var (
	methodRe = regexp.MustCompile(`^(GET|HEAD|POST|PUT|DELETE|CONNECT|OPTIONS|TRACE|PATCH|OTHER)$`)
	// requestHostRe is what a request's Host may be as a label: nginx
	// lower-cases it and refuses most else; anything outside this is
	// counted under "invalid".
	requestHostRe = regexp.MustCompile(`^[a-z0-9._:\[\]-]{0,253}$`)
)

// parseRow checks one row; values are the requests and the histogram
// numbers, returned even on error once readable so the requests can be
// counted as dropped.
func (r *Requests) parseRow(raw json.RawMessage, width int) (seriesID, []float64, error) {
	var row []any
	if err := json.Unmarshal(raw, &row); err != nil {
		return seriesID{}, nil, err
	}
	if len(row) != 4+width {
		return seriesID{}, nil, fmt.Errorf("%d fields, want %d", len(row), 4+width)
	}
	values := make([]float64, 0, len(row)-4)
	for _, v := range row[4:] {
		f, ok := v.(float64)
		if !ok || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return seriesID{}, nil, fmt.Errorf("value %v is not a non-negative number", v)
		}
		values = append(values, f)
	}
	key, _ := row[0].(string)
	status, _ := row[1].(float64)
	method, _ := row[2].(string)
	host, _ := row[3].(string)
	kk, known := r.keys[key]
	switch {
	case !balancer.ValidSeriesKey(key):
		return seriesID{}, values, fmt.Errorf("series key %q is malformed", key)
	case !known:
		return seriesID{}, values, fmt.Errorf("series key %q is not in any recent configuration", key)
	case status != math.Trunc(status) || status < 0 || status > 999:
		return seriesID{}, values, fmt.Errorf("status %v", row[1])
	case !methodRe.MatchString(method):
		return seriesID{}, values, fmt.Errorf("method %q", method)
	}
	if !kk.labels.HostFromRequest {
		host = ""
	} else if !requestHostRe.MatchString(host) {
		host = "invalid"
	}
	return seriesID{key: key, status: int(status), method: method, host: host}, values, nil
}

// add adds a row's values to its series; r.mu is held.
func (r *Requests) add(id seriesID, values []float64) {
	s := r.series[id]
	if s == nil {
		s = &seriesCounts{hist: make([]histCounts, len(r.histograms))}
		for i, h := range r.histograms {
			s.hist[i].buckets = make([]uint64, len(h.bounds)+1)
		}
		r.series[id] = s
	}
	s.requests += values[0]
	at := 1
	for i := range s.hist {
		hc := &s.hist[i]
		hc.count += uint64(values[at])
		hc.sum += values[at+1]
		for j := range hc.buckets {
			hc.buckets[j] += uint64(values[at+2+j])
		}
		at += 2 + len(hc.buckets)
	}
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
		l := r.keys[id.key].labels
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
