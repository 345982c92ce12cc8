package model

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// OpenTelemetry tracing: ingress-nginx's enable-opentelemetry and its
// companions. nginx starts or continues a W3C trace context per request
// and logs the span's fields; the controller exports the spans over OTLP
// (docs/tracing.md).

// Tracing is the ConfigMap's tracing settings.
type Tracing struct {
	// Enabled traces every HTTP location (enable-opentelemetry); an
	// Ingress's annotation overrides it for its paths.
	Enabled bool
	// TrustIncoming continues a valid incoming traceparent instead of
	// starting a new trace (opentelemetry-trust-incoming-span).
	TrustIncoming bool
	// OperationName names the spans (opentelemetry-operation-name); nil
	// names each after its location's path.
	OperationName OperationName

	// Collector is where spans go (otlp-collector-host, -port and
	// Causeway's otlp-collector-protocol); a zero Host exports none.
	Collector Collector
	// ServiceName is the spans' service.name (otel-service-name).
	ServiceName string
	// MaxQueueSize, MaxExportBatchSize and ScheduleDelay are the batch
	// processor's (otel-max-queuesize, otel-max-export-batch-size,
	// otel-schedule-delay-millis).
	MaxQueueSize, MaxExportBatchSize int
	ScheduleDelay                    time.Duration

	// Sampler decides, in nginx, which new traces are recorded
	// (otel-sampler); Ratio is TraceIdRatioBased's (otel-sampler-ratio);
	// ParentBased follows a trusted parent's sampled flag instead
	// (otel-sampler-parent-based).
	Sampler     Sampler
	Ratio       float64
	ParentBased bool
}

// Collector is an OTLP endpoint, spoken to in plain text.
type Collector struct {
	// Host is a DNS name or an IP address (ParseCollectorHost).
	Host string
	// Port is 0 for the protocol's (OTLPProtocol.DefaultPort).
	Port     int
	Protocol OTLPProtocol
}

// Address is host:port, with an IPv6 address in brackets.
func (c Collector) Address() string {
	port := c.Port
	if port == 0 {
		port = c.Protocol.DefaultPort()
	}
	return netJoin(c.Host, port)
}

func netJoin(host string, port int) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// OTLPProtocol is how spans are sent to the collector.
type OTLPProtocol string

const (
	// OTLPGRPC is OTLP over gRPC, ingress-nginx's only protocol.
	OTLPGRPC OTLPProtocol = "grpc"
	// OTLPHTTP is OTLP over HTTP with protobuf bodies, to /v1/traces.
	OTLPHTTP OTLPProtocol = "http/protobuf"
)

// DefaultPort is the OTLP port of the protocol: 4317 for gRPC, 4318 for
// HTTP.
func (p OTLPProtocol) DefaultPort() int {
	if p == OTLPHTTP {
		return 4318
	}
	return 4317
}

// ParseOTLPProtocol reads otlp-collector-protocol.
func ParseOTLPProtocol(s string) (OTLPProtocol, error) {
	switch p := OTLPProtocol(strings.ToLower(s)); p {
	case OTLPGRPC, OTLPHTTP:
		return p, nil
	}
	return "", errors.New("want grpc or http/protobuf")
}

// Sampler is otel-sampler.
type Sampler string

const (
	SamplerAlwaysOn  Sampler = "AlwaysOn"
	SamplerAlwaysOff Sampler = "AlwaysOff"
	SamplerRatio     Sampler = "TraceIdRatioBased"
)

// ParseSampler reads otel-sampler: ingress-nginx's names, in any case.
func ParseSampler(s string) (Sampler, error) {
	for _, v := range []Sampler{SamplerAlwaysOn, SamplerAlwaysOff, SamplerRatio} {
		if asciiEqualFold(s, string(v)) {
			return v, nil
		}
	}
	return "", errors.New("want AlwaysOn, AlwaysOff or TraceIdRatioBased")
}

// ParseSamplerRatio reads otel-sampler-ratio: a number from 0 to 1.
func ParseSamplerRatio(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
		return 0, errors.New("want a number from 0 to 1")
	}
	return f, nil
}

// ParseCollectorHost reads otlp-collector-host: a DNS name or an IP
// address, without a scheme, port or path.
func ParseCollectorHost(s string) (string, error) {
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		if a.Zone() != "" {
			return "", errors.New("want an IP address without a zone")
		}
		return a.String(), nil
	}
	if strings.Contains(s, "://") {
		return "", errors.New("want a host name or IP address, without a scheme (spans are sent in plain text)")
	}
	if strings.HasPrefix(s, "*.") {
		return "", errors.New("want a host name, not a wildcard")
	}
	if err := ValidateHost(strings.ToLower(s)); err != nil {
		return "", err
	}
	return strings.ToLower(s), nil
}

// maxServiceName bounds otel-service-name.
const maxServiceName = 255

