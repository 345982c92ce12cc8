package integration

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/causeway/causeway/test/harness"
)

// receiver is an OTLP trace receiver in the test process: the spans every
// export request brought, over gRPC or HTTP.
type receiver struct {
	collectortrace.UnimplementedTraceServiceServer
	Port int

	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
}

func (r *receiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.add(req)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (r *receiver) add(req *collectortrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				r.services = append(r.services, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
}

// startGRPCReceiver serves OTLP over gRPC on 127.0.0.1.
func startGRPCReceiver(t *testing.T) *receiver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{Port: l.Addr().(*net.TCPAddr).Port}
	s := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(s, r)
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return r
}

// startHTTPReceiver serves OTLP over HTTP (protobuf bodies, POST
// /v1/traces) on 127.0.0.1.
func startHTTPReceiver(t *testing.T) *receiver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{Port: l.Addr().(*net.TCPAddr).Port}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want a protobuf POST to /v1/traces", http.StatusNotFound)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			z, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = z
		}
		data, err := io.ReadAll(body)
		var msg collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(data, &msg)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(&msg)
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return r
}

// wait returns the spans once n have arrived, failing after 15 s.
func (r *receiver) wait(t *testing.T, n int) []*tracepb.Span {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r.mu.Lock()
		got := append([]*tracepb.Span(nil), r.spans...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spans arrived, want %d", len(got), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// count is the number of spans received so far.
func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.spans)
}

// traceBackend answers with the status its path names (/status/503) and
// reports the trace context and request ID it received in
// X-Seen-Traceparent, X-Seen-Tracestate and X-Seen-X-Request-Id ("none"
// for no header).
func traceBackend(t *testing.T, service string) *backend {
	return startHandlerBackend(t, service, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, h := range []string{"Traceparent", "Tracestate", "X-Request-Id"} {
			v := strings.Join(r.Header.Values(h), " | ")
			if v == "" {
				v = "none"
			}
			w.Header().Set("X-Seen-"+h, v)
		}
		status := http.StatusOK
		if code, ok := strings.CutPrefix(r.URL.Path, "/status/"); ok {
			status, _ = strconv.Atoi(code)
		}
		w.WriteHeader(status)
	}))
}

func attrMap(s *tracepb.Span) map[string]*commonpb.AnyValue {
	out := map[string]*commonpb.AnyValue{}
	for _, a := range s.GetAttributes() {
		out[a.GetKey()] = a.GetValue()
	}
	return out
}

// spanByTarget finds the span of the request for target.
func spanByTarget(t *testing.T, spans []*tracepb.Span, target string) *tracepb.Span {
	t.Helper()
	for _, s := range spans {
		if attrMap(s)["http.target"].GetStringValue() == target {
			return s
		}
	}
	t.Fatalf("no span for %s among %d", target, len(spans))
	return nil
}

// seenParent splits the traceparent the backend saw into its trace ID,
// parent ID and flags.
func seenParent(t *testing.T, res result) (trace, parent, flags string) {
	t.Helper()
	v := res.Header.Get("X-Seen-Traceparent")
	f := strings.Split(v, "-")
	if len(f) != 4 || f[0] != "00" || len(f[1]) != 32 || len(f[2]) != 16 || len(f[3]) != 2 {
		t.Fatalf("the backend saw traceparent %q", v)
	}
	return f[1], f[2], f[3]
}

