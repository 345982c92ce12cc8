package render

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"reflect"
	"regexp"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/spanlog"
)

// TestRatioPatternIsGoSDKs: the regex nginx samples trace IDs by takes
// exactly the IDs OpenTelemetry's Go SDK's TraceIDRatioBased takes, at
// random and right at the bound.
func TestRatioPatternIsGoSDKs(t *testing.T) {
	for _, ratio := range []float64{0.5, 0.25, 0.01, 0.001, 1e-6, 1.0 / 3, 0.999999, 0.123456789, 1e-17} {
		bound := ratioBound(ratio)
		if bound == 0 {
			t.Fatalf("ratio %v: bound 0", ratio)
		}
		re := regexp.MustCompile(ratioPattern(bound))
		sampler := sdktrace.TraceIDRatioBased(ratio)
		check := func(id trace.TraceID) {
			t.Helper()
			want := sampler.ShouldSample(sdktrace.SamplingParameters{ParentContext: context.Background(), TraceID: id}).Decision == sdktrace.RecordAndSample
			if got := re.MatchString(hex.EncodeToString(id[:])); got != want {
				t.Fatalf("ratio %v, trace %x: nginx samples %v, the Go SDK %v (pattern %s)", ratio, id, got, want, re)
			}
		}
		var id trace.TraceID
		for range 20000 {
			rand.Read(id[:])
			check(id)
		}
		// Right at the bound, and around it.
		for _, d := range []int64{-2, -1, 0, 1, 2} {
			binary.BigEndian.PutUint64(id[8:], bound+uint64(d))
			check(id)
		}
		binary.BigEndian.PutUint64(id[8:], 0)
		check(id)
		binary.BigEndian.PutUint64(id[8:], ^uint64(0))
		check(id)
	}
	if ratioBound(0) != 0 || ratioBound(1e-20) != 0 {
		t.Error("a ratio too small to sample anything has a bound")
	}
}

// renderTracing renders the lua-tracing-metrics case.
func renderTracing(t *testing.T) (*Output, string) {
	t.Helper()
	m, p := goldenCase(t, "lua-tracing-metrics")
	out, err := Render(m, p)
	if err != nil {
		t.Fatal(err)
	}
	all := ""
	for _, n := range out.Files.Names() {
		all += string(out.Files[n])
	}
	return out, all
}

// TestTracingSpans: every traced location's key maps to its labels (a
// shared server's key, by host), the Ingress that turns tracing off sets
// none, and a distrusting Ingress's key says so.
func TestTracingSpans(t *testing.T) {
	out, all := renderTracing(t)
	byIngress := map[string]spanlog.Labels{}
	keys := map[string]string{}
	for k, l := range out.Spans {
		key, host, shared := strings.Cut(k, "\x00")
		switch {
		case !spanlog.ValidKey(key):
			t.Errorf("key %q is malformed", key)
		case shared && (!spanlog.IsShared(key) || l.Host != host):
			t.Errorf("entry %q does not match its labels %+v", k, l)
		case !shared && (spanlog.IsShared(key) || key[2:] != spanlog.Key(l, true)[2:]):
			t.Errorf("key %q does not match its labels %+v", k, l)
		}
		if !strings.Contains(all, `set $causeway_trace "`+key+`";`) {
			t.Errorf("key %s is in no file", key)
		}
		id := l.Namespace + "/" + l.Ingress + " " + l.Host + " " + l.Path
		byIngress[id], keys[id] = l, key
	}
	op := "HTTP ${request_method} ${service_name} ${uri}"
	for id, want := range map[string]spanlog.Labels{
		"team/a a.example.com /":       {Namespace: "team", Ingress: "a", Service: "a", Port: "80", Upstream: "team-a-80", Path: "/", Host: "a.example.com"},
		"team/b b.example.com /api":    {Namespace: "team", Ingress: "b", Service: "api", Port: "http", Upstream: "team-api-http", Path: "/api", Host: "b.example.com"},
		"team/edge edge.example.com /": {Namespace: "team", Ingress: "edge", Service: "a", Port: "80", Upstream: "team-a-80", Path: "/", Host: "edge.example.com"},
		// The catch-all's own 404 is ingress-nginx's default backend.
		"/  ": {Upstream: "upstream-default-backend"},
	} {
		got, ok := byIngress[id]
		if !ok {
			t.Errorf("no span labels for %s in %v", id, byIngress)
			continue
		}
		name := got.Operation.String()
		got.Operation = nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: labels %+v, want %+v", id, got, want)
		}
		switch {
		case id == "team/edge edge.example.com /" && (name != "edge" || keys[id][0] != 'u'):
			t.Errorf("%s: name %q, key %s; want the annotation's name and a distrusting key", id, name, keys[id])
		case id != "team/edge edge.example.com /" && (name != op || keys[id][0] != 't'):
			t.Errorf("%s: name %q, key %s; want the ConfigMap's name and a trusting key", id, name, keys[id])
		}
	}
	for id := range byIngress {
		if strings.HasPrefix(id, "team/health ") {
			t.Errorf("%s is traced; its Ingress turns tracing off", id)
		}
	}
	if strings.Contains(all, "set $causeway_trace $") {
		t.Error("a span key comes from a map")
	}
}

