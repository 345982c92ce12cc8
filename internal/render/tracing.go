package render

import (
	"fmt"
	"slices"
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
//   - the sampled flag is decided here, by the regex that makes the
//     context (ratioTail reads the trace ID as OpenTelemetry's Go SDK
//     does), so what the backend receives in traceparent is the
//     decision, and only sampled requests are logged.
//
// Each regex costs nginx's PCRE interpreter tens of instructions per byte
// (nginx does not turn PCRE's JIT on), so a new trace runs one (that cuts
// the span ID from the random bytes), two with the ratio sampler; a
// continued one runs the one that checks the incoming traceparent and
// makes the context, and one that reads its sampled flag. A location's
// trust is a hash lookup of its key, and a request without a traceparent
// runs none on it.
//
// The backend receives traceparent naming nginx's span as its parent,
// and the incoming tracestate where the incoming traceparent was used.
// Each sampled request writes a line to the span log (spanlog.Fields):
// nginx's context and the incoming traceparent as it came, which the
// controller reads back the parent from where the key trusts (package
// tracing). Where no location is traced, nothing of this is rendered.

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
	// LogFormat is the span log's format: its fields, tab-separated.
	LogFormat string
	// LuaRandom takes the random bytes from the X-Request-ID the servers
	// generate with Lua, where the client sent none (requestid.go).
	LuaRandom bool
	// NewFlag is the root sampler's decision: "1" or "0" when it is
	// constant, else $causeway_trace_new_flag, which RatioPattern, the
	// quoted regex of the random bytes it samples, sets.
	NewFlag, RatioPattern string
	// Child are the patterns of a continued trace's context, on the
	// incoming traceparent, a space and the random bytes: the first that
	// matches gives the sampled flag.
	Child []contextPattern
	// TrustDefault is where a key not in TrustKeys takes its context
	// from: the incoming traceparent ($causeway_trace_incoming) or none
	// (""); TrustKeys are the quoted keys of the other kind, the fewer.
	TrustDefault string
	TrustKeys    []mapKey
}

// contextPattern is a quoted regex and the flags the context gets when it
// matches ("01" or "00").
type contextPattern struct{ Pattern, Flags string }

// mapKey is a quoted map key and its value.
type mapKey struct{ Key, Value string }

// The regexes of a traceparent (W3C Trace Context): version 00 of exactly
// four fields, or a later one (not ff) with more after a "-"; lower-case
// hex; IDs not all zeros. The capture is the trace ID. "\z" ends a
// string: Quote refuses "$".
const (
	traceparent00    = `00-(?!0{32}-)%s([0-9a-f]{32})-(?!0{16}-)[0-9a-f]{16}-%s`
	traceparentLater = `(?:0[1-9a-f]|[1-9a-e][0-9a-f]|f[0-9a-e])-(?!0{32}-)%s([0-9a-f]{32})-(?!0{16}-)[0-9a-f]{16}-%s(?:-[^ ]*)?`
	randomSpan       = ` ([0-9a-f]{16})[0-9a-f]{16}\z`
	flagsSampled     = `[0-9a-f][13579bdf]`
	flagsAny         = `[0-9a-f]{2}`
)

