// Package metrics defines the Prometheus collectors of the tunnel server
// and agent. Collectors are registered on a registry the caller passes in,
// never on the global one, so tests and several instances in one process
// do not collide.
package metrics

import (
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/causeway/causeway/internal/tunnel/wire"
)

// Metrics are the collectors one side (server or agent) updates.
type Metrics struct {
	// Links counts live agent↔server links: on a server, agents connected
	// (labelled with its server ID); on an agent, servers connected.
	Links *prometheus.GaugeVec
	// Dials counts dial attempts by frontend and result (a wire.DialCode).
	Dials *prometheus.CounterVec
	// Active counts tunneled connections currently open, by frontend.
	Active *prometheus.GaugeVec
	// Bytes counts tunneled bytes by direction ("out" towards the edge,
	// "in" from it) and stage ("raw" before compression, "wire" after).
	Bytes *prometheus.CounterVec
	// DialLatency observes the time from dial request to answer.
	DialLatency *prometheus.HistogramVec
	// RouteConflicts (server only; nil on agents) counts node-IP claims
	// ignored because another agent's CIDR owns the address, each time
	// one appears.
	RouteConflicts prometheus.Counter
}

// New creates the collectors with the given subsystem ("server" or
// "agent") and registers them on reg.
func New(reg prometheus.Registerer, subsystem string) *Metrics {
	linkHelp := "Live links to agents, by server ID."
	linkLabels := []string{"server_id"}
	if subsystem == "agent" {
		linkHelp = "Live links to distinct server replicas."
		linkLabels = nil
	}
	m := &Metrics{
		Links: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "causeway_tunnel", Subsystem: subsystem, Name: "links", Help: linkHelp,
		}, linkLabels),
		Dials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "causeway_tunnel", Subsystem: subsystem, Name: "dials_total",
			Help: "Dials through the tunnel by frontend and result.",
		}, []string{"frontend", "result"}),
		Active: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "causeway_tunnel", Subsystem: subsystem, Name: "active_connections",
			Help: "Tunneled connections currently open, by frontend.",
		}, []string{"frontend"}),
		Bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "causeway_tunnel", Subsystem: subsystem, Name: "bytes_total",
			Help: "Tunneled bytes by direction (out: towards the edge; in: from it) and stage (raw: before compression; wire: after).",
		}, []string{"direction", "stage"}),
		DialLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "causeway_tunnel", Subsystem: subsystem, Name: "dial_duration_seconds",
			Help:    "Time from dial request to answer, by result.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 14),
		}, []string{"result"}),
	}
	reg.MustRegister(m.Links, m.Dials, m.Active, m.Bytes, m.DialLatency)
	if subsystem == "server" {
		m.RouteConflicts = prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "causeway_tunnel", Subsystem: subsystem, Name: "route_conflicts_total",
			Help: "Node-IP claims ignored because the most specific CIDR containing the address belongs to another agent.",
		})
		reg.MustRegister(m.RouteConflicts)
	}
	return m
}

// Stats returns the byte counters for wire.Join. On the server the plain
// side is the cloud client, so "out" is plain→tunnel; on the agent the
// plain side is the edge backend, so the directions swap.
func (m *Metrics) Stats(agentSide bool) wire.Stats {
	if m == nil {
		return wire.Stats{}
	}
	out, in := "out", "in"
	if agentSide {
		out, in = "in", "out"
	}
	return wire.Stats{
		RawOut:  m.Bytes.WithLabelValues(out, "raw"),
		WireOut: m.Bytes.WithLabelValues(out, "wire"),
		RawIn:   m.Bytes.WithLabelValues(in, "raw"),
		WireIn:  m.Bytes.WithLabelValues(in, "wire"),
	}
}

// Handler serves /metrics from gatherer, /healthz (the process runs) and
// /readyz (ready reports true).
func Handler(gatherer prometheus.Gatherer, ready func() bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ready != nil && !ready() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	return mux
}

// Flag is a concurrency-safe boolean for readiness.
type Flag struct{ v atomic.Bool }

// Set sets the flag.
func (f *Flag) Set(v bool) { f.v.Store(v) }

// Get reads the flag.
func (f *Flag) Get() bool { return f.v.Load() }
