package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/spanlog"
)

// OpenTelemetry tracing without an nginx module and without Lua. A traced
// location sets $causeway_trace (spanlog.Variable) to its span key;
// nginx.conf's maps then give the request its W3C trace context:
//
//   - the trace ID is a trusting location's valid incoming traceparent's,
//     else 16 random bytes: the X-Request-ID nginx generated where the
//     client sent none and the Lua data plane draws them in batches
//     (requestid.go: about 5,000 instructions a request less than a call
//     to OpenSSL), else $request_id (OpenSSL's, once per request);
//   - the span ID is the first 8 of those bytes: for a new trace they are
//     also the first half of its trace ID, which no tracer reads
//     anything from; span IDs stay unique per request;
//   - the sampled flag is decided here (ratioPattern reads the trace ID
//     as OpenTelemetry's Go SDK does), so what the backend receives in
//     traceparent is the decision, and only sampled requests are logged.
//
// The backend receives traceparent naming nginx's span as its parent,
// and the incoming tracestate where the incoming traceparent was used.
// Each sampled request writes a line to the span log (spanlog.Fields),
// which the controller reads and exports (package tracing). Where no
// location is traced, nothing of this is rendered.

// spanLogFormat is the span log's log_format name and spanLogBuffer its
// buffer, as the metrics log's.
const (
	spanLogFormat = "causeway_trace"
	spanLogBuffer = "buffer=64k flush=1s if=$causeway_trace_sampled"
)

// tracingInUse reports whether any location is traced: the ConfigMap's
// enable-opentelemetry, or an Ingress's.
func tracingInUse(m *model.Model) bool {
	if m.Config.Tracing.Enabled {
		return true
	}
	for _, srv := range m.Servers {
		for _, l := range srv.Locations {
			if p := l.Policy; p != nil && p.Tracing != nil && p.Tracing.Enabled != nil && *p.Tracing.Enabled {
				return true
			}
		}
	}
	return false
}

// tracingView feeds nginx.conf's tracing maps.
type tracingView struct {
	// LogFormat is the span log's log_format line.
	LogFormat string
	// ParentBased follows a trusted parent's sampled flag.
	ParentBased bool
	// Sampled is the root sampler's flag when it is constant ("01" or
	// "00"); otherwise RatioPattern is the quoted regex of the trace IDs
	// it samples.
	Sampled, RatioPattern string
	// LuaRandom takes the random bytes from the X-Request-ID the servers
	// generate with Lua, where the client sent none (requestid.go).
	LuaRandom bool
}

// Tracing is nil when no location is traced.
func (v *mainView) Tracing() (*tracingView, error) {
	if !v.tracing {
		return nil, nil
	}
	t := v.Config.Tracing
	out := &tracingView{ParentBased: t.ParentBased, LuaRandom: v.LuaRequestID()}
	fields := make([]string, len(spanlog.Fields))
	for i, f := range spanlog.Fields {
		fields[i] = "$" + f
	}
	out.LogFormat = "log_format " + spanLogFormat + " escape=json '" + strings.Join(fields, `\t`) + "';"
	switch {
	case t.Sampler == model.SamplerAlwaysOn, t.Sampler == model.SamplerRatio && t.Ratio >= 1:
		out.Sampled = `"01"`
	case t.Sampler == model.SamplerAlwaysOff, ratioBound(t.Ratio) == 0:
		out.Sampled = `"00"`
	default:
		q, err := Quote("~" + ratioPattern(ratioBound(t.Ratio)))
		if err != nil {
			return nil, err
		}
		out.RatioPattern = q
	}
	return out, nil
}

// ratioBound is what the last 16 hex digits of a trace ID, as a number,
// must be below for OpenTelemetry's TraceIDRatioBased(ratio) to sample it
// (0 <= ratio < 1; 0 samples nothing): the Go SDK samples when the ID's last 8 bytes, as a
// big-endian number shifted right by one, are below ratio×2^63, that is
// when they are below twice that.
func ratioBound(ratio float64) uint64 {
	if ratio <= 0 || ratio >= 1 {
		return 0
	}
	return uint64(ratio*(1<<63)) * 2
}

// ratioPattern is a regex matching the 32 lower-case hex digits of the
// trace IDs whose last 16 digits, as a number, are below bound (not 0):
// it tests them digit by digit.
func ratioPattern(bound uint64) string {
	digits := fmt.Sprintf("%016x", bound)
	// Trailing zeros of the bound add no branch: equal digits there
	// never make the number smaller.
	last := len(strings.TrimRight(digits, "0")) - 1
	var b strings.Builder
	b.WriteString("^[0-9a-f]{16}")
	for i := 0; i <= last; i++ {
		d, _ := strconv.ParseUint(digits[i:i+1], 16, 8)
		below := hexBelow(int(d))
		switch {
		case i == last:
			b.WriteString(below) // d > 0: the last digit that is not 0
		case below == "":
			b.WriteString(digits[i : i+1])
		default:
			b.WriteString("(?:" + below + "|" + digits[i:i+1])
		}
	}
	for i := 0; i < last; i++ {
		if d := digits[i]; d != '0' {
			b.WriteString(")")
		}
	}
	return b.String()
}

// hexBelow is a character class of the hex digits below d, "" for none.
func hexBelow(d int) string {
	switch {
	case d == 0:
		return ""
	case d == 1:
		return "0"
	case d <= 10:
		return "[0-" + strconv.Itoa(d-1) + "]"
	case d == 11:
		return "[0-9a]"
	default:
		return "[0-9a-" + string(rune('a'+d-11)) + "]"
	}
}