// collectorConfig is the ConfigMap's data sending spans to rcv within a
// tenth of a second, with more keys and values.
func collectorConfig(rcv *receiver, kv ...string) map[string]string {
	out := map[string]string{"otlp-collector-host": "127.0.0.1", "otlp-collector-port": strconv.Itoa(rcv.Port), "otel-schedule-delay-millis": "100"}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

const (
	clientTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientParent = "00f067aa0ba902b7"
)

func tracingManifests(t *testing.T, app *backend, cm map[string]string) map[string]string {
	return map[string]string{"app.yaml": ingressClass + serviceYAML("default", "app", 80, app) +
		ingressYAML("default", "traced", "trace.test", "Prefix / app") +
		annotatedIngressYAML("distrust", "distrust.test", "app", "opentelemetry-trust-incoming-span", "false",
			"opentelemetry-operation-name", "HTTP $request_method $service_name $uri") +
		annotatedIngressYAML("untraced", "untraced.test", "app", "enable-opentelemetry", "false") +
		configMapYAML(cm)}
}

// TestTracingOverGRPC: nginx starts or continues the trace as the
// Ingress says, tells the backend its span is the parent, and the
// controller exports that span, with ingress-nginx's attributes and
// status, to an OTLP receiver over gRPC.
func TestTracingOverGRPC(t *testing.T) {
	t.Parallel()
	rcv := startGRPCReceiver(t)
	app := traceBackend(t, "app")
	c := startController(t, tracingManifests(t, app, collectorConfig(rcv, "enable-opentelemetry", "true", "otel-service-name", "edge-proxy")))
	send := func(host, path string, header map[string]string) result {
		t.Helper()
		return c.do(harness.Request{Method: "GET", Host: host, Path: path, Header: header, From: "127.0.0.1"})
	}
	incoming := map[string]string{"traceparent": "00-" + clientTrace + "-" + clientParent + "-01", "tracestate": "vendor=a1"}

	fresh := send("trace.test", "/fresh?q=1", map[string]string{"User-Agent": "tracing-test/1"})
	continued := send("trace.test", "/continued", incoming)
	distrusted := send("distrust.test", "/distrusted", incoming)
	failed := send("trace.test", "/status/503", nil)
	untraced := send("untraced.test", "/untraced", incoming)
	bare := send("untraced.test", "/bare", nil)
	unsampled := send("trace.test", "/unsampled", map[string]string{"traceparent": "00-" + clientTrace + "-" + clientParent + "-00"})
	invalid := send("trace.test", "/invalid", map[string]string{"traceparent": "00-" + strings.ToUpper(clientTrace) + "-" + clientParent + "-01", "tracestate": "vendor=a1"})

	// What the backends received.
	freshTrace, freshSpan, freshFlags := seenParent(t, fresh)
	if freshFlags != "01" || fresh.Header.Get("X-Seen-Tracestate") != "none" {
		t.Errorf("a new trace: flags %s, tracestate %q", freshFlags, fresh.Header.Get("X-Seen-Tracestate"))
	}
	// A new trace's ID is the X-Request-ID nginx generated.
	if got := fresh.Header.Get("X-Seen-X-Request-Id"); got != freshTrace {
		t.Errorf("a new trace %s, X-Request-ID %s", freshTrace, got)
	}
	contTrace, contSpan, contFlags := seenParent(t, continued)
	if contTrace != clientTrace || contSpan == clientParent || contFlags != "01" || continued.Header.Get("X-Seen-Tracestate") != "vendor=a1" {
		t.Errorf("a trusted traceparent: the backend saw %q and tracestate %q", continued.Header.Get("X-Seen-Traceparent"), continued.Header.Get("X-Seen-Tracestate"))
	}
	disTrace, disSpan, _ := seenParent(t, distrusted)
	if disTrace == clientTrace || distrusted.Header.Get("X-Seen-Tracestate") != "none" {
		t.Errorf("a distrusted traceparent: the backend saw %q and tracestate %q", distrusted.Header.Get("X-Seen-Traceparent"), distrusted.Header.Get("X-Seen-Tracestate"))
	}
	if failed.Status != 503 {
		t.Fatalf("/status/503: %d", failed.Status)
	}
	failTrace, failSpan, _ := seenParent(t, failed)
	if got := untraced.Header.Get("X-Seen-Traceparent"); got != incoming["traceparent"] || untraced.Header.Get("X-Seen-Tracestate") != "vendor=a1" {
		t.Errorf("an untraced Ingress passed on traceparent %q, tracestate %q; want the client's", got, untraced.Header.Get("X-Seen-Tracestate"))
	}
	if got := bare.Header.Get("X-Seen-Traceparent"); got != "none" {
		t.Errorf("an untraced Ingress added traceparent %q", got)
	}
	if tr, _, flags := seenParent(t, unsampled); tr != clientTrace || flags != "00" {
		t.Errorf("an unsampled parent: the backend saw %q", unsampled.Header.Get("X-Seen-Traceparent"))
	}
	if tr, _, _ := seenParent(t, invalid); tr == clientTrace || tr == strings.ToUpper(clientTrace) || invalid.Header.Get("X-Seen-Tracestate") != "none" {
		t.Errorf("an invalid traceparent was continued: %q", invalid.Header.Get("X-Seen-Traceparent"))
	}

	// What the receiver got: the sampled traced requests' spans only.
	spans := rcv.wait(t, 5)
	time.Sleep(2 * time.Second) // nothing else comes
	if n := rcv.count(); n != 5 {
		t.Errorf("%d spans, want 5 (fresh, continued, distrusted, failed, invalid)", n)
	}
	rcv.mu.Lock()
	for _, s := range rcv.services {
		if s != "edge-proxy" {
			t.Errorf("service.name %q", s)
		}
	}
	rcv.mu.Unlock()
	hexID := func(b []byte) string { return hex.EncodeToString(b) }
	for _, tc := range []struct {
		target, trace, span, parent, name string
		errored                           bool
	}{
		{"/fresh?q=1", freshTrace, freshSpan, "", "/", false},
		{"/continued", clientTrace, contSpan, clientParent, "/", false},
		{"/distrusted", disTrace, disSpan, "", "HTTP GET app /distrusted", false},
		{"/status/503", failTrace, failSpan, "", "/", true},
	} {
		s := spanByTarget(t, spans, tc.target)
		if hexID(s.GetTraceId()) != tc.trace || hexID(s.GetSpanId()) != tc.span || hexID(s.GetParentSpanId()) != tc.parent {
			t.Errorf("%s: trace %x span %x parent %x; want %s %s %q (what the backend saw)", tc.target, s.GetTraceId(), s.GetSpanId(), s.GetParentSpanId(), tc.trace, tc.span, tc.parent)
		}
		if s.GetName() != tc.name || s.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("%s: name %q kind %v", tc.target, s.GetName(), s.GetKind())
		}
		wantStatus := tracepb.Status_STATUS_CODE_OK
		if tc.errored {
			wantStatus = tracepb.Status_STATUS_CODE_ERROR
		}
		if s.GetStatus().GetCode() != wantStatus {
			t.Errorf("%s: status %v, want %v", tc.target, s.GetStatus().GetCode(), wantStatus)
		}
		if s.GetStartTimeUnixNano() == 0 || s.GetEndTimeUnixNano() < s.GetStartTimeUnixNano() ||
			time.Since(time.Unix(0, int64(s.GetEndTimeUnixNano()))) > time.Minute {
			t.Errorf("%s: times %d to %d", tc.target, s.GetStartTimeUnixNano(), s.GetEndTimeUnixNano())
		}
	}
	a := attrMap(spanByTarget(t, spans, "/fresh?q=1"))
	for k, want := range map[string]any{
		"http.method": "GET", "http.flavor": "1.1", "http.target": "/fresh?q=1", "http.server_name": "trace.test",
		"http.host": "trace.test", "http.user_agent": "tracing-test/1", "http.status_code": int64(200), "http.scheme": "http",
		"net.host.port": int64(c.HTTPPort), "net.peer.ip": "127.0.0.1",
		"causeway.namespace": "default", "causeway.ingress": "traced", "causeway.service": "app", "causeway.service_port": "80",
		"causeway.path": "/", "causeway.upstream_name": "default-app-80",
		"causeway.upstream_addr": net.JoinHostPort(app.IP, strconv.Itoa(app.Port)), "causeway.upstream_status": "200",
	} {
		v, ok := a[k]
		var got any
		switch {
		case !ok:
		case v.GetStringValue() != "":
			got = v.GetStringValue()
		default:
			got = v.GetIntValue()
		}
		if got != want {
			t.Errorf("attribute %s = %v, want %v", k, got, want)
		}
	}
	if p := a["net.peer.port"].GetIntValue(); p <= 0 {
		t.Errorf("net.peer.port %d", p)
	}
	if got := attrMap(spanByTarget(t, spans, "/status/503"))["http.status_code"].GetIntValue(); got != 503 {
		t.Errorf("the failed request's status code %d", got)
	}
	for _, m := range []string{"causeway_trace_log_lines_total", "causeway_trace_export_errors_total"} {
		t.Logf("%s = %v", m, c.Metric(m))
	}
	if got := c.Metric("causeway_trace_log_lines_total"); got != 5 {
		t.Errorf("causeway_trace_log_lines_total = %v, want 5", got)
	}
	eventually(t, 5*time.Second, func() error {
		if got := c.Metric("causeway_trace_exported_spans_total"); got != 5 {
			return fmt.Errorf("causeway_trace_exported_spans_total = %v, want 5", got)
		}
		return nil
	})
	if got := c.Metric("causeway_trace_dropped_spans_total"); got != 0 {
		t.Errorf("causeway_trace_dropped_spans_total = %v", got)
	}
}

