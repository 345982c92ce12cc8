package metrics

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/causeway/causeway/internal/balancer"
)

var (
	webLabels = balancer.SeriesLabels{Namespace: "shop", Ingress: "web", Service: "web", Path: "/", Host: "shop.test"}
	webKey    = balancer.SeriesKey(webLabels)
	anyLabels = balancer.SeriesLabels{HostFromRequest: true}
	anyKey    = balancer.SeriesKey(anyLabels)
)

// testOptions keep the histograms small: one time bound, one length
// bound, one size bound.
func testOptions() RequestOptions {
	return RequestOptions{TimeBuckets: []float64{0.1}, LengthBuckets: []float64{100}, SizeBuckets: []float64{1000}, PerHost: true, PerUndefinedHost: true,
		ConstLabels: prometheus.Labels{"controller_class": "causeway"}}
}

func newTestRequests(t *testing.T, opts RequestOptions) (*Requests, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	r, err := NewRequests(opts, reg)
	if err != nil {
		t.Fatal(err)
	}
	r.SetSeries(map[string]balancer.SeriesLabels{webKey: webLabels, anyKey: anyLabels})
	return r, reg
}

// row is one series row: requests, then for each of the 7 histograms
// count, sum and 2 buckets (the bound and +Inf), as metrics.lua sends it.
func row(key string, status any, method, host string, requests int, hist ...[4]float64) []any {
	out := []any{key, status, method, host, requests}
	for i := range 7 {
		h := [4]float64{}
		if i < len(hist) {
			h = hist[i]
		}
		out = append(out, h[0], h[1], h[2], h[3])
	}
	return out
}

func batchJSON(t *testing.T, rows ...[]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"version": 1, "pid": 7, "histograms": histogramNames(), "dropped": 0, "series": rows})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRequestsApplyCountsAndExports(t *testing.T) {
	r, reg := newTestRequests(t, testOptions())
	// Two batches of the same series add up.
	for range 2 {
		if err := r.Apply(batchJSON(t, row(webKey, 200, "GET", "", 3, [4]float64{3, 0.25, 2, 1}))); err != nil {
			t.Fatal(err)
		}
	}
	want := `
# HELP nginx_ingress_controller_requests The total number of client requests.
# TYPE nginx_ingress_controller_requests counter
nginx_ingress_controller_requests{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200"} 6
# HELP nginx_ingress_controller_request_duration_seconds The time from the first byte of the request to the last byte of the response sent, in seconds ($request_time).
# TYPE nginx_ingress_controller_request_duration_seconds histogram
nginx_ingress_controller_request_duration_seconds_bucket{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200",le="0.1"} 4
nginx_ingress_controller_request_duration_seconds_bucket{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200",le="+Inf"} 6
nginx_ingress_controller_request_duration_seconds_sum{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200"} 0.5
nginx_ingress_controller_request_duration_seconds_count{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200"} 6
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "nginx_ingress_controller_requests", "nginx_ingress_controller_request_duration_seconds"); err != nil {
		t.Error(err)
	}
	// A histogram without observations (no upstream) has no series.
	if n := testutil.CollectAndCount(r, "nginx_ingress_controller_response_duration_seconds"); n != 0 {
		t.Errorf("%d response_duration series without observations", n)
	}
}

// TestRequestsApplyRows: a row per rule. Invalid rows are dropped alone
// and their requests counted as dropped; the batch still applies.
func TestRequestsApplyRows(t *testing.T) {
	for _, tc := range []struct {
		name    string
		row     []any
		labels  map[string]string // of the one series expected, nil for none
		dropped float64
	}{
		{"counted", row(webKey, 404, "POST", "", 2), map[string]string{"status": "404", "method": "POST", "host": "shop.test"}, 0},
		{"no response is status 000", row(webKey, 0, "GET", "", 1), map[string]string{"status": "000"}, 0},
		{"other method", row(webKey, 200, "OTHER", "", 1), map[string]string{"method": "OTHER"}, 0},
		{"host from the request", row(anyKey, 200, "GET", "x.example.com", 1), map[string]string{"host": "x.example.com", "ingress": ""}, 0},
		{"a host for a defined key is ignored", row(webKey, 200, "GET", "evil.test", 1), map[string]string{"host": "shop.test"}, 0},
		{"odd request host", row(anyKey, 200, "GET", "a b\"c", 1), map[string]string{"host": "invalid"}, 0},
		{"unknown key", row("d0123456789abcdef", 200, "GET", "", 4), nil, 4},
		{"malformed key", row(`x"} 1`, 200, "GET", "", 5), nil, 5},
		{"made-up method", row(webKey, 200, "BREW", "", 1), nil, 1},
		{"status out of range", row(webKey, 1000, "GET", "", 1), nil, 1},
		{"fractional status", row(webKey, 200.5, "GET", "", 1), nil, 1},
		{"negative count", append(row(webKey, 200, "GET", "", 1)[:5], -1.0), nil, 0},
		{"short row", row(webKey, 200, "GET", "", 1)[:10], nil, 0},
		{"string count", append(row(webKey, 200, "GET", "", 1)[:4], "1"), nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, reg := newTestRequests(t, testOptions())
			if err := r.Apply(batchJSON(t, tc.row)); err != nil {
				t.Fatal(err)
			}
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			var series []map[string]string
			for _, mf := range mfs {
				if mf.GetName() != "nginx_ingress_controller_requests" {
					continue
				}
				for _, m := range mf.GetMetric() {
					l := map[string]string{}
					for _, p := range m.GetLabel() {
						l[p.GetName()] = p.GetValue()
					}
					series = append(series, l)
				}
			}
			switch {
			case tc.labels == nil && len(series) != 0:
				t.Errorf("series %v, want none", series)
			case tc.labels != nil && len(series) != 1:
				t.Errorf("series %v, want one", series)
			case tc.labels != nil:
				for k, v := range tc.labels {
					if series[0][k] != v {
						t.Errorf("label %s = %q, want %q", k, series[0][k], v)
					}
				}
			}
			if got := testutil.ToFloat64(r.dropped); got != tc.dropped {
				t.Errorf("dropped = %v, want %v", got, tc.dropped)
			}
		})
	}
}

