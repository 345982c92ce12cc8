package tracing

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/spanlog"
)

const (
	requestID = "0af7651916cd43dd8448eb211c80319c"
	inTrace   = "4bf92f3577b34da6a3ce929d0e0e4736"
	inParent  = "00f067aa0ba902b7"
	// newContext is the traceparent nginx gave a new trace: the random
	// bytes, their first 8 the span.
	newContext = "00-" + requestID + "-" + "0af7651916cd43dd" + "-01"
	// childContext is nginx's span continuing inTrace.
	childContext = "00-" + inTrace + "-" + "0af7651916cd43dd" + "-01"
	incoming     = "00-" + inTrace + "-" + inParent + "-01"
)

// line is a span log line with these fields changed from a GET of
// /cart?x=1 answered 200 by shop/cart.
func line(change map[string]string) string {
	v := map[string]string{
		spanlog.Variable: "td0123456789abcdef", spanlog.ContextVariable: newContext, "http_traceparent": "",
		"msec": "1700000000.250", "request_time": "0.125", "status": "200", "request_method": "GET",
		"server_protocol": "HTTP/1.1", "scheme": "https", "server_port": "443", "remote_addr": "192.0.2.7",
		"remote_port": "51234", "upstream_addr": "10.0.0.5:8080", "upstream_status": "200",
		"host": "shop.example.com", "http_host": "shop.example.com", "uri": "/cart", "request_uri": "/cart?x=1",
		"http_user_agent": "curl/8.5.0",
	}
	for k, val := range change {
		v[k] = val
	}
	out := make([]string, len(spanlog.Fields))
	for i, f := range spanlog.Fields {
		out[i] = v[f]
	}
	return strings.Join(out, "\t") + "\n"
}

var cartLabels = spanlog.Labels{Namespace: "shop", Ingress: "cart", Service: "cart", Port: "80", Upstream: "shop-cart-80", Path: "/cart", Host: "shop.example.com"}

// newTestExporter is an Exporter whose spans land in mem, configured
// with spans and a collector.
func newTestExporter(t *testing.T, spans map[string]spanlog.Labels) (*Exporter, *tracetest.InMemoryExporter, *prometheus.Registry) {
	t.Helper()
	mem := tracetest.NewInMemoryExporter()
	reg := prometheus.NewRegistry()
	e, err := New(Options{Registry: reg, NewExporter: func(model.Collector) (sdktrace.SpanExporter, error) { return mem, nil }})
	if err != nil {
		t.Fatal(err)
	}
	cfg := model.DefaultTracing()
	cfg.Collector.Host = "127.0.0.1"
	cfg.ScheduleDelay = time.Millisecond
	e.Configure(cfg, spans, 0)
	t.Cleanup(func() { e.Close(context.Background()) })
	return e, mem, reg
}

