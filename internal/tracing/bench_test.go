package tracing

import (
	"context"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/spanlog"
)

// discard is an exporter that drops every span.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkCount is the controller's cost per span up to the exporter:
// reading the line, building the span, the batch processor.
func BenchmarkCount(b *testing.B) {
	e, err := New(Options{NewExporter: func(model.Collector) (sdktrace.SpanExporter, error) { return discard{}, nil }})
	if err != nil {
		b.Fatal(err)
	}
	cfg := model.DefaultTracing()
	cfg.Collector.Host, cfg.MaxQueueSize, cfg.MaxExportBatchSize, cfg.ScheduleDelay = "127.0.0.1", 1<<20, 4096, 100*time.Millisecond
	e.Configure(cfg, map[string]spanlog.Labels{"td0123456789abcdef": cartLabels}, 0)
	defer e.Close(context.Background())
	data := []byte(strings.Repeat(line(nil), 100))
	b.ResetTimer()
	for range b.N / 100 {
		e.Count(data)
	}
}
