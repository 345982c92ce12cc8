// Package metrics defines the controller's Prometheus metrics. They live on
// a registry owned by the caller, never the global one.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the controller's instruments.
type Metrics struct {
	Registry *prometheus.Registry
	// Reloads counts nginx reloads by why they happened and how they ended.
	Reloads *prometheus.CounterVec
	// LastReloadSeconds is how long the last reload took, from writing files
	// to verifying new workers.
	LastReloadSeconds prometheus.Gauge
	// LastReloadSuccess is 1 when the last reload succeeded.
	LastReloadSuccess prometheus.Gauge
	// ConfigApplySeconds is the time from a change event to verified-live.
	ConfigApplySeconds prometheus.Histogram
	// Problems is the number of current problems by reason.
	Problems *prometheus.GaugeVec
	// DynamicUpdates counts changes applied without a reload, by kind
	// (endpoints, certificates) and result.
	DynamicUpdates *prometheus.CounterVec
	// BackendEndpoints is the number of ready endpoints per backend.
	BackendEndpoints *prometheus.GaugeVec
	// DataplaneMode is 1 for the mode in use: "lua" (reload-free
	// endpoints) or "plain" (per-backend upstreams, reload on change).
	DataplaneMode *prometheus.GaugeVec
}

// New creates and registers the metrics on a fresh registry, with the Go
// and process collectors.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "causeway_nginx_reloads_total",
			Help: "nginx reloads (and starts), by reason and result.",
		}, []string{"reason", "result"}),
		LastReloadSeconds: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "causeway_nginx_last_reload_seconds",
			Help: "Duration of the last nginx reload, from writing files to new workers answering.",
		}),
		LastReloadSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "causeway_nginx_last_reload_success",
			Help: "1 if the last nginx reload succeeded, 0 if it failed.",
		}),
		ConfigApplySeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "causeway_config_apply_seconds",
			Help:    "Time from a change event to the configuration being verifiably live.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		Problems: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "causeway_object_problems",
			Help: "Objects currently excluded or degraded, by reason.",
		}, []string{"reason"}),
	}
	m.DynamicUpdates = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "causeway_dynamic_updates_total",
		Help: "Changes applied without an nginx reload, by kind and result.",
	}, []string{"kind", "result"})
	m.BackendEndpoints = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "causeway_backend_endpoints",
		Help: "Ready endpoints per backend (namespace/service/port).",
	}, []string{"backend"})
	m.DataplaneMode = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "causeway_dataplane_mode",
		Help: "1 for the data plane mode in use: lua (reload-free endpoints) or plain (reload on endpoint change).",
	}, []string{"mode"})
	m.Registry.MustRegister(m.Reloads, m.LastReloadSeconds, m.LastReloadSuccess, m.ConfigApplySeconds, m.Problems,
		m.DynamicUpdates, m.BackendEndpoints, m.DataplaneMode,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
