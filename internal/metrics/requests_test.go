package metrics

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/causeway/causeway/internal/balancer"
)

var (
	webLabels = balancer.SeriesLabels{Namespace: "shop", Ingress: "web", Service: "web", Path: "/", Host: "shop.test"}
	webKey    = balancer.SeriesKey(webLabels)
	anyLabels = balancer.SeriesLabels{HostFromRequest: true}
	anyKey    = balancer.SeriesKey(anyLabels)
	// A location of a shared server: one key, the labels by host.
	sharedKey = balancer.SharedSeriesKey("0a1b2c", 1, balancer.MetricsVariable)
	aLabels   = balancer.SeriesLabels{Namespace: "shop", Ingress: "a", Service: "a", Path: "/x", Host: "a.test"}
	bLabels   = balancer.SeriesLabels{Namespace: "shop", Ingress: "b", Service: "b", Path: "/x", Host: "b.test"}
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
	r.SetSeries(map[string]*balancer.SeriesLabels{webKey: &webLabels, anyKey: &anyLabels,
		balancer.SharedSeriesEntry(sharedKey, "a.test"): &aLabels, balancer.SharedSeriesEntry(sharedKey, "b.test"): &bLabels,
		balancer.SharedSeriesEntry(sharedKey, "www.b.test"): &bLabels}, 0)
	return r, reg
}

// line is one metrics log line as nginx writes it: the key, status,
// method, the sources (with testOptions, $request_time,
// $upstream_response_time, $upstream_connect_time,
// $upstream_header_time, $request_length, $bytes_sent, joined by "|")
// and the Host.
func line(key, status, method, values string, host ...string) string {
	return strings.Join(append([]string{key, status, method, values}, host...), "|") + "\n"
}

// plain are the values of a request answered by its upstream in 50 ms.
const plain = "0.050|0.049|0.000|0.048|80|215"