// Tracing is nil when no location is traced.
func (v *mainView) Tracing() (*tracingView, error) {
	if !v.tracing {
		return nil, nil
	}
	t := v.Config.Tracing
	out := &tracingView{LuaRandom: v.LuaRequestID()}
	fields := make([]string, len(spanlog.Fields))
	for i, f := range spanlog.Fields {
		fields[i] = "$" + f
	}
	out.LogFormat = "'" + strings.Join(fields, `\t`) + "'"
	// The root sampler, on a trace ID's last 16 hex digits: "" samples
	// all, "-" none, else the digits' test.
	root := "-"
	switch {
	case t.Sampler == model.SamplerAlwaysOn, t.Sampler == model.SamplerRatio && t.Ratio >= 1:
		root = ""
	case t.Sampler == model.SamplerRatio && ratioBound(t.Ratio) > 0:
		root = ratioTail(ratioBound(t.Ratio))
	}
	switch root {
	case "":
		out.NewFlag = "1"
	case "-":
		out.NewFlag = "0"
	default:
		q, err := Quote("~^[0-9a-f]{16}" + root)
		if err != nil {
			return nil, err
		}
		out.NewFlag, out.RatioPattern = "$causeway_trace_new_flag", q
	}
	var childRows [][3]string // pattern, flags, trace ID lookahead
	switch {
	case t.ParentBased:
		childRows = [][3]string{{flagsSampled, "01"}, {flagsAny, "00"}}
	case root == "":
		childRows = [][3]string{{flagsAny, "01"}}
	case root == "-":
		childRows = [][3]string{{flagsAny, "00"}}
	default:
		childRows = [][3]string{{flagsAny, "01", "(?=[0-9a-f]{16}" + root + ")"}, {flagsAny, "00"}}
	}
	for _, version := range []string{traceparent00, traceparentLater} {
		for _, r := range childRows {
			q, err := Quote("~^" + fmt.Sprintf(version, r[2], r[0]) + randomSpan)
			if err != nil {
				return nil, err
			}
			out.Child = append(out.Child, contextPattern{Pattern: q, Flags: r[1]})
		}
	}
	out.TrustDefault, out.TrustKeys = v.trustKeys()
	return out, nil
}

// trustKeys lists the rendered span keys of the kind there are fewer of,
// trusting or not, and the default for the others.
func (v *mainView) trustKeys() (string, []mapKey) {
	var trusting, distrusting []string
	seen := map[string]bool{}
	for entry := range v.spans {
		key, _, _ := strings.Cut(entry, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		if spanlog.Trusts(key) {
			trusting = append(trusting, key)
		} else {
			distrusting = append(distrusting, key)
		}
	}
	def, keys, value := "$causeway_trace_incoming", distrusting, `""`
	if len(trusting) < len(distrusting) {
		def, keys, value = `""`, trusting, "$causeway_trace_incoming"
	}
	slices.Sort(keys)
	out := make([]mapKey, len(keys))
	for i, k := range keys {
		out[i] = mapKey{Key: `"` + k + `"`, Value: value} // keys are hex: nothing to escape
	}
	return def, out
}

// ratioBound is what the last 16 hex digits of a trace ID, as a number,
// must be below for OpenTelemetry's TraceIDRatioBased(ratio) to sample it
// (0 <= ratio < 1; 0 samples nothing): the Go SDK samples when the ID's
// last 8 bytes, as a big-endian number shifted right by one, are below
// ratio×2^63, that is when they are below twice that.
func ratioBound(ratio float64) uint64 {
	if ratio <= 0 || ratio >= 1 {
		return 0
	}
	return uint64(ratio*(1<<63)) * 2
}

// ratioTail is a regex matching, at the start of a string, 16 hex
// digits whose value is below bound (not 0): it tests them digit by digit.
func ratioTail(bound uint64) string {
	digits := fmt.Sprintf("%016x", bound)
	// Trailing zeros of the bound add no branch: equal digits there
	// never make the number smaller.
	last := len(strings.TrimRight(digits, "0")) - 1
	var b strings.Builder
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
		h.TraceParent, h.TraceState = "$"+spanlog.ContextVariable, "$causeway_tracestate"
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
func (rc *renderCtx) shareSpanKey(id string, i int, members []*memberView, j int) (string, error) {
	first := unquoteName(members[0].Locations[i].LogVars[j].Value)
	key := spanlog.SharedKey(spanlog.Trusts(first), id, i)
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

// countTracingVariables adds nginx.conf's tracing maps to the hash sizes:
// at most one entry per span key in $causeway_trace_continued.
func countTracingVariables(h *hashStats, spans int) {
	for _, n := range []string{spanlog.Variable, spanlog.RandomVariable, spanlog.ContextVariable, "causeway_trace_new",
		"causeway_trace_new_flag", "causeway_trace_incoming", "causeway_trace_child", "causeway_tracestate",
		"causeway_trace_sampled", "causeway_trace_child_flag"} {
		h.mapped(n, 3)
	}
	h.mapped("causeway_trace_continued", spans+1)
}
