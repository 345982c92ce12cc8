// Package tracing exports the spans nginx logs (package spanlog) over
// OTLP with OpenTelemetry's Go SDK: nginx starts or continues each
// request's trace context and decides whether it is sampled (package
// render), and writes a line per sampled request to the span log; the
// controller reads the lines (metrics.RequestLog), makes each a span with
// nginx's trace and span IDs and ingress-nginx's attributes, and hands
// it to the SDK's batch processor, which sends it to the collector the
// ConfigMap names.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/spanlog"
)

// ScopeName is the instrumentation scope of the spans: ingress-nginx's
// module names its tracer "nginx".
const ScopeName = "nginx"

// Options configure an Exporter.
type Options struct {
	// Log receives export errors (at most one a minute) and, at debug
	// level, the lines that cannot be used.
	Log *slog.Logger
	// Registry, when set, gets the exporter's counters.
	Registry prometheus.Registerer
	// Grace is how long a span key stays known after the configuration
	// stopped naming it: old workers still finish requests and write
	// their last lines (2 minutes when 0).
	Grace time.Duration
	// NewExporter, when set, replaces the OTLP exporter for the
	// collector (tests record the spans instead).
	NewExporter func(model.Collector) (sdktrace.SpanExporter, error)
}

// Exporter turns the span log's lines into spans and exports them. It
// implements metrics.Lines.
type Exporter struct {
	opts Options
	log  *slog.Logger

	mu         sync.Mutex
	keys       metrics.Keys[spanlog.Labels]
	oldWorkers time.Duration
	export     exportConfig
	provider   *sdktrace.TracerProvider
	tracer     trace.Tracer
	now        func() time.Time
	lastErr    time.Time

	lines, exported, exportErrors prometheus.Counter
	dropped                       *prometheus.CounterVec
}

// exportConfig is what a change of rebuilds the SDK's pipeline.
type exportConfig struct {
	collector    model.Collector
	service      string
	queue, batch int
	delay        time.Duration
}

// New returns an Exporter that exports nothing until Configure names a
// collector.
func New(opts Options) (*Exporter, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Grace == 0 {
		opts.Grace = 2 * time.Minute
	}
	e := &Exporter{opts: opts, log: opts.Log, now: time.Now}
	e.lines = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "causeway_trace_log_lines_total",
		Help: "Lines read from nginx's span log: one per sampled traced request.",
	})
	e.dropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "causeway_trace_dropped_spans_total",
		Help: "Spans nginx logged that were not handed to the exporter, by reason: malformed (a line the controller cannot read), unknown (a span key no recent configuration names), no_collector (otlp-collector-host is not set).",
	}, []string{"reason"})
	e.exported = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "causeway_trace_exported_spans_total",
		Help: "Spans the collector accepted. Lines read minus spans dropped minus these are in the batch queue, or were dropped by it when full.",
	})
	e.exportErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "causeway_trace_export_errors_total",
		Help: "Batches of spans the collector did not accept (or could not be reached for).",
	})
	for _, r := range []string{"malformed", "unknown", "no_collector"} {
		e.dropped.WithLabelValues(r)
	}
	if opts.Registry != nil {
		for _, c := range []prometheus.Collector{e.lines, e.dropped, e.exported, e.exportErrors} {
			if err := opts.Registry.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return e, nil
}

// ErrorHandler routes the errors the OpenTelemetry SDK reports globally
// (a failed export, once per batch) to log at debug level: the Exporter
// counts them and logs them at most once a minute, while the SDK's
// default prints every one to stderr. Install it with
// otel.SetErrorHandler.
func ErrorHandler(log *slog.Logger) otel.ErrorHandler {
	return otel.ErrorHandlerFunc(func(err error) { log.Debug("tracing: OpenTelemetry SDK error", "err", err) })
}

// ReadEvery is how often the span log should be read: the lines of a
// read reach the batch processor at once, and its queue
// (otel-max-queuesize, 2048 by default) must hold them, so a read takes
// a quarter of a second's spans rather than a second's.
const ReadEvery = 250 * time.Millisecond

// oldWorkerSlack is what a line of an old worker may take beyond its
// last request: the buffer's flush (1 s) and a read (1 s), with room.
const oldWorkerSlack = 30 * time.Second

// Configure makes spans the configuration's span keys (render.Output's
// Spans) and t its export settings. Call it before the configuration goes
// live. Keys no longer named expire after the grace period, or once the
// old workers are gone if they may live longer (oldWorkers). A change of
// collector, service name or batching starts a new exporter; the old one
// sends what it holds in the background.
func (e *Exporter) Configure(t model.Tracing, spans map[string]spanlog.Labels, oldWorkers time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.oldWorkers = oldWorkers
	grace := max(e.opts.Grace, oldWorkers+oldWorkerSlack)
	now := e.now()
	e.keys.Set(spans, now, grace)
	e.keys.Expire(now)
	want := exportConfig{collector: t.Collector, service: t.ServiceName, queue: t.MaxQueueSize, batch: t.MaxExportBatchSize, delay: t.ScheduleDelay}
	if want == e.export && (e.provider != nil) == (want.collector.Host != "") {
		return
	}
	old := e.provider
	e.provider, e.tracer, e.export = nil, nil, want
	if want.collector.Host != "" {
		p, err := e.newProvider(want)
		if err != nil {
			e.log.Error("tracing: cannot start the OTLP exporter; spans are not exported", "collector", want.collector.Address(), "err", err)
		} else {
			e.provider, e.tracer = p, p.Tracer(ScopeName)
			e.log.Info("tracing: exporting spans", "collector", want.collector.Address(), "protocol", want.collector.Protocol, "service", want.service)
		}
	}
	if old != nil {
		go shutdown(old, e.log)
	}
}

// shutdown sends what an old provider holds, for at most 30 seconds.
func shutdown(p *sdktrace.TracerProvider, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		log.Warn("tracing: the previous exporter did not send all its spans", "err", err)
	}
}

