// Package metrics defines the controller's Prometheus metrics. They live on
// a registry owned by the caller, never the global one.
package metrics

import (
	"log/slog"

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
	// EndpointUpdateSeconds is the time from an EndpointSlice change to
	// nginx serving the new endpoints, for changes pushed without a
	// build (the incremental path).
	EndpointUpdateSeconds prometheus.Histogram
	// Problems is the number of current problems by reason.
	Problems *prometheus.GaugeVec
	// DynamicUpdates counts changes applied without a reload, by kind
	// (endpoints, certificates) and result.
	DynamicUpdates *prometheus.CounterVec
	// ChangesWithoutSync counts source changes that took no sync: those
	// of Services the last build did not look for.
	ChangesWithoutSync prometheus.Counter
	// BackendEndpoints is the number of ready endpoints per backend.
	BackendEndpoints *BackendEndpoints
	// DataplaneMode is 1 for the mode in use: "lua" (reload-free
	// endpoints) or "plain" (per-backend upstreams, reload on change).
	DataplaneMode *prometheus.GaugeVec
	// CollectErrors counts failures to collect a metric at scrape time
	// (nginx's stub_status, /proc, certificates), by collector.
	CollectErrors *prometheus.CounterVec
	// Compat are the metrics named as ingress-nginx names them.
	Compat *Compat

	identity Identity
	log      *slog.Logger
}

// Options configure NewWith.
type Options struct {
	// Identity labels the ingress-nginx-named metrics.
	Identity Identity
	// Log receives collection failures; nil discards them.
	Log *slog.Logger
}

// New is NewWith for tests: no identity, no log.
func New() *Metrics { return NewWith(Options{}) }

// NewWith creates and registers the metrics on a fresh registry, with the
// Go and process collectors.
func NewWith(o Options) *Metrics {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{
		identity: o.Identity,
		log:      o.Log,
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
		EndpointUpdateSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "causeway_endpoint_update_seconds",
			Help:    "Time from an EndpointSlice change to nginx serving its Service's new endpoints, for changes pushed without a build.",
			Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1},
		}),
		ChangesWithoutSync: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "causeway_changes_without_sync_total",
			Help: "Changes that took no sync: changes of Services that the last build did not look for.",
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
	// Every kind and result from the start, at 0: a pushed state may never
	// be needed (nginx loads the state file when it starts), and a
	// dashboard's rate() needs the series before the first increment.
	for _, kind := range []string{"endpoints", "certificates", "hosts", "hosts_ahead"} {
		for _, result := range []string{"success", "failure"} {
			m.DynamicUpdates.WithLabelValues(kind, result)
		}
	}
	m.BackendEndpoints = newBackendEndpoints()
	m.DataplaneMode = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "causeway_dataplane_mode",
		Help: "1 for the data plane mode in use: lua (reload-free endpoints) or plain (reload on endpoint change).",
	}, []string{"mode"})
	m.CollectErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "causeway_metrics_collect_errors_total",
		Help: "Failures to collect metrics at scrape time, by collector (stub_status, nginx_process, certificates).",
	}, []string{"collector"})
	m.Compat = newCompat(o.Identity, m.CollectErrors, o.Log)
	m.Registry.MustRegister(m.Compat.collectors()...)
	m.Registry.MustRegister(m.Reloads, m.LastReloadSeconds, m.LastReloadSuccess, m.ConfigApplySeconds, m.EndpointUpdateSeconds, m.Problems,
		m.DynamicUpdates, m.ChangesWithoutSync, m.BackendEndpoints, m.DataplaneMode, m.CollectErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// WatchNginx registers the nginx_process_* metrics read from /proc for the
// master whose pid masterPID returns (0 while none runs) and its children.
func (m *Metrics) WatchNginx(masterPID func() int) {
	m.Registry.MustRegister(newNginxProcesses(m.identity, "/proc", masterPID, m.failures("nginx_process")))
}

// ScrapeStubStatus registers the connection and request metrics read from
// nginx's stub_status, fetched at every scrape at StubStatusPath over the
// unix socket.
func (m *Metrics) ScrapeStubStatus(socket string) {
	m.Registry.MustRegister(newStubStatus(m.identity, socket, m.failures("stub_status")))
}

func (m *Metrics) failures(collector string) *failureLog {
	return &failureLog{what: collector, log: m.log, errors: m.CollectErrors.WithLabelValues(collector)}
}