func TestRequestsCountAndExport(t *testing.T) {
	r, reg := newTestRequests(t, testOptions())
	// Lines of one series add up, across reads too.
	r.Count([]byte(line(webKey, "200", "GET", plain, "shop.test") + line(webKey, "200", "GET", "0.250|0.250|0.001|0.200|120|2000", "x")))
	r.Count([]byte(line(webKey, "200", "GET", "0.010|-|-|-|60|100", "shop.test")))
	want := `
# HELP nginx_ingress_controller_requests The total number of client requests.
# TYPE nginx_ingress_controller_requests counter
nginx_ingress_controller_requests{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200"} 3
# HELP nginx_ingress_controller_request_duration_seconds The time from the first byte of the request to the last byte of the response sent, in seconds ($request_time).
# TYPE nginx_ingress_controller_request_duration_seconds histogram
nginx_ingress_controller_request_duration_seconds_bucket{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200",le="0.1"} 2
nginx_ingress_controller_request_duration_seconds_bucket{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200",le="+Inf"} 3
nginx_ingress_controller_request_duration_seconds_sum{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200"} 0.31
nginx_ingress_controller_request_duration_seconds_count{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200"} 3
# HELP nginx_ingress_controller_response_duration_seconds The time the upstream took to answer, in seconds ($upstream_response_time).
# TYPE nginx_ingress_controller_response_duration_seconds histogram
nginx_ingress_controller_response_duration_seconds_bucket{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200",le="0.1"} 1
nginx_ingress_controller_response_duration_seconds_bucket{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200",le="+Inf"} 2
nginx_ingress_controller_response_duration_seconds_sum{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200"} 0.299
nginx_ingress_controller_response_duration_seconds_count{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200"} 2
# HELP nginx_ingress_controller_bytes_sent The bytes sent to the client ($bytes_sent), with the size buckets.
# TYPE nginx_ingress_controller_bytes_sent histogram
nginx_ingress_controller_bytes_sent_bucket{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200",le="1000"} 2
nginx_ingress_controller_bytes_sent_bucket{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200",le="+Inf"} 3
nginx_ingress_controller_bytes_sent_sum{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200"} 2315
nginx_ingress_controller_bytes_sent_count{canary="",controller_class="causeway",host="shop.test",ingress="web",method="GET",namespace="shop",path="/",service="web",status="200"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "nginx_ingress_controller_requests",
		"nginx_ingress_controller_request_duration_seconds", "nginx_ingress_controller_response_duration_seconds",
		"nginx_ingress_controller_bytes_sent"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(r.lines); got != 3 {
		t.Errorf("lines = %v, want 3", got)
	}
}

// TestRequestsCountLines: a line per rule. A line that cannot be used is
// dropped alone and counted as dropped.
func TestRequestsCountLines(t *testing.T) {
	for _, tc := range []struct {
		name    string
		line    string
		labels  map[string]string // of the one series expected, nil for none
		hist    float64           // response_duration_seconds observations
		dropped float64
	}{
		{"counted", line(webKey, "404", "POST", plain, "shop.test"), map[string]string{"status": "404", "method": "POST", "host": "shop.test"}, 1, 0},
		{"no response is status 000", line(webKey, "000", "GET", "0.001|-|-|-|40|0", ""), map[string]string{"status": "000"}, 0, 0},
		{"several attempts are not observed", line(webKey, "502", "GET", "0.100|0.050, 0.050|0.001, 0.001|-, -|80|300", "shop.test"), map[string]string{"status": "502"}, 0, 0},
		{"an internal redirect's times are not observed", line(webKey, "200", "GET", "0.100|0.050 : 0.040|0.000 : 0.001|0.040 : 0.030|80|300", "shop.test"), map[string]string{"status": "200"}, 0, 0},
		{"other method", line(webKey, "200", "BREW", plain, ""), map[string]string{"method": "OTHER"}, 1, 0},
		{"host from the request", line(anyKey, "200", "GET", plain, "x.example.com"), map[string]string{"host": "x.example.com", "ingress": ""}, 1, 0},
		{"a host for a defined key is ignored", line(webKey, "200", "GET", plain, "evil.test"), map[string]string{"host": "shop.test"}, 1, 0},
		{"odd request host", line(anyKey, "200", "GET", plain, `a b"c|d`), map[string]string{"host": "invalid"}, 1, 0},
		{"a shared key, by host", line(sharedKey, "200", "GET", plain, "b.test"), map[string]string{"ingress": "b", "host": "b.test", "path": "/x"}, 1, 0},
		{"a shared key, by alias", line(sharedKey, "200", "GET", plain, "www.b.test"), map[string]string{"ingress": "b", "host": "b.test"}, 1, 0},
		{"a shared key, another host", line(sharedKey, "200", "GET", plain, "c.test"), nil, 0, 1},
		{"a shared key, a host with the separator", line(sharedKey, "200", "GET", plain, "a.test|x"), nil, 0, 1},
		{"a shared key, no host", line(sharedKey, "200", "GET", plain, ""), nil, 0, 1},
		{"unknown key", line("d0123456789abcdef", "200", "GET", plain, ""), nil, 0, 1},
		{"malformed key", line(`x"} 1`, "200", "GET", plain, ""), nil, 0, 1},
		{"status out of range", line(webKey, "1000", "GET", plain, ""), nil, 0, 1},
		{"fractional status", line(webKey, "20.", "GET", plain, ""), nil, 0, 1},
		{"short line", webKey + "|200|GET|0.1\n", nil, 0, 1},
		{"empty line", "\n", nil, 0, 1},
		{"negative value", line(webKey, "200", "GET", "-1|0.049|0.000|0.048|80|215", ""), map[string]string{"status": "200"}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, reg := newTestRequests(t, testOptions())
			r.Count([]byte(tc.line))
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			var series []map[string]string
			var hist float64
			for _, mf := range mfs {
				switch mf.GetName() {
				case "nginx_ingress_controller_response_duration_seconds":
					for _, m := range mf.GetMetric() {
						hist += float64(m.GetHistogram().GetSampleCount())
					}
				case "nginx_ingress_controller_requests":
					for _, m := range mf.GetMetric() {
						l := map[string]string{}
						for _, p := range m.GetLabel() {
							l[p.GetName()] = p.GetValue()
						}
						series = append(series, l)
					}
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
			if hist != tc.hist {
				t.Errorf("response_duration observations = %v, want %v", hist, tc.hist)
			}
			if got := testutil.ToFloat64(r.dropped); got != tc.dropped {
				t.Errorf("dropped = %v, want %v", got, tc.dropped)
			}
		})
	}
}

