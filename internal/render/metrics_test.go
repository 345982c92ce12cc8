package render

import (
	"bytes"
	"maps"
	"strings"
	"testing"
	"unsafe"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/source/files"
)

// goldenMetrics are ingress-nginx's defaults, every histogram on.
var goldenMetrics = Metrics{Histograms: histogramNames(), PerHost: true}

func histogramNames() []string {
	var out []string
	for _, h := range balancer.Histograms {
		out = append(out, h.Name)
	}
	return out
}

// TestMetricsLogFormat: the metrics log's format is variables only, each
// source once, the request's Host last; an unknown histogram is refused.
func TestMetricsLogFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Metrics
		want string
	}{
		{"all", goldenMetrics, `'$causeway_metrics|$status|$request_method|$request_time|$upstream_response_time|$upstream_connect_time|$upstream_header_time|$request_length|$bytes_sent|$host'`},
		{"undefined hosts", Metrics{Histograms: histogramNames(), PerHost: true, PerUndefinedHost: true},
			`'$causeway_metrics|$status|$request_method|$request_time|$upstream_response_time|$upstream_connect_time|$upstream_header_time|$request_length|$bytes_sent|$host'`},
		{"bytes_sent alone", Metrics{Histograms: []string{"bytes_sent"}}, `'$causeway_metrics|$status|$request_method|$bytes_sent|$host'`},
		{"one source twice", Metrics{Histograms: []string{"response_size", "bytes_sent"}}, `'$causeway_metrics|$status|$request_method|$bytes_sent|$host'`},
		{"none", Metrics{}, `'$causeway_metrics|$status|$request_method|$host'`},
	} {
		got, err := tc.m.logFormat()
		if err != nil || got != tc.want {
			t.Errorf("%s: got %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
	for _, bad := range []string{`x') os.execute('id`, "requests", ""} {
		m := Metrics{Histograms: []string{bad}}
		if f, err := m.logFormat(); err == nil {
			t.Errorf("histogram %q accepted: %s", bad, f)
		}
	}
}

// TestMetricsSeries: every counted location's key maps to its labels (a
// shared server's key, by host); the catch-all's own locations count only
// for undefined hosts.
func TestMetricsSeries(t *testing.T) {
	snap, err := files.Load("testdata/lua-metrics/input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := build.Build(snap, goldenOpts)
	render := func(mc Metrics) *Output {
		t.Helper()
		p := goldenParams
		p.Dynamic, p.Metrics = &Dynamic{}, &mc
		out, err := Render(m, p)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// A shared server's location has one key for all its hosts; the
	// series has an entry per host (SharedSeriesEntry).
	byLabels := func(out *Output) map[balancer.SeriesLabels]string {
		got := map[balancer.SeriesLabels]string{}
		for k, l := range out.Series {
			key, host, shared := strings.Cut(k, "\x00")
			switch {
			case !balancer.ValidSeriesKey(key):
				t.Errorf("key %q is malformed", key)
			case shared && (!balancer.IsSharedSeriesKey([]byte(key)) || l.Host != "" && l.Host != host):
				t.Errorf("entry %q does not match its labels %+v", k, l)
			case !shared && key != balancer.SeriesKey(*l):
				t.Errorf("key %q does not match its labels %+v", k, l)
			}
			got[*l] = key
		}
		return got
	}
	out := render(goldenMetrics)
	series := byLabels(out)
	for _, want := range []balancer.SeriesLabels{
		{Namespace: "team", Ingress: "a", Service: "a", Path: "/", Host: "a.example.com"},
		{Namespace: "team", Ingress: "b", Service: "api", Path: "/api", Host: "b.example.com"},
		// A host's own 404 for paths no rule has.
		{Host: "regex.example.com"},
	} {
		if _, ok := series[want]; !ok {
			t.Errorf("no series %+v in %v", want, series)
		}
	}
	if _, ok := series[balancer.SeriesLabels{}]; ok {
		t.Error("the catch-all's own default is counted without --metrics-per-undefined-host")
	}
	all := ""
	for _, f := range out.Files {
		all += string(f)
	}
	for k := range out.Series {
		k, _, _ = strings.Cut(k, "\x00")
		if !strings.Contains(all, `set $causeway_metrics "`+k+`";`) {
			t.Errorf("key %s is in no file", k)
		}
	}
	// a.example.com and b.example.com share a server: their keys are the
	// same, and no map on $host picks them.
	shared := out.Series[balancer.SharedSeriesEntry(series[balancer.SeriesLabels{Namespace: "team", Ingress: "a", Service: "a", Path: "/", Host: "a.example.com"}], "b.example.com")]
	if shared.Ingress != "b" {
		t.Errorf("the shared key of a.example.com's / gives b.example.com's labels %+v", shared)
	}
	if strings.Contains(all, "set $causeway_metrics $") {
		t.Error("a series key comes from a map")
	}

	undefined := goldenMetrics
	undefined.PerUndefinedHost = true
	if _, ok := byLabels(render(undefined))[balancer.SeriesLabels{HostFromRequest: true}]; !ok {
		t.Error("--metrics-per-undefined-host: the catch-all's default is not counted by request host")
	}
	noHost := goldenMetrics
	noHost.PerHost = false
	series = byLabels(render(noHost))
	if _, ok := series[balancer.SeriesLabels{}]; !ok {
		t.Error("without --metrics-per-host, the catch-all's default is not counted")
	}
	for l := range series {
		if l.Host != "" {
			t.Errorf("host label %q without --metrics-per-host", l.Host)
		}
	}
}

// TestKnownSeriesShared: with Params.KnownSeries, the render's series take
// the key strings and labels the collector knows where the labels are
// equal (so the two share them instead of holding a copy each), and keep
// their own where they differ; no file changes, and the memo still hits.
func TestKnownSeriesShared(t *testing.T) {
	snap, err := files.Load("testdata/lua-metrics/input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := build.Build(snap, goldenOpts)
	p := goldenParams
	mc := goldenMetrics
	p.Dynamic, p.Metrics = &Dynamic{}, &mc
	first, err := Render(m, p)
	if err != nil {
		t.Fatal(err)
	}
	type known struct {
		key    string
		labels *balancer.SeriesLabels
	}
	held := map[string]known{}
	for k, l := range first.Series {
		held[k] = known{k, l}
	}
	if len(held) < 3 {
		t.Fatalf("%d series, want some shared and some not", len(held))
	}
	p.KnownSeries = func(key []byte) (string, *balancer.SeriesLabels, bool) {
		k, ok := held[string(key)]
		return k.key, k.labels, ok
	}
	again, err := Render(m, p)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(first.Files, again.Files, bytes.Equal) {
		t.Error("KnownSeries changed the files")
	}
	sharedKeys := 0
	for k, l := range again.Series {
		h, ok := held[k]
		switch {
		case !ok:
			t.Errorf("series %q is new", k)
		case l != h.labels:
			t.Errorf("series %q has labels of its own, equal to the known ones", k)
		case unsafe.StringData(k) != unsafe.StringData(h.key):
			t.Errorf("series %q has a key string of its own", k)
		}
		if strings.Contains(k, "\x00") {
			sharedKeys++
		}
	}
	if sharedKeys == 0 {
		t.Error("no shared server's series: the case no longer covers SharedSeriesEntry")
	}
	// Known under the same key with other labels (an Ingress renamed its
	// Service): the render's own labels stand.
	for k, h := range held {
		other := *h.labels
		other.Service += "-old"
		held[k] = known{k, &other}
	}
	changed, err := Render(m, p)
	if err != nil {
		t.Fatal(err)
	}
	for k, l := range changed.Series {
		if *l != *first.Series[k] || l == held[k].labels {
			t.Errorf("series %q: labels %+v, want the render's own %+v", k, *l, *first.Series[k])
		}
	}
	var mm Memo
	a, err := mm.Render(m, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := mm.Render(m, p)
	if err != nil {
		t.Fatal(err)
	}
	if a.Memoized || !b.Memoized {
		t.Error("the memo rendered again: KnownSeries is in its digest")
	}
}
