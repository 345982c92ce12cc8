package main

import (
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/causeway/causeway/internal/metrics"
)

const exposition = `# HELP causeway_endpoint_update_seconds Time from an EndpointSlice change to nginx serving it.
# TYPE causeway_endpoint_update_seconds histogram
causeway_endpoint_update_seconds_bucket{le="0.001"} 10
causeway_endpoint_update_seconds_bucket{le="0.002"} 50
causeway_endpoint_update_seconds_bucket{le="0.005"} 90
causeway_endpoint_update_seconds_bucket{le="0.01"} 100
causeway_endpoint_update_seconds_bucket{le="+Inf"} 100
causeway_endpoint_update_seconds_sum 0.25
causeway_endpoint_update_seconds_count 100
causeway_nginx_reloads_total 3
`

func TestHistogram(t *testing.T) {
	h, ok := readHistogram(exposition, "causeway_endpoint_update_seconds")
	if !ok || h.count() != 100 {
		t.Fatalf("read %v, %v: want 5 buckets and 100 observations", h, ok)
	}
	if _, ok := readHistogram(exposition, "causeway_config_apply_seconds"); ok {
		t.Error("a histogram the text lacks was read")
	}
	for _, c := range []struct{ q, want float64 }{
		{0.5, 0.002},     // the 50th observation is the last of the second bucket
		{0.3, 0.0015},    // half way through the second bucket (10 → 50)
		{0.99, 0.0095},   // 9 of the last bucket's 10
		{0.05, 0.0005},   // the first bucket starts at 0
		{1, 0.01},        // all of them
		{0.7, 0.0035},    // half way through the third bucket (50 → 90)
		{0.999, 0.00995}, // nearly the top
	} {
		if got := h.quantile(c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	// Observations beyond the highest finite bound report that bound.
	over := histogram{0.001: 1, 0.01: 1, math.Inf(1): 10}
	if got := over.quantile(0.99); got != 0.01 {
		t.Errorf("quantile in +Inf = %v, want the highest finite bound 0.01", got)
	}
	// A window: the observations since a first reading.
	d := h.minus(histogram{0.001: 10, 0.002: 10, 0.005: 10, 0.01: 10, math.Inf(1): 10})
	// p50: the 45th of 90, 5 of the 40 between 2 and 5 ms.
	if d.count() != 90 || d[0.001] != 0 || math.Abs(d.quantile(0.5)-0.002375) > 1e-9 {
		t.Errorf("window %v: want 90 observations, none under 1 ms, p50 2.375 ms", d)
	}
	if !math.IsNaN(histogram{math.Inf(1): 0}.quantile(0.5)) {
		t.Error("quantile of no observations is not NaN")
	}
	if got := sumMetric(exposition, "causeway_nginx_reloads_total"); got != 3 {
		t.Errorf("sumMetric = %v, want 3", got)
	}
}

func TestSpread(t *testing.T) {
	for _, c := range []struct {
		lo, hi, count int
		want          []int
	}{
		{0, 100, 4, []int{0, 25, 50, 75}},
		{5, 10, 5, []int{5, 6, 7, 8, 9}},
		{5, 8, 5, []int{5, 6, 7, 5, 6}}, // more than there are: each once, then again
		{10, 10, 3, nil},
	} {
		if got := spread(c.lo, c.hi, c.count); !slices.Equal(got, c.want) {
			t.Errorf("spread(%d, %d, %d) = %v, want %v", c.lo, c.hi, c.count, got, c.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for k := 1; k <= 100; k++ {
		ds = append(ds, time.Duration(k)*time.Millisecond)
	}
	if p50, p99 := percentile(ds, 0.5), percentile(ds, 0.99); p50 != 50*time.Millisecond || p99 != 99*time.Millisecond {
		t.Errorf("p50, p99 of 1..100 ms = %v, %v; want 50 ms, 99 ms", p50, p99)
	}
	if got := percentile(ds[:1], 0.99); got != time.Millisecond {
		t.Errorf("p99 of one = %v", got)
	}
	l := latencies{took: []time.Duration{3 * time.Millisecond, 4 * time.Millisecond}}
	if r := l.row("x"); !r.met {
		t.Errorf("3 and 4 ms: %+v, want met", r)
	}
	l.failed = 1
	if r := l.row("x"); r.met {
		t.Errorf("a change that never arrived: %+v, want missed", r)
	}
}

// The row reads the controller's /metrics before and after, and is left
// out when the controller has no such histogram.
func TestHistogramWindow(t *testing.T) {
	var text atomic.Value
	text.Store(`causeway_endpoint_update_seconds_bucket{le="0.001"} 1
causeway_endpoint_update_seconds_bucket{le="0.01"} 1
causeway_endpoint_update_seconds_bucket{le="+Inf"} 1
`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, text.Load().(string))
	}))
	defer srv.Close()
	port, _ := strconv.Atoi(srv.URL[strings.LastIndexByte(srv.URL, ':')+1:])
	c := &controller{mport: port}

	w := c.histogramFrom(endpointUpdateMetric)
	if r, ok := w.row("x"); !ok || r.value != "no observations" {
		t.Errorf("nothing observed: %+v, %v", r, ok)
	}
	text.Store(`causeway_endpoint_update_seconds_bucket{le="0.001"} 1
causeway_endpoint_update_seconds_bucket{le="0.01"} 11
causeway_endpoint_update_seconds_bucket{le="+Inf"} 11
`)
	// 10 observations between 1 and 10 ms: p50 5.5 ms, p99 9.9 ms.
	if r, ok := w.row("x"); !ok || r.value != "5.5 ms / 9.9 ms (10 observations)" {
		t.Errorf("10 observed: %+v, %v", r, ok)
	}
	absent := c.histogramFrom("causeway_no_such_seconds")
	if r, ok := absent.row("x"); ok {
		t.Errorf("an absent histogram gave a row: %+v", r)
	}
}

// TestMetricsFiltered: the bench's filtered scrapes, against the
// controller's own registry and handler, still read a histogram's
// _sum and _count, a counter and a histogram's buckets (name[] filters by
// family, so the samples' names must map to their families), and only
// the families asked for are written.
func TestMetricsFiltered(t *testing.T) {
	m := metrics.New()
	m.ConfigApplySeconds.Observe(0.5)
	m.ConfigApplySeconds.Observe(1.5)
	m.Reloads.WithLabelValues("start", "success").Inc()
	m.EndpointUpdateSeconds.Observe(0.003)
	m.BackendEndpoints.Set("shop/web/80", 2)
	var last atomic.Value
	h := promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		r.Header.Del("Accept-Encoding") // plain text, to look at
		h.ServeHTTP(rec, r)
		last.Store(rec.Body.String())
		maps.Copy(w.Header(), rec.Header())
		w.Write(rec.Body.Bytes())
	}))
	defer srv.Close()
	port, _ := strconv.Atoi(srv.URL[strings.LastIndex(srv.URL, ":")+1:])
	c := &controller{mport: port}

	got := c.metrics("causeway_config_apply_seconds_sum", "causeway_config_apply_seconds_count", "causeway_nginx_reloads_total")
	if !slices.Equal(got, []float64{2, 2, 1}) {
		t.Errorf("sum, count, reloads = %v, want [2 2 1]", got)
	}
	if text := last.Load().(string); strings.Contains(text, "causeway_backend_endpoints") {
		t.Errorf("a family not asked for was written:\n%s", text)
	}
	w := c.histogramFrom("causeway_endpoint_update_seconds")
	if !w.ok || w.before.count() != 1 {
		t.Errorf("histogram read %v, %v: want one observation", w.before, w.ok)
	}
	if got := c.metric("causeway_backend_endpoints"); got != 2 {
		t.Errorf("causeway_backend_endpoints = %v, want 2", got)
	}
}