// TestRequestsFields: the line's fields follow the histograms observed,
// and end with the Host even without undefined hosts (shared servers'
// series need it); excluded histograms' sources are not there.
func TestRequestsFields(t *testing.T) {
	o := testOptions()
	o.PerUndefinedHost = false
	o.Exclude = []string{"request_duration_seconds", "response_duration_seconds", "connect_duration_seconds", "header_duration_seconds", "request_size"}
	r, _ := newTestRequests(t, o)
	r.Count([]byte(webKey + "|200|GET|215\n" + webKey + "|200|GET|215|shop.test\n" + webKey + "|200|GET\n"))
	if got := testutil.ToFloat64(r.dropped); got != 2 {
		t.Errorf("dropped = %v, want 2", got)
	}
	if got := testutil.CollectAndCount(r, "nginx_ingress_controller_bytes_sent"); got != 1 {
		t.Errorf("%d bytes_sent series, want 1", got)
	}
}

// TestRequestsMaxSeries: requests of new series beyond MaxSeries are
// dropped, those of series already held still count.
func TestRequestsMaxSeries(t *testing.T) {
	r, _ := newTestRequests(t, testOptions())
	var b strings.Builder
	for i := range MaxSeries + 10 {
		b.WriteString(line(anyKey, "200", "GET", plain, fmt.Sprintf("h%d.test", i)))
	}
	b.WriteString(line(anyKey, "200", "GET", plain, "h0.test"))
	r.Count([]byte(b.String()))
	if got := testutil.ToFloat64(r.dropped); got != 10 {
		t.Errorf("dropped = %v, want 10", got)
	}
	if got := len(r.series); got != MaxSeries {
		t.Errorf("%d series, want %d", got, MaxSeries)
	}
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
	r.Count([]byte(strings.Repeat(line(webKey, "200", "GET", plain, "shop.test"), 2) + strings.Repeat(line(webKey, "204", "GET", plain, "shop.test"), 3)))
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
	o := testOptions()
	o.Exclude = SocketMetrics[1:] // the requests counter alone
	r, _ := newTestRequests(t, o)
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	r.Count([]byte(line(webKey, "200", "GET", plain, "")))
	r.SetSeries(map[string]*balancer.SeriesLabels{anyKey: &anyLabels}, 0) // webKey gone
	now = now.Add(time.Minute)
	r.Count([]byte(line(webKey, "200", "GET", plain, "")))
	if n := testutil.CollectAndCount(r, "nginx_ingress_controller_requests"); n != 1 {
		t.Fatalf("%d series within the grace period, want 1", n)
	}
	now = now.Add(2 * time.Minute)
	if n := testutil.CollectAndCount(r, "nginx_ingress_controller_requests"); n != 0 {
		t.Errorf("%d series after the grace period, want 0", n)
	}
	// Named again, the key counts from zero.
	r.SetSeries(map[string]*balancer.SeriesLabels{webKey: &webLabels}, 0)
	r.Count([]byte(line(webKey, "200", "GET", plain, "")))
	if got := testutil.ToFloat64(r); got != 1 {
		t.Errorf("requests = %v after the key came back, want 1", got)
	}
	// Old workers that may live 10 minutes (worker-shutdown-timeout) keep
	// a removed key known until they are gone.
	r.SetSeries(map[string]*balancer.SeriesLabels{anyKey: &anyLabels}, 10*time.Minute)
	now = now.Add(9 * time.Minute)
	r.Count([]byte(line(webKey, "200", "GET", plain, "")))
	if got := testutil.ToFloat64(r); got != 2 {
		t.Errorf("requests = %v from an old worker after 9 minutes, want 2", got)
	}
	now = now.Add(2 * time.Minute)
	if n := testutil.CollectAndCount(r, "nginx_ingress_controller_requests"); n != 0 {
		t.Errorf("%d series once the old workers are gone, want 0", n)
	}
}

