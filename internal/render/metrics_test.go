package render

import (
	"math"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/source/files"
)

// goldenMetrics are ingress-nginx's defaults, every histogram on.
var goldenMetrics = Metrics{
	Histograms:    histogramNames(),
	TimeBuckets:   []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	LengthBuckets: []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100},
	SizeBuckets:   []float64{10, 100, 1000, 10000, 100000, 1e+06, 1e+07},
	PerHost:       true,
}

func histogramNames() []string {
	var out []string
	for _, h := range balancer.Histograms {
		out = append(out, h.Name)
	}
	return out
}

// TestMetricsLuaInit: the init call holds only numbers and names from a
// fixed list; anything else is refused.
func TestMetricsLuaInit(t *testing.T) {
	const sock = "/var/lib/causeway/sockets/metrics.sock"
	good := goldenMetrics
	call, err := good.luaInit(sock)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`socket = "` + sock + `"`, `histograms = { "request_duration_seconds", `, `time = { 0.005, 0.01,`, `size = { 10, 100, 1000, 10000, 100000, 1e+06, 1e+07 }`, "host_for_undefined = false"} {
		if !strings.Contains(call, want) {
			t.Errorf("init call lacks %q:\n%s", want, call)
		}
	}
	for _, tc := range []struct {
		name   string
		change func(*Metrics)
		sock   string
	}{
		{"unknown histogram", func(m *Metrics) { m.Histograms = []string{`x") os.execute("id`} }, sock},
		{"descending buckets", func(m *Metrics) { m.TimeBuckets = []float64{1, 0.5} }, sock},
		{"equal buckets", func(m *Metrics) { m.LengthBuckets = []float64{10, 10} }, sock},
		{"NaN bucket", func(m *Metrics) { m.SizeBuckets = []float64{math.NaN()} }, sock},
		{"infinite bucket", func(m *Metrics) { m.SizeBuckets = []float64{1, math.Inf(1)} }, sock},
		{"negative bucket", func(m *Metrics) { m.TimeBuckets = []float64{-1} }, sock},
		{"no buckets", func(m *Metrics) { m.TimeBuckets = nil }, sock},
		{"too many buckets", func(m *Metrics) { m.TimeBuckets = make([]float64, 65) }, sock},
	} {
		m := goldenMetrics
		tc.change(&m)
		if call, err := m.luaInit(tc.sock); err == nil {
			t.Errorf("%s: accepted: %s", tc.name, call)
		}
	}
	// The socket is checked with the data plane's other sockets.
	for _, sock := range []string{"metrics.sock", `/tmp/a"b.sock`, "/" + strings.Repeat("a", 120)} {
		o := SnippetOptions{LuaDir: "/l", SocketPath: "/s/d.sock", UnavailableSocket: "/s/u.sock", NoLiveSocket: "/s/n.sock", Metrics: &good, MetricsSocket: sock}
		if _, err := NginxSnippets(o); err == nil {
			t.Errorf("metrics socket %q accepted", sock)
		}
	}
}

// TestMetricsSeries: every counted location's key maps to its labels; the
// catch-all's own locations count only for undefined hosts.
func TestMetricsSeries(t *testing.T) {
	snap, err := files.Load("testdata/lua-metrics/input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := build.Build(snap, goldenOpts)
	render := func(mc Metrics) *Output {
		t.Helper()
		p := goldenParams
		p.Dynamic = &Dynamic{Metrics: &mc}
		out, err := Render(m, p)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	byLabels := func(out *Output) map[balancer.SeriesLabels]string {
		got := map[balancer.SeriesLabels]string{}
		for k, l := range out.Series {
			if k != balancer.SeriesKey(l) || !balancer.ValidSeriesKey(k) {
				t.Errorf("key %q does not match its labels %+v", k, l)
			}
			got[l] = k
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
		if !strings.Contains(all, `"`+k+`"`) {
			t.Errorf("key %s is in no file", k)
		}
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
