package tracing

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/causeway/causeway/internal/spanlog"
)

// The span of one request, as ingress-nginx's OpenTelemetry module
// (opentelemetry-cpp-contrib's otel_ngx_module) makes it: a server span
// named after the location (or opentelemetry-operation-name), with the
// module's attribute names, in error from status 500 on and ok below.

// ids are what nginx gave a request: its trace and span IDs, and the
// parent it continued, if any.
type ids struct {
	trace  trace.TraceID
	span   trace.SpanID
	parent trace.SpanContext // invalid when nginx started the trace
}

// spanTimes are a request's start and end, and its status.
type spanTimes struct {
	ids
	start, end time.Time
	status     int
}

// build checks what nginx logged for a request and reads its IDs, times
// and status. The parent is the incoming traceparent's where the
// location trusts it and nginx continued its trace.
func build(r spanlog.Record) (*spanTimes, error) {
	var s spanTimes
	own, err := parseTraceparent(r.Context)
	if err != nil || r.Context[:3] != "00-" || len(r.Context) != 55 {
		return nil, fmt.Errorf("%s %q: %v", spanlog.ContextVariable, r.Context, err)
	}
	s.trace, s.span = own.TraceID(), own.SpanID()
	if spanlog.Trusts(r.Key) && r.Incoming != "" {
		if in, err := parseTraceparent(r.Incoming); err == nil && in.TraceID() == s.trace {
			s.parent = in
		}
	}
	if s.end, err = parseMsec(r.Msec); err != nil {
		return nil, fmt.Errorf("msec: %w", err)
	}
	d, err := parseSeconds(r.RequestTime)
	if err != nil {
		return nil, fmt.Errorf("request_time: %w", err)
	}
	s.start = s.end.Add(-d)
	if len(r.Status) != 3 {
		return nil, fmt.Errorf("status %q", r.Status)
	}
	if s.status, err = strconv.Atoi(r.Status); err != nil || s.status < 0 {
		return nil, fmt.Errorf("status %q", r.Status)
	}
	return &s, nil
}

// parseTraceparent reads a W3C traceparent as Trace Context level 1
// says a receiver does, and as render's maps do: version 00 of exactly
// four fields, or a later one (not ff) whose four fields may be followed
// by "-" and more; lower-case hex; IDs not all zeros.
func parseTraceparent(s string) (trace.SpanContext, error) {
	if len(s) < 55 {
		return trace.SpanContext{}, errors.New("too short")
	}
	version, err := hexBytes(s[:2], 1)
	switch {
	case err != nil || version[0] == 0xff:
		return trace.SpanContext{}, errors.New("bad version")
	case version[0] == 0 && len(s) != 55, len(s) > 55 && s[55] != '-':
		return trace.SpanContext{}, errors.New("trailing data")
	case s[2] != '-' || s[35] != '-' || s[52] != '-':
		return trace.SpanContext{}, errors.New("want version-trace-parent-flags")
	}
	tid, err := hexBytes(s[3:35], 16)
	if err != nil {
		return trace.SpanContext{}, err
	}
	sid, err := hexBytes(s[36:52], 8)
	if err != nil {
		return trace.SpanContext{}, err
	}
	flags, err := hexBytes(s[53:55], 1)
	if err != nil {
		return trace.SpanContext{}, err
	}
	var cfg trace.SpanContextConfig
	copy(cfg.TraceID[:], tid)
	copy(cfg.SpanID[:], sid)
	cfg.TraceFlags = trace.TraceFlags(flags[0]) & trace.FlagsSampled
	cfg.Remote = true
	sc := trace.NewSpanContext(cfg)
	if !sc.IsValid() {
		return trace.SpanContext{}, errors.New("all-zero ID")
	}
	return sc, nil
}

// hexBytes reads exactly n bytes written as lower-case hex.
func hexBytes(s string, n int) ([]byte, error) {
	if len(s) != 2*n || strings.ToLower(s) != s {
		return nil, fmt.Errorf("want %d lower-case hex digits, got %q", 2*n, s)
	}
	return hex.DecodeString(s)
}

// parseMsec reads nginx's $msec: seconds with three decimals.
func parseMsec(s string) (time.Time, error) {
	ms, err := millis(s, 12)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(ms), nil
}

// parseSeconds reads nginx's $request_time: seconds with three decimals.
func parseSeconds(s string) (time.Duration, error) {
	ms, err := millis(s, 9)
	return time.Duration(ms) * time.Millisecond, err
}