// flush waits for the batch processor to hand the spans over.
func flush(t *testing.T, e *Exporter) {
	t.Helper()
	e.mu.Lock()
	p := e.provider
	e.mu.Unlock()
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func attrs(s tracetest.SpanStub) map[string]attribute.Value {
	out := map[string]attribute.Value{}
	for _, kv := range s.Attributes {
		out[string(kv.Key)] = kv.Value
	}
	return out
}

// TestSpanFromLine: a line becomes a server span with nginx's IDs, its
// times, ingress-nginx's attributes and status.
func TestSpanFromLine(t *testing.T) {
	e, mem, _ := newTestExporter(t, map[string]spanlog.Labels{"td0123456789abcdef": cartLabels})
	e.Count([]byte(line(nil)))
	flush(t, e)
	spans := mem.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if got := s.SpanContext.TraceID().String(); got != requestID {
		t.Errorf("trace %s, want the random bytes %s", got, requestID)
	}
	if got := s.SpanContext.SpanID().String(); got != requestID[:16] {
		t.Errorf("span %s, want the first half of the random bytes", got)
	}
	if s.Parent.IsValid() {
		t.Errorf("parent %v on a new trace", s.Parent)
	}
	if !s.SpanContext.IsSampled() || s.SpanKind != trace.SpanKindServer || s.Name != "/cart" {
		t.Errorf("span %q kind %v sampled %v", s.Name, s.SpanKind, s.SpanContext.IsSampled())
	}
	if want := time.Unix(1700000000, 250e6); !s.EndTime.Equal(want) || !s.StartTime.Equal(want.Add(-125*time.Millisecond)) {
		t.Errorf("times %v to %v", s.StartTime, s.EndTime)
	}
	if s.Status.Code != codes.Ok {
		t.Errorf("status %v", s.Status)
	}
	if s.InstrumentationScope.Name != "nginx" {
		t.Errorf("scope %q", s.InstrumentationScope.Name)
	}
	if v, ok := s.Resource.Set().Value("service.name"); !ok || v.AsString() != "nginx" {
		t.Errorf("service.name %v", v)
	}
	a := attrs(s)
	for k, want := range map[string]any{
		"http.method": "GET", "http.flavor": "1.1", "http.target": "/cart?x=1", "http.server_name": "shop.example.com",
		"http.host": "shop.example.com", "http.user_agent": "curl/8.5.0", "http.status_code": int64(200), "http.scheme": "https",
		"net.host.port": int64(443), "net.peer.ip": "192.0.2.7", "net.peer.port": int64(51234),
		"causeway.namespace": "shop", "causeway.ingress": "cart", "causeway.service": "cart", "causeway.service_port": "80",
		"causeway.path": "/cart", "causeway.upstream_name": "shop-cart-80", "causeway.upstream_addr": "10.0.0.5:8080",
		"causeway.upstream_status": "200",
	} {
		if got, ok := a[k]; !ok || got.AsInterface() != want {
			t.Errorf("attribute %s = %v, want %v", k, got.AsInterface(), want)
		}
	}
}

// TestSpanRows: parents, statuses, names and shared keys, a row each.
func TestSpanRows(t *testing.T) {
	named := cartLabels
	named.Operation, _ = model.ParseOperationName("HTTP $request_method $service_name $uri")
	labels := map[string]spanlog.Labels{
		"td0123456789abcdef": cartLabels,
		"ud0123456789abcdef": named,
		spanlog.SharedEntry("ts0000000000000001", "a.example.com"): {Namespace: "team", Ingress: "a", Path: "/", Host: "a.example.com"},
		spanlog.SharedEntry("ts0000000000000001", "b.example.com"): {Namespace: "team", Ingress: "b", Path: "/", Host: "b.example.com"},
		"td1111111111111111": {Upstream: "upstream-default-backend"},
	}
	for _, tc := range []struct {
		name   string
		change map[string]string
		check  func(t *testing.T, s tracetest.SpanStub)
	}{
		{"a trusted parent continues its trace", map[string]string{spanlog.ContextVariable: childContext, "http_traceparent": incoming}, func(t *testing.T, s tracetest.SpanStub) {
			if s.SpanContext.TraceID().String() != inTrace || s.Parent.SpanID().String() != inParent || !s.Parent.IsRemote() {
				t.Errorf("trace %s parent %s", s.SpanContext.TraceID(), s.Parent.SpanID())
			}
			if s.SpanContext.SpanID().String() != requestID[:16] {
				t.Errorf("span %s", s.SpanContext.SpanID())
			}
		}},
		{"an unsampled parent's span, sampled by nginx's sampler", map[string]string{spanlog.ContextVariable: childContext, "http_traceparent": "00-" + inTrace + "-" + inParent + "-00"}, func(t *testing.T, s tracetest.SpanStub) {
			if !s.SpanContext.IsSampled() || !s.Parent.IsValid() || s.Parent.IsSampled() {
				t.Errorf("span sampled %v, parent %v", s.SpanContext.IsSampled(), s.Parent)
			}
		}},
		{"a later version's traceparent", map[string]string{spanlog.ContextVariable: childContext, "http_traceparent": "01-" + inTrace + "-" + inParent + "-01-more"}, func(t *testing.T, s tracetest.SpanStub) {
			if s.Parent.SpanID().String() != inParent {
				t.Errorf("parent %v", s.Parent)
			}
		}},
		{"a distrusting location's new trace, whatever came", map[string]string{spanlog.Variable: "ud0123456789abcdef", "http_traceparent": incoming}, func(t *testing.T, s tracetest.SpanStub) {
			if s.Parent.IsValid() || s.SpanContext.TraceID().String() != requestID {
				t.Errorf("trace %s, parent %v", s.SpanContext.TraceID(), s.Parent)
			}
		}},
		{"a traceparent nginx did not continue (another trace)", map[string]string{"http_traceparent": incoming}, func(t *testing.T, s tracetest.SpanStub) {
			if s.Parent.IsValid() || s.SpanContext.TraceID().String() != requestID {
				t.Errorf("trace %s, parent %v", s.SpanContext.TraceID(), s.Parent)
			}
		}},
		{"an invalid traceparent", map[string]string{spanlog.ContextVariable: childContext, "http_traceparent": "00-" + inTrace + "-" + inParent + "-01-x"}, func(t *testing.T, s tracetest.SpanStub) {
			if s.Parent.IsValid() {
				t.Errorf("parent %v", s.Parent)
			}
		}},
		{"5xx is an error", map[string]string{"status": "502"}, func(t *testing.T, s tracetest.SpanStub) {
			if s.Status.Code != codes.Error {
				t.Errorf("status %v", s.Status)
			}
		}},
		{"4xx is not", map[string]string{"status": "404"}, func(t *testing.T, s tracetest.SpanStub) {
			if s.Status.Code != codes.Ok || attrs(s)["http.status_code"].AsInt64() != 404 {
				t.Errorf("status %v", s.Status)
			}
		}},
		{"opentelemetry-operation-name", map[string]string{spanlog.Variable: "ud0123456789abcdef", "request_method": "POST", "uri": "/cart/add"}, func(t *testing.T, s tracetest.SpanStub) {
			if s.Name != "HTTP POST cart /cart/add" {
				t.Errorf("name %q", s.Name)
			}
		}},
		{"a shared key, by host", map[string]string{spanlog.Variable: "ts0000000000000001", "host": "b.example.com"}, func(t *testing.T, s tracetest.SpanStub) {
			if a := attrs(s); a["causeway.ingress"].AsString() != "b" || a["http.server_name"].AsString() != "b.example.com" {
				t.Errorf("attributes %v", a)
			}
		}},
		{"the catch-all's own 404", map[string]string{spanlog.Variable: "td1111111111111111", "status": "404", "upstream_addr": "", "upstream_status": ""}, func(t *testing.T, s tracetest.SpanStub) {
			a := attrs(s)
			if s.Name != "/" || a["http.server_name"].AsString() != "_" || a["causeway.upstream_name"].AsString() != "upstream-default-backend" {
				t.Errorf("name %q, attributes %v", s.Name, a)
			}
			if _, ok := a["causeway.upstream_addr"]; ok {
				t.Error("an upstream address without an upstream")
			}
		}},
		{"HTTP/2", map[string]string{"server_protocol": "HTTP/2.0"}, func(t *testing.T, s tracetest.SpanStub) {
			if attrs(s)["http.flavor"].AsString() != "2.0" {
				t.Errorf("flavor %v", attrs(s)["http.flavor"])
			}
		}},
		{"escaped and invalid bytes", map[string]string{"http_user_agent": `a\tb\"c\u001Fd` + "\xff", "request_uri": `/p\\q`}, func(t *testing.T, s tracetest.SpanStub) {
			a := attrs(s)
			if a["http.user_agent"].AsString() != "a\tb\"c\x1fd\uFFFD" || a["http.target"].AsString() != `/p\q` {
				t.Errorf("user agent %q, target %q", a["http.user_agent"].AsString(), a["http.target"].AsString())
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, mem, _ := newTestExporter(t, labels)
			e.Count([]byte(line(tc.change)))
			flush(t, e)
			if spans := mem.GetSpans(); len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			} else {
				tc.check(t, spans[0])
			}
		})
	}
}

// TestDroppedLines: what cannot be a span is counted, never exported.
func TestDroppedLines(t *testing.T) {
	e, mem, reg := newTestExporter(t, map[string]spanlog.Labels{"td0123456789abcdef": cartLabels})
	bad := []string{
		"overlong line\n",
		line(map[string]string{spanlog.ContextVariable: "not-hex"}),
		line(map[string]string{spanlog.ContextVariable: strings.ToUpper(newContext)}),
		line(map[string]string{spanlog.ContextVariable: newContext + "-x"}),
		line(map[string]string{spanlog.ContextVariable: "01" + newContext[2:]}),
		line(map[string]string{spanlog.ContextVariable: "00-" + strings.Repeat("0", 32) + "-" + inParent + "-01"}),
		line(map[string]string{"msec": "1700000000"}),
		line(map[string]string{"status": "20"}),
		line(map[string]string{"request_time": "-0.001"}),
		line(map[string]string{"http_user_agent": `\x`}),
		strings.Replace(line(nil), "\t", "", 1),
	}
	unknown := []string{
		line(map[string]string{spanlog.Variable: "td9999999999999999"}),
		line(map[string]string{spanlog.Variable: "ts0000000000000001"}),
	}
	e.Count([]byte(strings.Join(append(bad, unknown...), "")))
	flush(t, e)
	if n := len(mem.GetSpans()); n != 0 {
		t.Errorf("%d spans exported", n)
	}
	for reason, want := range map[string]float64{"malformed": float64(len(bad)), "unknown": float64(len(unknown)), "no_collector": 0} {
		if got := testutil.ToFloat64(e.dropped.WithLabelValues(reason)); got != want {
			t.Errorf("dropped %s = %v, want %v", reason, got, want)
		}
	}
	if got := testutil.ToFloat64(e.lines); got != float64(len(bad)+len(unknown)) {
		t.Errorf("lines = %v", got)
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n == 0 {
		t.Errorf("registry: %d, %v", n, err)
	}
}

// TestConfigure: no collector exports nothing; keys outlive their
// configuration for the grace; a new collector starts a new exporter.
func TestConfigure(t *testing.T) {
	var made []model.Collector
	mem := tracetest.NewInMemoryExporter()
	e, err := New(Options{Grace: time.Minute, NewExporter: func(c model.Collector) (sdktrace.SpanExporter, error) {
		made = append(made, c)
		return mem, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	e.now = func() time.Time { return now }
	keys := map[string]spanlog.Labels{"td0123456789abcdef": cartLabels}
	cfg := model.DefaultTracing()
	e.Configure(cfg, keys, 0)
	e.Count([]byte(line(nil)))
	if got := testutil.ToFloat64(e.dropped.WithLabelValues("no_collector")); got != 1 || len(made) != 0 {
		t.Errorf("without a collector: dropped %v, exporters %v", got, made)
	}
	cfg.Collector.Host = "otel.example"
	e.Configure(cfg, keys, 0)
	e.Configure(cfg, nil, 3*time.Minute) // the key leaves the configuration
	if len(made) != 1 || made[0].Address() != "otel.example:4317" {
		t.Errorf("exporters %v", made)
	}
	if e.OldWorkers() != 3*time.Minute {
		t.Errorf("old workers %v", e.OldWorkers())
	}
	now = now.Add(3*time.Minute + 29*time.Second) // within old workers + slack
	e.Count([]byte(line(nil)))
	flush(t, e)
	if n := len(mem.GetSpans()); n != 1 || testutil.ToFloat64(e.exported) != 1 {
		t.Errorf("%d spans within the grace, %v counted exported", n, testutil.ToFloat64(e.exported))
	}
	now = now.Add(2 * time.Second)
	e.Configure(cfg, nil, 3*time.Minute)
	e.Count([]byte(line(nil)))
	if got := testutil.ToFloat64(e.dropped.WithLabelValues("unknown")); got != 1 {
		t.Errorf("after the grace: unknown %v", got)
	}
	cfg.Collector.Protocol = model.OTLPHTTP
	e.Configure(cfg, nil, 0)
	if len(made) != 2 || made[1].Address() != "otel.example:4318" {
		t.Errorf("exporters %v", made)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Error(err)
	}
}