// TestRequestsApplyRefusesBatches: a batch of another shape is refused
// whole.
func TestRequestsApplyRefusesBatches(t *testing.T) {
	r, _ := newTestRequests(t, testOptions())
	for _, tc := range []struct{ name, body string }{
		{"not JSON", "{"},
		{"another version", `{"version":2,"histograms":[],"series":[]}`},
		{"other histograms", `{"version":1,"histograms":["request_size"],"series":[]}`},
		{"series not a list", `{"version":1,"histograms":` + mustJSON(histogramNames()) + `,"series":{}}`},
	} {
		if err := r.Apply([]byte(tc.body)); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestNewRequestsOptions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*RequestOptions)
		ok     bool
	}{
		{"defaults", func(*RequestOptions) {}, true},
		{"exclude with and without prefix", func(o *RequestOptions) {
			o.Exclude = []string{"nginx_ingress_controller_bytes_sent", "header_duration_seconds"}
		}, true},
		{"exclude an unknown metric", func(o *RequestOptions) { o.Exclude = []string{"nginx_ingress_controller_success"} }, false},
		{"undefined hosts without per-host", func(o *RequestOptions) { o.PerHost = false }, false},
		{"descending buckets", func(o *RequestOptions) { o.TimeBuckets = []float64{1, 0.1} }, false},
		{"no buckets", func(o *RequestOptions) { o.SizeBuckets = nil }, false},
	} {
		o := testOptions()
		tc.change(&o)
		if _, err := NewRequests(o, nil); (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	o := testOptions()
	o.Exclude = []string{"nginx_ingress_controller_bytes_sent", "connect_duration_seconds"}
	r, err := NewRequests(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Histograms(), ","); strings.Contains(got, "bytes_sent") || strings.Contains(got, "connect") {
		t.Errorf("excluded histograms still observed: %s", got)
	}
	if r.latencyOn {
		t.Error("ingress_upstream_latency_seconds without the connect time it sums")
	}
}

// TestRequestsStatusClassesAndNoHost: --report-status-classes folds
// statuses, and without --metrics-per-host there is no host label.
func TestRequestsStatusClassesAndNoHost(t *testing.T) {
	o := testOptions()
	o.StatusClasses, o.PerHost, o.PerUndefinedHost = true, false, false
	r, reg := newTestRequests(t, o)
	if err := r.Apply(batchJSON(t, row(webKey, 200, "GET", "", 2), row(webKey, 204, "GET", "", 3))); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP nginx_ingress_controller_requests The total number of client requests.
# TYPE nginx_ingress_controller_requests counter
nginx_ingress_controller_requests{canary="",controller_class="causeway",ingress="web",method="GET",namespace="shop",path="/",service="web",status="2xx"} 5
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "nginx_ingress_controller_requests"); err != nil {
		t.Error(err)
	}
}