// millis reads digits, a dot and three digits (up to maxWhole digits
// before the dot) as milliseconds.
func millis(s string, maxWhole int) (int64, error) {
	sec, ms, ok := strings.Cut(s, ".")
	if !ok || len(ms) != 3 || sec == "" || len(sec) > maxWhole {
		return 0, fmt.Errorf("%q", s)
	}
	var n int64
	for _, c := range sec + ms {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q", s)
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

// givenIDs makes the SDK use nginx's IDs, which record hands it through
// the context.
type givenIDs struct{}

type idsKey struct{}

func (givenIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	v, _ := ctx.Value(idsKey{}).(*ids)
	if v == nil {
		return trace.TraceID{}, trace.SpanID{}
	}
	return v.trace, v.span
}

func (givenIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	v, _ := ctx.Value(idsKey{}).(*ids)
	if v == nil {
		return trace.SpanID{}
	}
	return v.span
}

// record records the span with tracer.
func (s *spanTimes) record(tracer trace.Tracer, r spanlog.Record, l spanlog.Labels) {
	ctx := context.WithValue(context.Background(), idsKey{}, &s.ids)
	if s.parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, s.parent)
	}
	_, span := tracer.Start(ctx, operationName(r, l), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(s.start), trace.WithAttributes(attributes(r, l, s.status)...))
	if s.status >= 500 {
		span.SetStatus(codes.Error, "")
	} else {
		span.SetStatus(codes.Ok, "")
	}
	span.End(trace.WithTimestamp(s.end))
}

// serverName is the location's server_name as nginx's module reports it:
// the rule's host, "_" for the catch-all server.
func serverName(l spanlog.Labels) string {
	if l.Host == "" {
		return "_"
	}
	return l.Host
}

// operationName is opentelemetry-operation-name with its variables
// filled in, else the location's path.
func operationName(r spanlog.Record, l spanlog.Labels) string {
	if l.Operation == nil {
		if l.Path == "" {
			return "/"
		}
		return l.Path
	}
	return l.Operation.Expand(func(name string) string {
		switch name {
		case "request_method":
			return r.Method
		case "uri":
			return r.URI
		case "request_uri":
			return r.RequestURI
		case "host":
			return r.Host
		case "scheme":
			return r.Scheme
		case "server_name":
			return serverName(l)
		case "server_port":
			return r.ServerPort
		case "server_protocol":
			return r.Protocol
		case "status":
			return r.Status
		case "namespace":
			return l.Namespace
		case "ingress_name":
			return l.Ingress
		case "service_name":
			return l.Service
		case "service_port":
			return l.Port
		case "location_path":
			return l.Path
		case "proxy_upstream_name":
			return l.Upstream
		}
		return ""
	})
}

// attributes are the module's (http.*, net.*), then Causeway's own
// (causeway.*: the labels the metrics carry too, and the upstream).
func attributes(r spanlog.Record, l spanlog.Labels, status int) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, 20)
	out = append(out,
		attribute.String("http.method", r.Method),
		attribute.String("http.flavor", strings.TrimPrefix(r.Protocol, "HTTP/")),
		attribute.String("http.target", r.RequestURI),
		attribute.String("http.server_name", serverName(l)),
	)
	if r.HTTPHost != "" {
		out = append(out, attribute.String("http.host", r.HTTPHost))
	}
	if r.UA != "" {
		out = append(out, attribute.String("http.user_agent", r.UA))
	}
	out = append(out, attribute.Int("http.status_code", status), attribute.String("http.scheme", r.Scheme))
	if n, err := strconv.Atoi(r.ServerPort); err == nil {
		out = append(out, attribute.Int("net.host.port", n))
	}
	out = append(out, attribute.String("net.peer.ip", r.RemoteAddr))
	if n, err := strconv.Atoi(r.RemotePort); err == nil {
		out = append(out, attribute.Int("net.peer.port", n))
	}
	for _, kv := range [][2]string{
		{"causeway.namespace", l.Namespace}, {"causeway.ingress", l.Ingress}, {"causeway.service", l.Service},
		{"causeway.service_port", l.Port}, {"causeway.path", l.Path}, {"causeway.upstream_name", l.Upstream},
		{"causeway.upstream_addr", r.UpstreamAddr}, {"causeway.upstream_status", r.UpstreamStatus},
	} {
		if kv[1] != "" {
			out = append(out, attribute.String(kv[0], kv[1]))
		}
	}
	return out
}