// tracingMap evaluates a map block of nginx.conf as nginx does for these:
// the first regex that matches, else the default; $1 is the capture.
func tracingMap(t *testing.T, conf, header, in string) string {
	t.Helper()
	start := strings.Index(conf, header+" {\n")
	if start < 0 {
		t.Fatalf("no map %q", header)
	}
	block := conf[start+len(header)+3:]
	block = block[:strings.Index(block, "\n    }")]
	def := ""
	line := regexp.MustCompile(`^\s*(?:"~([^"]*)"|default) (.*);$`)
	for _, l := range strings.Split(block, "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("map line %q", l)
		}
		if m[1] == "" {
			def = m[2]
			continue
		}
		if c := regexp.MustCompile(m[1]).FindStringSubmatch(in); c != nil {
			return strings.ReplaceAll(strings.Trim(m[2], `"`), "$1", c[len(c)-1])
		}
	}
	return strings.Trim(def, `"`)
}

// TestTracingParentMap: a trusting location continues a traceparent W3C
// Trace Context calls valid and nothing else; a distrusting one never.
func TestTracingParentMap(t *testing.T) {
	out, _ := renderTracing(t)
	conf := string(out.Files["nginx.conf"])
	const (
		trace  = "4bf92f3577b34da6a3ce929d0e0e4736"
		parent = "00f067aa0ba902b7"
	)
	header := `map "$causeway_trace:$http_traceparent" $causeway_trace_parent`
	for _, tc := range []struct{ key, traceparent, want string }{
		{"td0123456789abcdef", "00-" + trace + "-" + parent + "-01", trace + "-" + parent + "-01"},
		{"ts0123456789abcdef", "00-" + trace + "-" + parent + "-00", trace + "-" + parent + "-00"},
		{"ud0123456789abcdef", "00-" + trace + "-" + parent + "-01", ""},
		{"", "00-" + trace + "-" + parent + "-01", ""},
		// A later version may add fields after a "-".
		{"td0123456789abcdef", "01-" + trace + "-" + parent + "-01-what-comes", trace + "-" + parent + "-01"},
		{"td0123456789abcdef", "00-" + trace + "-" + parent + "-01-extra", ""},
		{"td0123456789abcdef", "ff-" + trace + "-" + parent + "-01", ""},
		{"td0123456789abcdef", "00-" + strings.Repeat("0", 32) + "-" + parent + "-01", ""},
		{"td0123456789abcdef", "00-" + trace + "-" + strings.Repeat("0", 16) + "-01", ""},
		{"td0123456789abcdef", "00-" + strings.ToUpper(trace) + "-" + parent + "-01", ""},
		{"td0123456789abcdef", "00-" + trace[1:] + "-" + parent + "-01", ""},
		{"td0123456789abcdef", "00-" + trace + "-" + parent + "-1", ""},
		{"td0123456789abcdef", " 00-" + trace + "-" + parent + "-01", ""},
		{"td0123456789abcdef", "00-" + trace + "-" + parent + "-01, 00-" + trace + "-" + parent + "-01", ""},
	} {
		if got := tracingMap(t, conf, header, tc.key+":"+tc.traceparent); got != tc.want {
			t.Errorf("key %q, traceparent %q: parent %q, want %q", tc.key, tc.traceparent, got, tc.want)
		}
	}
	// Parent-based: a parent's sampled flag wins over the ratio.
	flags := `map $causeway_trace_parent $causeway_trace_flags`
	for in, want := range map[string]string{
		trace + "-" + parent + "-01": "01", trace + "-" + parent + "-03": "01",
		trace + "-" + parent + "-00": "00", trace + "-" + parent + "-02": "00",
		"": "$causeway_trace_root",
	} {
		if got := tracingMap(t, conf, flags, in); got != want {
			t.Errorf("parent %q: flags %q, want %q", in, got, want)
		}
	}
}

// TestTracingSamplers: each otel-sampler setting renders its root
// sampler.
func TestTracingSamplers(t *testing.T) {
	for _, tc := range []struct {
		sampler model.Sampler
		ratio   float64
		parent  bool
		want    string
	}{
		{model.SamplerAlwaysOn, 0.01, true, "map $causeway_trace $causeway_trace_root {\n        default \"01\";"},
		{model.SamplerAlwaysOff, 0.01, false, "map $causeway_trace $causeway_trace_root {\n        default \"00\";"},
		{model.SamplerRatio, 0, true, "map $causeway_trace $causeway_trace_root {\n        default \"00\";"},
		{model.SamplerRatio, 1, true, "map $causeway_trace $causeway_trace_root {\n        default \"01\";"},
		{model.SamplerRatio, 0.5, false, "\"~^[0-9a-f]{16}[0-7]\" \"01\";"},
	} {
		m, p := goldenCase(t, "tracing")
		m.Config.Tracing.Sampler, m.Config.Tracing.Ratio, m.Config.Tracing.ParentBased = tc.sampler, tc.ratio, tc.parent
		out, err := Render(m, p)
		if err != nil {
			t.Fatal(err)
		}
		conf := string(out.Files["nginx.conf"])
		if !strings.Contains(conf, tc.want) {
			t.Errorf("%s %v: no %q in\n%s", tc.sampler, tc.ratio, tc.want, conf)
		}
		if got := strings.Contains(conf, `"~[13579bdf]$" "01";`); got != tc.parent {
			t.Errorf("%s %v: parent-based %v, want %v", tc.sampler, tc.ratio, got, tc.parent)
		}
	}
}

// TestTracingOff: without tracing nothing of it is rendered, and the
// client's trace context goes on untouched.
func TestTracingOff(t *testing.T) {
	m, p := goldenCase(t, "lua-metrics")
	out, err := Render(m, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range out.Files.Names() {
		if f := string(out.Files[n]); strings.Contains(f, "causeway_trace") || strings.Contains(f, "traceparent") {
			t.Errorf("%s mentions tracing", n)
		}
	}
	if out.Spans != nil {
		t.Errorf("spans %v", out.Spans)
	}
}