// traceHeaders are the values a location's header block sends as
// traceparent and tracestate while some location is traced: the maps'
// (the client's own headers where the location is not traced), or none
// at all when the location passes no client header.
func (rc *renderCtx) traceHeaders(h *headersView) *headersView {
	if rc.tracing {
		h.TraceParent, h.TraceState = "$causeway_traceparent", "$causeway_tracestate"
	}
	return h
}

// planTracing makes a traced location set its span key and write the
// span log; a location that is not traced and passes no client header
// sends no client trace context either (the http level's headers would).
func (sp *serverPlan) planTracing(lv *locationView, l *model.Location) error {
	rc := sp.rc
	if !rc.tracing {
		return nil
	}
	var policy *model.TracingPolicy
	if l.Policy != nil {
		policy = l.Policy.Tracing
	}
	lt := rc.m.Config.Tracing.For(policy)
	if !lt.On {
		if pv := lv.Policy; pv != nil && pv.NoRequestHeaders {
			if pv.Headers == nil {
				pv.Headers = sp.clientHeaders(&headersView{Module: pv.Module, GRPC: pv.Module == "grpc", Custom: rc.setHeaders})
			}
			h := *pv.Headers
			h.TraceParent, h.TraceState = `""`, `""`
			pv.Headers = &h
		}
		return nil
	}
	own := l.Source == (model.ObjectRef{})
	labels := spanlog.Labels{Namespace: l.Source.Namespace, Ingress: l.Source.Name, Host: sp.srv.Host, Operation: lt.OperationName}
	if !own {
		labels.Path = l.Match.Path
	}
	if p := l.Action.Proxy; p != nil && !p.AnswersOnly() {
		if b := rc.backends[p.Backend]; b != nil {
			labels.Service, labels.Port = b.Service, b.Port
		} else if parts := strings.Split(p.Backend, "/"); len(parts) == 3 {
			labels.Service, labels.Port = parts[1], parts[2]
		}
		labels.Upstream = l.Source.Namespace + "-" + labels.Service + "-" + labels.Port
		if b := rc.backends[p.Backend]; b != nil {
			labels.Upstream = b.Namespace + "-" + b.Service + "-" + b.Port
		}
	}
	if own {
		labels.Upstream, labels.Service, labels.Port = defaultUpstreamName, "", ""
	}
	key := spanlog.Key(labels, lt.Trust)
	q, err := Quote(key)
	if err != nil {
		return err
	}
	lv.LogVars = append(lv.LogVars, logVar{Name: spanlog.Variable, Value: q})
	rc.withSpanLog(lv)
	if rc.tracePlanned == nil {
		rc.tracePlanned = make(map[string]spanlog.Labels, 2*len(rc.m.Servers))
		rc.spans = make(map[string]spanlog.Labels, 2*len(rc.m.Servers))
	}
	rc.tracePlanned[key] = labels
	return nil
}

// withSpanLog adds the span log to a location's access_log directives,
// which replace the http level's, so the access log is repeated unless
// the location turns it off.
func (rc *renderCtx) withSpanLog(lv *locationView) {
	if len(lv.AccessLogs) == 0 {
		off := lv.AccessLogOff || lv.Policy != nil && lv.Policy.AccessLogOff
		if !off && rc.accessLog != "" {
			lv.AccessLogs = []string{rc.accessLog}
		}
	}
	lv.AccessLogs = append([]string{rc.spanLog}, lv.AccessLogs...)
}

// useSpans adds the span keys v's locations set to the render's spans:
// the keys planned for them, which a shared server replaces by its own
// (shareLogVars).
func (rc *renderCtx) useSpans(v *serverView) {
	if rc.tracePlanned == nil {
		return
	}
	for _, l := range v.Locations {
		for _, lv := range l.LogVars {
			if lv.Name != spanlog.Variable {
				continue
			}
			key := unquoteName(lv.Value)
			if labels, ok := rc.tracePlanned[key]; ok {
				rc.spans[key] = labels
			}
		}
	}
}

// shareSpanKey gives location i of shared server id one span key for
// every member, and maps each member's hosts to its own labels.
func (rc *renderCtx) shareSpanKey(id string, i int, members []*serverView, j int) (string, error) {
	first := unquoteName(members[0].Locations[i].LogVars[j].Value)
	key := spanlog.SharedKey(strings.HasPrefix(first, "t"), id, i)
	for _, m := range members {
		own := unquoteName(m.Locations[i].LogVars[j].Value)
		if own[0] != first[0] {
			return "", fmt.Errorf("span key %s of %s trusts differently from %s", own, m.ServerNames[0], first)
		}
		labels, ok := rc.tracePlanned[own]
		if !ok {
			return "", fmt.Errorf("span key %s of %s is unknown", own, m.ServerNames[0])
		}
		for _, name := range m.ServerNames {
			rc.spans[spanlog.SharedEntry(key, unquoteName(name))] = labels
		}
	}
	return Quote(key)
}

// countTracingVariables adds nginx.conf's tracing maps to the hash sizes.
func countTracingVariables(h *hashStats) {
	for _, n := range []string{spanlog.Variable, spanlog.ParentVariable, spanlog.RandomVariable, "causeway_trace_id", "causeway_span_id",
		"causeway_trace_flags", "causeway_trace_root", "causeway_trace_sampled", "causeway_trace_flag_sampled",
		"causeway_traceparent", "causeway_tracestate", "causeway_trace_state"} {
		h.mapped(n, 2)
	}
}