// newProvider builds the SDK's pipeline for c: every span it gets is
// sampled already (nginx decided), and carries the IDs nginx gave it.
func (e *Exporter) newProvider(c exportConfig) (*sdktrace.TracerProvider, error) {
	newExporter := e.opts.NewExporter
	if newExporter == nil {
		newExporter = otlpExporter
	}
	exp, err := newExporter(c.collector)
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithIDGenerator(givenIDs{}),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", c.service))),
		sdktrace.WithBatcher(&countingExporter{SpanExporter: exp, e: e}, sdktrace.WithMaxQueueSize(c.queue), sdktrace.WithMaxExportBatchSize(c.batch),
			sdktrace.WithBatchTimeout(c.delay)),
	), nil
}

// otlpExporter sends spans to c in plain text: OTLP over gRPC, or over
// HTTP to /v1/traces. The SDK's OTEL_EXPORTER_OTLP_* environment
// variables may add headers or timeouts; the endpoint is c's.
func otlpExporter(c model.Collector) (sdktrace.SpanExporter, error) {
	ctx := context.Background()
	if c.Protocol == model.OTLPHTTP {
		return otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(c.Address()), otlptracehttp.WithInsecure())
	}
	return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(c.Address()), otlptracegrpc.WithInsecure())
}

// countingExporter counts and logs the batches the collector refused.
type countingExporter struct {
	sdktrace.SpanExporter
	e *Exporter
}

func (c *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := c.SpanExporter.ExportSpans(ctx, spans)
	if err == nil {
		c.e.exported.Add(float64(len(spans)))
	} else {
		c.e.exportErrors.Inc()
		c.e.mu.Lock()
		now := c.e.now()
		quiet := now.Sub(c.e.lastErr) < time.Minute
		if !quiet {
			c.e.lastErr = now
		}
		c.e.mu.Unlock()
		if !quiet {
			c.e.log.Warn("tracing: the collector did not take a batch of spans (said at most once a minute)", "spans", len(spans), "err", err)
		}
	}
	return err
}

// OldWorkers is how long old workers may live after a reload, as
// Configure was last told.
func (e *Exporter) OldWorkers() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.oldWorkers
}

// Count exports the complete lines of data, each one sampled request as
// nginx wrote it to the span log.
func (e *Exporter) Count(data []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var lines float64
	for len(data) > 0 {
		i := 0
		for i < len(data) && data[i] != '\n' {
			i++
		}
		line := data[:i]
		if i < len(data) {
			i++
		}
		data = data[i:]
		lines++
		if reason, err := e.exportLine(line); err != nil {
			e.dropped.WithLabelValues(reason).Inc()
			e.log.Debug("span log line dropped", "reason", reason, "err", err)
		}
	}
	e.lines.Add(lines)
}

// exportLine makes one line a span; e.mu is held.
func (e *Exporter) exportLine(line []byte) (string, error) {
	r, err := spanlog.Parse(line)
	if err != nil {
		return "malformed", err
	}
	s, err := build(r)
	if err != nil {
		return "malformed", err
	}
	entry := r.Key
	if spanlog.IsShared(r.Key) {
		entry = spanlog.SharedEntry(r.Key, r.Host)
	}
	kk, ok := e.keys.Get(entry)
	if !ok {
		if !spanlog.ValidKey(r.Key) {
			return "malformed", fmt.Errorf("span key %q is malformed", r.Key)
		}
		return "unknown", fmt.Errorf("span key %q (host %q) is not in any recent configuration", r.Key, r.Host)
	}
	if e.tracer == nil {
		return "no_collector", errors.New("no collector")
	}
	s.record(e.tracer, r, kk.Labels)
	return "", nil
}

// Close sends what the exporter holds, for as long as ctx allows.
func (e *Exporter) Close(ctx context.Context) error {
	e.mu.Lock()
	p := e.provider
	e.provider, e.tracer = nil, nil
	e.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Shutdown(ctx)
}
