package render

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
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
		re := regexp.MustCompile("^[0-9a-f]{16}" + ratioTail(bound))
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

// TestTracingTrust: the keys of the fewer kind, trusting or not, are
// listed; the others take the default.
func TestTracingTrust(t *testing.T) {
	out, _ := renderTracing(t)
	conf := string(out.Files["nginx.conf"])
	block := conf[strings.Index(conf, "map $causeway_trace $causeway_trace_continued {"):]
	block = block[:strings.Index(block, "\n    }")]
	// Every Ingress trusts but edge.
	if !strings.Contains(block, "default $causeway_trace_incoming;") || strings.Count(block, `" "";`) != 1 || !strings.Contains(block, `"ud`) {
		t.Errorf("trust map:\n%s", block)
	}
	m, p := goldenCase(t, "lua-tracing-metrics")
	m.Config.Tracing.TrustIncoming = false
	out, err := Render(m, p)
	if err != nil {
		t.Fatal(err)
	}
	conf = string(out.Files["nginx.conf"])
	block = conf[strings.Index(conf, "map $causeway_trace $causeway_trace_continued {"):]
	block = block[:strings.Index(block, "\n    }")]
	if !strings.Contains(block, `default "";`) || strings.Contains(block, `"td`) || strings.Contains(block, `"ts`) {
		t.Errorf("trust map with the ConfigMap distrusting:\n%s", block)
	}
}

// TestTracingSamplers: each otel-sampler setting renders its decision: a
// new trace's flag or pattern on the random bytes, a continued one's
// patterns on the incoming traceparent.
func TestTracingSamplers(t *testing.T) {
	type row struct{ fragment, flags string }
	for _, tc := range []struct {
		sampler          model.Sampler
		ratio            float64
		parent           bool
		newFlag, pattern string
		childs           []row
	}{
		{model.SamplerAlwaysOn, 0.01, true, "1", "", []row{{"-[0-9a-f][13579bdf]", "01"}, {"-[0-9a-f]{2}", "00"}}},
		{model.SamplerAlwaysOn, 0.01, false, "1", "", []row{{"-[0-9a-f]{2}", "01"}}},
		{model.SamplerAlwaysOff, 0.01, false, "0", "", []row{{"-[0-9a-f]{2}", "00"}}},
		{model.SamplerRatio, 0, true, "0", "", []row{{"-[0-9a-f][13579bdf]", "01"}, {"-[0-9a-f]{2}", "00"}}},
		{model.SamplerRatio, 1, false, "1", "", []row{{"-[0-9a-f]{2}", "01"}}},
		{model.SamplerRatio, 0.5, false, "$causeway_trace_new_flag", `"~^[0-9a-f]{16}[0-7]"`,
			[]row{{"(?=[0-9a-f]{16}[0-7])([0-9a-f]{32})", "01"}, {"-(?!0{32}-)([0-9a-f]{32})", "00"}}},
	} {
		m, p := goldenCase(t, "tracing")
		m.Config.Tracing.Sampler, m.Config.Tracing.Ratio, m.Config.Tracing.ParentBased = tc.sampler, tc.ratio, tc.parent
		main := mainView{Config: m.Config, tracing: true}
		v, err := main.Tracing()
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s %v parent-based %v", tc.sampler, tc.ratio, tc.parent)
		if v.NewFlag != tc.newFlag || v.RatioPattern != tc.pattern || len(v.Child) != 2*len(tc.childs) {
			t.Errorf("%s: new %q %s, child %v", name, v.NewFlag, v.RatioPattern, v.Child)
			continue
		}
		for i, want := range tc.childs {
			for _, got := range []contextPattern{v.Child[i], v.Child[len(tc.childs)+i]} { // version 00, then later ones
				if !strings.Contains(got.Pattern, want.fragment) || got.Flags != want.flags {
					t.Errorf("%s: child row %v, want %v", name, got, want)
				}
			}
		}
		if _, err := Render(m, p); err != nil {
			t.Errorf("%s: %v", name, err)
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