// TestRequestsSeriesExpire: a key the configuration stops naming keeps
// counting for the grace period (old workers), then its series go.
func TestRequestsSeriesExpire(t *testing.T) {
	r, _ := newTestRequests(t, testOptions())
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	if err := r.Apply(batchJSON(t, row(webKey, 200, "GET", "", 1))); err != nil {
		t.Fatal(err)
	}
	r.SetSeries(map[string]balancer.SeriesLabels{anyKey: anyLabels}) // webKey gone
	now = now.Add(time.Minute)
	if err := r.Apply(batchJSON(t, row(webKey, 200, "GET", "", 1))); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(r, "nginx_ingress_controller_requests"); n != 1 {
		t.Fatalf("%d series within the grace period, want 1", n)
	}
	now = now.Add(2 * time.Minute)
	if n := testutil.CollectAndCount(r, "nginx_ingress_controller_requests"); n != 0 {
		t.Errorf("%d series after the grace period, want 0", n)
	}
	// Named again, the key counts from zero.
	r.SetSeries(map[string]balancer.SeriesLabels{webKey: webLabels})
	if err := r.Apply(batchJSON(t, row(webKey, 200, "GET", "", 1))); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(r); got != 1 {
		t.Errorf("requests = %v after the key came back, want 1", got)
	}
}

// TestRequestsServe: the socket answers "ok" once a batch is counted and
// the reason otherwise, and is private to its owner and group.
func TestRequestsServe(t *testing.T) {
	r, _ := newTestRequests(t, testOptions())
	path := filepath.Join(t.TempDir(), "metrics.sock")
	ln, err := ListenSocket(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go r.Serve(ln)
	send := func(body string) string {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprint(c, body)
		buf := make([]byte, 200)
		n, _ := c.Read(buf)
		return string(buf[:n])
	}
	if got := send(string(batchJSON(t, row(webKey, 200, "GET", "", 1))) + "\n"); got != "ok\n" {
		t.Errorf("valid batch: %q", got)
	}
	if got := send("{}\n"); !strings.HasPrefix(got, "error ") {
		t.Errorf("invalid batch: %q", got)
	}
	if got := testutil.ToFloat64(r.batches.WithLabelValues("ok")); got != 1 {
		t.Errorf("ok batches = %v", got)
	}
	st, err := lnStat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st&0o007 != 0 {
		t.Errorf("socket mode %o lets others connect", st)
	}
}

// FuzzRequestsApply: no batch makes Apply panic or export a label it did
// not validate.
func FuzzRequestsApply(f *testing.F) {
	f.Add([]byte(`{"version":1,"histograms":` + mustJSON(histogramNames()) + `,"series":[` + mustJSON(row(webKey, 200, "GET", "", 1)) + `]}`))
	f.Add([]byte(`{"version":1,"histograms":` + mustJSON(histogramNames()) + `,"series":[` + mustJSON(row(anyKey, 200, "GET", "x\u0000\"}", 1)) + `]}`))
	f.Add([]byte(`{"version":1,"series":[[]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewRequests(testOptions(), nil)
		if err != nil {
			t.Fatal(err)
		}
		r.SetSeries(map[string]balancer.SeriesLabels{webKey: webLabels, anyKey: anyLabels})
		_ = r.Apply(data)
		reg := prometheus.NewRegistry()
		reg.MustRegister(r)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatalf("gather: %v", err)
		}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "host" && !requestHostRe.MatchString(l.GetValue()) && l.GetValue() != "invalid" {
						t.Fatalf("host label %q", l.GetValue())
					}
					if l.GetName() == "method" && !methodRe.MatchString(l.GetValue()) {
						t.Fatalf("method label %q", l.GetValue())
					}
				}
			}
		}
	})
}

func lnStat(path string) (os.FileMode, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Mode().Perm(), nil
}
