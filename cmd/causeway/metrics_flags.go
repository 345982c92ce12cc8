package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/render"
)

// requestMetricsFlags are ingress-nginx's flags for its per-request
// metrics, with its defaults.
type requestMetricsFlags struct {
	enabled          bool
	perHost          bool
	perUndefinedHost bool
	statusClasses    bool
	timeBuckets      []float64
	lengthBuckets    []float64
	sizeBuckets      []float64
	exclude          []string
	logRotateSize    int64
}

func (m *requestMetricsFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&m.enabled, "enable-metrics", true, "count every request in nginx_ingress_controller_requests and its histograms")
	fl.BoolVar(&m.perHost, "metrics-per-host", true, "label request metrics with the host")
	fl.BoolVar(&m.perUndefinedHost, "metrics-per-undefined-host", false, "also count requests for hosts no Ingress defines, labelled with their Host header (needs --metrics-per-host)")
	fl.BoolVar(&m.statusClasses, "report-status-classes", false, "label request metrics with the status class (2xx) instead of the status")
	fl.Float64SliceVar(&m.timeBuckets, "time-buckets", metrics.DefaultTimeBuckets, "upper bounds of the duration histograms, in seconds")
	fl.Float64SliceVar(&m.lengthBuckets, "length-buckets", metrics.DefaultLengthBuckets, "upper bounds of the request_size and response_size histograms, in bytes")
	fl.Float64SliceVar(&m.sizeBuckets, "size-buckets", metrics.DefaultSizeBuckets, "upper bounds of the bytes_sent histogram, in bytes")
	fl.Int64Var(&m.logRotateSize, "metrics-log-rotate-size", 256<<20, "apparent size in bytes of the metrics log (a line per counted request), and of the span log (a line per sampled traced request), past which it is renamed and started again at the next reload; reached only where the file system cannot remove what was read from the file's start")
	fl.StringSliceVar(&m.exclude, "exclude-socket-metrics", nil, "request metrics not to collect, e.g. nginx_ingress_controller_bytes_sent,nginx_ingress_controller_connect_duration_seconds")
}

// collector returns the per-request metrics' collector, registered on
// met's registry; nil when --enable-metrics=false.
func (m *requestMetricsFlags) collector(log *slog.Logger, met *metrics.Metrics) (*metrics.Requests, error) {
	// The span log rotates at the same size, with metrics on or off.
	if m.logRotateSize <= 0 {
		return nil, fmt.Errorf("--metrics-log-rotate-size %d: want a positive number of bytes", m.logRotateSize)
	}
	if !m.enabled {
		return nil, nil
	}
	return metrics.NewRequests(metrics.RequestOptions{
		TimeBuckets: m.timeBuckets, LengthBuckets: m.lengthBuckets, SizeBuckets: m.sizeBuckets,
		PerHost: m.perHost, PerUndefinedHost: m.perUndefinedHost, StatusClasses: m.statusClasses,
		Exclude:     m.exclude,
		ConstLabels: met.Compat.Identity.Labels(),
		Log:         log.With("component", "metrics"),
	}, met.Registry)
}

// render is the data plane's side of the same settings.
func (m *requestMetricsFlags) render(r *metrics.Requests) *render.Metrics {
	return &render.Metrics{
		Histograms: r.Histograms(),
		PerHost:    m.perHost, PerUndefinedHost: m.perUndefinedHost,
	}
}