// ParseServiceName reads otel-service-name: 1 to 255 printable ASCII
// bytes.
func ParseServiceName(s string) (string, error) {
	if s == "" || len(s) > maxServiceName {
		return "", fmt.Errorf("want 1 to %d bytes", maxServiceName)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] >= 0x7f {
			return "", fmt.Errorf("must not contain %s", describeByte(s[i]))
		}
	}
	return s, nil
}

// DefaultTracing is what an absent key means: ingress-nginx's defaults.
func DefaultTracing() Tracing {
	return Tracing{
		TrustIncoming: true,
		Collector:     Collector{Protocol: OTLPGRPC},
		ServiceName:   "nginx",
		MaxQueueSize:  2048, MaxExportBatchSize: 512, ScheduleDelay: 5 * time.Second,
		Sampler: SamplerAlwaysOn, Ratio: 0.01, ParentBased: true,
	}
}

// TracingPolicy is an Ingress's tracing annotations; nil fields keep the
// ConfigMap's.
type TracingPolicy struct {
	// Enabled is enable-opentelemetry.
	Enabled *bool
	// TrustIncoming is opentelemetry-trust-incoming-span.
	TrustIncoming *bool
	// OperationName is opentelemetry-operation-name.
	OperationName OperationName
}

// LocationTracing is how one location traces.
type LocationTracing struct {
	On, Trust bool
	// OperationName is nil for the location's path.
	OperationName OperationName
}

// For is what a location with policy p (nil for none) does.
func (t *Tracing) For(p *TracingPolicy) LocationTracing {
	out := LocationTracing{On: t.Enabled, Trust: t.TrustIncoming, OperationName: t.OperationName}
	if p == nil {
		return out
	}
	if p.Enabled != nil {
		out.On = *p.Enabled
	}
	if p.TrustIncoming != nil {
		out.Trust = *p.TrustIncoming
	}
	if p.OperationName != nil {
		out.OperationName = p.OperationName
	}
	return out
}

// OperationVariables are the variables a span name may use: each is
// filled by the controller from what nginx logged for the request or
// from the location, never evaluated by nginx.
var OperationVariables = map[string]bool{
	"request_method": true, "uri": true, "request_uri": true, "host": true, "scheme": true,
	"server_name": true, "server_port": true, "server_protocol": true, "status": true,
	"namespace": true, "ingress_name": true, "service_name": true, "service_port": true,
	"location_path": true, "proxy_upstream_name": true,
}

// maxOperationName bounds opentelemetry-operation-name.
const maxOperationName = 256

// OperationPart is a run of literal text or one variable.
type OperationPart struct {
	// Literal is printable ASCII other than "$".
	Literal string
	// Variable is a name from OperationVariables, without the "$".
	Variable string
}

// OperationName is a parsed span name.
type OperationName []OperationPart

// ParseOperationName reads opentelemetry-operation-name: printable ASCII
// text with variables of OperationVariables, written $name or ${name};
// "HTTP $request_method $service_name $uri" for one. At most 256 bytes.
func ParseOperationName(s string) (OperationName, error) {
	if s == "" || len(s) > maxOperationName {
		return nil, fmt.Errorf("want 1 to %d bytes", maxOperationName)
	}
	var out OperationName
	lit := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '$':
			if i > lit {
				out = append(out, OperationPart{Literal: s[lit:i]})
			}
			j, braced := i+1, false
			if j < len(s) && s[j] == '{' {
				j, braced = j+1, true
			}
			start := j
			for j < len(s) && isVarByte(s[j]) {
				j++
			}
			name := s[start:j]
			if braced {
				if j >= len(s) || s[j] != '}' {
					return nil, errors.New(`"${" without a closing "}"`)
				}
				j++
			}
			if name == "" {
				return nil, errors.New(`a "$" that starts no variable`)
			}
			if !OperationVariables[name] {
				return nil, fmt.Errorf("variable $%s is not one a span name may use", Truncate(name))
			}
			out = append(out, OperationPart{Variable: name})
			i, lit = j, j
		case c < ' ' || c >= 0x7f:
			return nil, fmt.Errorf("must not contain %s", describeByte(c))
		default:
			i++
		}
	}
	if lit < len(s) {
		out = append(out, OperationPart{Literal: s[lit:]})
	}
	return out, nil
}

// String is the name as written, with every variable as ${name}.
func (o OperationName) String() string {
	var b strings.Builder
	for _, p := range o {
		if p.Variable != "" {
			b.WriteString("${" + p.Variable + "}")
		} else {
			b.WriteString(p.Literal)
		}
	}
	return b.String()
}

// Expand fills the variables with value.
func (o OperationName) Expand(value func(name string) string) string {
	var b strings.Builder
	for _, p := range o {
		if p.Variable != "" {
			b.WriteString(value(p.Variable))
		} else {
			b.WriteString(p.Literal)
		}
	}
	return b.String()
}