// TestRequestsAddSeries: keys added beside the configuration's (a host
// the table serves ahead of the next configuration) count at once, leave
// the configuration's keys as they are, and expire like them once a
// configuration does not name them.
func TestRequestsAddSeries(t *testing.T) {
	r, _ := newTestRequests(t, testOptions())
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	cLabels := balancer.SeriesLabels{Namespace: "shop", Ingress: "c", Service: "c", Path: "/x", Host: "c.test"}
	cEntry := balancer.SharedSeriesEntry(sharedKey, "c.test")
	r.Count([]byte(line(sharedKey, "200", "GET", plain, "c.test")))
	if n := testutil.CollectAndCount(r, "nginx_ingress_controller_requests"); n != 0 {
		t.Fatalf("%d series before the key was added, want 0", n)
	}
	r.AddSeries(map[string]*balancer.SeriesLabels{cEntry: &cLabels})
	r.Count([]byte(line(sharedKey, "200", "GET", plain, "c.test")))
	r.Count([]byte(line(webKey, "200", "GET", plain, "")))
	if n := testutil.CollectAndCount(r, "nginx_ingress_controller_requests"); n != 2 {
		t.Fatalf("%d series after AddSeries, want c's and web's", n)
	}
	r.SetSeries(map[string]*balancer.SeriesLabels{webKey: &webLabels}, 0) // c gone
	now = now.Add(3 * time.Minute)
	r.Count([]byte(line(webKey, "200", "GET", plain, "")))
	if n := testutil.CollectAndCount(r, "nginx_ingress_controller_requests"); n != 1 {
		t.Errorf("%d series after the grace period, want web's alone", n)
	}
}

// FuzzRequestsCount: no log makes Count panic or export a label it did
// not validate.
func FuzzRequestsCount(f *testing.F) {
	f.Add([]byte(line(webKey, "200", "GET", plain, "")))
	f.Add([]byte(line(anyKey, "200", "GET", plain, "x\u0000\"}") + line(anyKey, "999", "PATCH", "1. 2 3 4 5 6", "a")))
	f.Add([]byte("|||\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewRequests(testOptions(), nil)
		if err != nil {
			t.Fatal(err)
		}
		r.SetSeries(map[string]*balancer.SeriesLabels{webKey: &webLabels, anyKey: &anyLabels,
			balancer.SharedSeriesEntry(sharedKey, "a.test"): &aLabels, balancer.SharedSeriesEntry(sharedKey, "b.test"): &bLabels,
			balancer.SharedSeriesEntry(sharedKey, "www.b.test"): &bLabels}, 0)
		r.Count(data)
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
					if _, ok := methods[l.GetValue()]; l.GetName() == "method" && !ok && l.GetValue() != "OTHER" {
						t.Fatalf("method label %q", l.GetValue())
					}
				}
			}
		}
	})
}

// TestRequestsKnownSeries: KnownSeries gives the key string and labels the
// collector holds (the very ones, for the render to share), through a
// later configuration that names the key again with equal labels too;
// nothing for a key it does not know.
func TestRequestsKnownSeries(t *testing.T) {
	r, _ := newTestRequests(t, testOptions())
	entry := balancer.SharedSeriesEntry(sharedKey, "a.test")
	key, labels, ok := r.KnownSeries([]byte(entry))
	if !ok || key != entry || labels != &aLabels {
		t.Fatalf("KnownSeries(%q) = %q, %p, %v; want the entry and &aLabels", entry, key, labels, ok)
	}
	again := aLabels
	r.SetSeries(map[string]*balancer.SeriesLabels{balancer.SharedSeriesEntry(sharedKey, "a.test"): &again}, 0)
	if k, l, ok := r.KnownSeries([]byte(entry)); !ok || l != &aLabels || unsafe.StringData(k) != unsafe.StringData(key) {
		t.Errorf("after equal labels again: %q, %p, %v; want the first key string and labels", k, l, ok)
	}
	if _, _, ok := r.KnownSeries([]byte(balancer.SharedSeriesEntry(sharedKey, "c.test"))); ok {
		t.Error("a host no configuration named is known")
	}
}