// TestTracingOverHTTP: the same spans over OTLP/HTTP, with the ratio
// sampler, in the plain data plane: the backend's sampled flag is the
// decision, and exactly the sampled requests are exported.
func TestTracingOverHTTP(t *testing.T) {
	t.Parallel()
	rcv := startHTTPReceiver(t)
	app := traceBackend(t, "app")
	c := startController(t, tracingManifests(t, app, collectorConfig(rcv, "enable-opentelemetry", "true", "otlp-collector-protocol", "http/protobuf",
		"otel-sampler", "TraceIdRatioBased", "otel-sampler-ratio", "0.5")), "--dataplane", "plain")
	sampled := map[string]string{}
	const n = 40
	for i := range n {
		path := fmt.Sprintf("/r/%d", i)
		res := c.do(harness.Request{Method: "GET", Host: "trace.test", Path: path})
		tr, span, flags := seenParent(t, res)
		if got := res.Header.Get("X-Seen-X-Request-Id"); got != tr {
			t.Errorf("%s: a new trace %s, X-Request-ID %s", path, tr, got)
		}
		if flags == "01" {
			sampled[path] = tr + "-" + span
		}
	}
	// A trusted sampled parent wins over the ratio (parent-based).
	res := c.do(harness.Request{Method: "GET", Host: "trace.test", Path: "/parent", Header: map[string]string{"traceparent": "00-" + clientTrace + "-" + clientParent + "-01"}})
	if _, _, flags := seenParent(t, res); flags != "01" {
		t.Errorf("a sampled parent's request is not sampled: %q", res.Header.Get("X-Seen-Traceparent"))
	}
	if len(sampled) == 0 || len(sampled) == n {
		t.Fatalf("%d of %d requests sampled at ratio 0.5", len(sampled), n)
	}
	spans := rcv.wait(t, len(sampled)+1)
	time.Sleep(2 * time.Second)
	if got := rcv.count(); got != len(sampled)+1 {
		t.Errorf("%d spans, want %d", got, len(sampled)+1)
	}
	for path, ids := range sampled {
		s := spanByTarget(t, spans, path)
		if got := hex.EncodeToString(s.GetTraceId()) + "-" + hex.EncodeToString(s.GetSpanId()); got != ids {
			t.Errorf("%s: span %s, the backend saw %s", path, got, ids)
		}
	}
	if s := spanByTarget(t, spans, "/parent"); !bytes.Equal(s.GetParentSpanId(), mustHex(t, clientParent)) {
		t.Errorf("/parent: parent %x", s.GetParentSpanId())
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTracingOff: without enable-opentelemetry nothing is exported,
// even with a collector named, and the backends see exactly the trace
// context the client sent.
func TestTracingOff(t *testing.T) {
	t.Parallel()
	rcv := startGRPCReceiver(t)
	app := traceBackend(t, "app")
	c := startController(t, map[string]string{"app.yaml": ingressClass + serviceYAML("default", "app", 80, app) +
		ingressYAML("default", "plain", "plain.test", "Prefix / app") +
		configMapYAML(collectorConfig(rcv))})
	if res := c.do(harness.Request{Method: "GET", Host: "plain.test", Path: "/"}); res.Header.Get("X-Seen-Traceparent") != "none" {
		t.Errorf("traceparent %q added", res.Header.Get("X-Seen-Traceparent"))
	}
	in := "00-" + clientTrace + "-" + clientParent + "-01"
	res := c.do(harness.Request{Method: "GET", Host: "plain.test", Path: "/", Header: map[string]string{"traceparent": in, "tracestate": "vendor=a1"}})
	if res.Header.Get("X-Seen-Traceparent") != in || res.Header.Get("X-Seen-Tracestate") != "vendor=a1" {
		t.Errorf("the backend saw %q, %q; want the client's", res.Header.Get("X-Seen-Traceparent"), res.Header.Get("X-Seen-Tracestate"))
	}
	time.Sleep(2500 * time.Millisecond)
	if n := rcv.count(); n != 0 {
		t.Errorf("%d spans exported with tracing off", n)
	}
	if got := c.Metric("causeway_trace_log_lines_total"); got != 0 {
		t.Errorf("causeway_trace_log_lines_total = %v", got)
	}
}

// TestTracingIncomingTraceparents: a trusting location continues exactly
// the traceparents W3C Trace Context calls valid, and follows their
// sampled flag (parent-based); real nginx runs the maps' regexes, whose
// lookaheads Go's regexp cannot.
func TestTracingIncomingTraceparents(t *testing.T) {
	t.Parallel()
	rcv := startGRPCReceiver(t)
	app := traceBackend(t, "app")
	c := startController(t, tracingManifests(t, app, collectorConfig(rcv, "enable-opentelemetry", "true")))
	const tr, parent = clientTrace, clientParent
	for _, tc := range []struct {
		name, header string
		continued    bool
		flags        string
	}{
		{"version 00, sampled", "00-" + tr + "-" + parent + "-01", true, "01"},
		{"version 00, not sampled", "00-" + tr + "-" + parent + "-00", true, "00"},
		{"other flags, sampled", "00-" + tr + "-" + parent + "-03", true, "01"},
		{"other flags, not sampled", "00-" + tr + "-" + parent + "-fe", true, "00"},
		{"a later version with more", "01-" + tr + "-" + parent + "-01-what-comes", true, "01"},
		{"a later version alone", "cc-" + tr + "-" + parent + "-01", true, "01"},
		{"version 00 with more", "00-" + tr + "-" + parent + "-01-more", false, "01"},
		{"version ff", "ff-" + tr + "-" + parent + "-01", false, "01"},
		{"all-zero trace", "00-" + strings.Repeat("0", 32) + "-" + parent + "-01", false, "01"},
		{"all-zero parent", "00-" + tr + "-" + strings.Repeat("0", 16) + "-01", false, "01"},
		{"upper case", "00-" + strings.ToUpper(tr) + "-" + parent + "-01", false, "01"},
		{"short trace", "00-" + tr[1:] + "-" + parent + "-01", false, "01"},
		{"one-digit flags", "00-" + tr + "-" + parent + "-1", false, "01"},
		{"a span ID of the client's after a space", "00-" + tr + "-" + parent + "-00 " + strings.Repeat("a", 32), false, "01"},
		{"two in one header", "00-" + tr + "-" + parent + "-01,00-" + tr + "-" + parent + "-01", false, "01"},
	} {
		res := c.do(harness.Request{Method: "GET", Host: "trace.test", Path: "/in", Header: map[string]string{"traceparent": tc.header, "tracestate": "k=v"}})
		gotTrace, span, flags := seenParent(t, res)
		if continued := gotTrace == tr; continued != tc.continued || flags != tc.flags {
			t.Errorf("%s: the backend saw %q; want continued %v, flags %s", tc.name, res.Header.Get("X-Seen-Traceparent"), tc.continued, tc.flags)
		}
		if span == parent || span == strings.Repeat("a", 16) {
			t.Errorf("%s: span %s is the client's", tc.name, span)
		}
		wantState := "none"
		if tc.continued {
			wantState = "k=v"
		}
		if got := res.Header.Get("X-Seen-Tracestate"); got != wantState {
			t.Errorf("%s: tracestate %q, want %q", tc.name, got, wantState)
		}
	}
	// The distrusting Ingress starts a new trace from a valid one.
	res := c.do(harness.Request{Method: "GET", Host: "distrust.test", Path: "/in", Header: map[string]string{"traceparent": "00-" + tr + "-" + parent + "-01"}})
	if gotTrace, _, _ := seenParent(t, res); gotTrace == tr {
		t.Errorf("a distrusting Ingress continued %q", res.Header.Get("X-Seen-Traceparent"))
	}
}

// TestTracingSubrequests: the external authentication service and a
// mirror receive the request's traceparent (the subrequests share its
// variables), so they appear as children of nginx's span too.
func TestTracingSubrequests(t *testing.T) {
	t.Parallel()
	rcv := startGRPCReceiver(t)
	app := traceBackend(t, "app")
	var mu sync.Mutex
	seen := map[string]string{}
	record := func(who string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[who] = r.Header.Get("Traceparent")
			mu.Unlock()
		})
	}
	auth, mirror := startHandlerBackend(t, "auth", record("auth")), startHandlerBackend(t, "mirror", record("mirror"))
	c := startController(t, map[string]string{"app.yaml": ingressClass + serviceYAML("default", "app", 80, app) +
		annotatedIngressYAML("authed", "authed.test", "app", "auth-url", "http://"+net.JoinHostPort(auth.IP, strconv.Itoa(auth.Port))+"/check",
			"mirror-target", "http://"+net.JoinHostPort(mirror.IP, strconv.Itoa(mirror.Port))+"/copy") +
		configMapYAML(collectorConfig(rcv, "enable-opentelemetry", "true"))})
	res := c.do(harness.Request{Method: "GET", Host: "authed.test", Path: "/"})
	if res.Status != 200 {
		t.Fatalf("status %d", res.Status)
	}
	want := res.Header.Get("X-Seen-Traceparent")
	seenParent(t, res)
	eventually(t, 5*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		for _, who := range []string{"auth", "mirror"} {
			if seen[who] != want {
				return fmt.Errorf("%s saw traceparent %q, the backend %q", who, seen[who], want)
			}
		}
		return nil
	})
	if spans := rcv.wait(t, 1); len(spans) != 1 {
		t.Errorf("%d spans for one request", len(spans))
	}
}
