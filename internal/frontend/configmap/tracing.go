package configmap

import (
	"fmt"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// tracingKeys are ingress-nginx's OpenTelemetry keys (model.Tracing):
// nginx starts or continues the trace context and logs each span, and
// the controller exports the spans (docs/tracing.md).
var tracingKeys = keyParsers{
	"enable-opentelemetry":              boolKey(func(c *model.Config) *bool { return &c.Tracing.Enabled }),
	"opentelemetry-trust-incoming-span": boolKey(func(c *model.Config) *bool { return &c.Tracing.TrustIncoming }),
	"opentelemetry-operation-name": func(c *model.Config, v string) error {
		if v == "" {
			c.Tracing.OperationName = nil // ingress-nginx's default: none
			return nil
		}
		o, err := model.ParseOperationName(v)
		if err == nil {
			c.Tracing.OperationName = o
		}
		return err
	},
	"otlp-collector-host": func(c *model.Config, v string) error {
		if v == "" {
			c.Tracing.Collector.Host = ""
			return nil
		}
		h, err := model.ParseCollectorHost(v)
		if err == nil {
			c.Tracing.Collector.Host = h
		}
		return err
	},
	"otlp-collector-port": intKey(func(c *model.Config) *int { return &c.Tracing.Collector.Port }, 1, 65535),
	"otlp-collector-protocol": func(c *model.Config, v string) error {
		p, err := model.ParseOTLPProtocol(v)
		if err == nil {
			c.Tracing.Collector.Protocol = p
		}
		return err
	},
	"otel-service-name": func(c *model.Config, v string) error {
		s, err := model.ParseServiceName(v)
		if err == nil {
			c.Tracing.ServiceName = s
		}
		return err
	},
	"otel-max-queuesize":         intKey(func(c *model.Config) *int { return &c.Tracing.MaxQueueSize }, 1, maxTraceQueue),
	"otel-max-export-batch-size": intKey(func(c *model.Config) *int { return &c.Tracing.MaxExportBatchSize }, 1, maxTraceQueue),
	"otel-schedule-delay-millis": func(c *model.Config, v string) error {
		n, err := parseIntIn(v, 1, 3600000)
		if err == nil {
			c.Tracing.ScheduleDelay = time.Duration(n) * time.Millisecond
		}
		return err
	},
	"otel-sampler": func(c *model.Config, v string) error {
		s, err := model.ParseSampler(v)
		if err == nil {
			c.Tracing.Sampler = s
		}
		return err
	},
	"otel-sampler-ratio": func(c *model.Config, v string) error {
		r, err := model.ParseSamplerRatio(v)
		if err == nil {
			c.Tracing.Ratio = r
		}
		return err
	},
	"otel-sampler-parent-based": boolKey(func(c *model.Config) *bool { return &c.Tracing.ParentBased }),
}

// maxTraceQueue bounds the spans the controller holds for export: about
// a KiB each.
const maxTraceQueue = 1 << 20

// tracingProblems explains settings that do not apply as written; it
// fixes the batch size when it exceeds the queue, as the exporter would.
func tracingProblems(c *model.Config) []string {
	t := &c.Tracing
	var out []string
	if t.Enabled && t.Collector.Host == "" {
		out = append(out, "enable-opentelemetry is true but otlp-collector-host is not set: nginx passes trace context on, and no span is exported")
	}
	if t.MaxExportBatchSize > t.MaxQueueSize {
		out = append(out, fmt.Sprintf("otel-max-export-batch-size %d is larger than otel-max-queuesize %d; batches of %d are exported",
			t.MaxExportBatchSize, t.MaxQueueSize, t.MaxQueueSize))
		t.MaxExportBatchSize = t.MaxQueueSize
	}
	return out
}
