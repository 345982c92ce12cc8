package metrics

import (
	"hash/fnv"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/causeway/causeway/internal/version"
)

// CompatPrefix starts the metrics named as ingress-nginx names them, so
// that dashboards and alerts written for it keep working.
const CompatPrefix = "nginx_ingress_controller_"

// Identity is what ingress-nginx puts on its controller metrics as the
// labels controller_namespace, controller_class and controller_pod.
type Identity struct {
	Namespace, Class, Pod string
}

// IdentityFromEnv names this replica: the pod from $POD_NAME (else the
// host name, which is the pod name in a cluster), the namespace from
// $POD_NAMESPACE, the class from the --ingress-class flag.
func IdentityFromEnv(class string) Identity {
	pod := os.Getenv("POD_NAME")
	if pod == "" {
		pod, _ = os.Hostname()
	}
	return Identity{Namespace: os.Getenv("POD_NAMESPACE"), Class: class, Pod: pod}
}

// Labels are the labels ingress-nginx puts on every metric it reads from
// nginx.
func (id Identity) Labels() prometheus.Labels {
	return prometheus.Labels{"controller_namespace": id.Namespace, "controller_class": id.Class, "controller_pod": id.Pod}
}

// with returns id's labels plus extra.
func (id Identity) with(extra prometheus.Labels) prometheus.Labels {
	l := id.Labels()
	for k, v := range extra {
		l[k] = v
	}
	return l
}

// Compat holds the ingress-nginx-named controller metrics.
type Compat struct {
	Identity Identity
	// Certificates serves ssl_expire_time_seconds and
	// ssl_certificate_info.
	Certificates *Certificates

	configHash, lastOK, lastOKTime prometheus.Gauge
	reloads, reloadErrors          prometheus.Counter

	mu       sync.Mutex
	lastFail bool
	now      func() time.Time
}

func newCompat(id Identity, collectErrors *prometheus.CounterVec, log *slog.Logger) *Compat {
	l := id.Labels()
	return &Compat{
		Identity:     id,
		Certificates: newCertificates(id, collectErrors.WithLabelValues("certificates"), log),
		configHash: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: CompatPrefix + "config_hash", ConstLabels: l,
			Help: "Hash of the configuration nginx runs (0 after a failed reload).",
		}),
		lastOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: CompatPrefix + "config_last_reload_successful", ConstLabels: l,
			Help: "1 if the last attempt to make a configuration live succeeded, 0 if it failed.",
		}),
		lastOKTime: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: CompatPrefix + "config_last_reload_successful_timestamp_seconds", ConstLabels: l,
			Help: "Unix time of the last successful reload.",
		}),
		reloads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: CompatPrefix + "success", ConstLabels: l,
			Help: "nginx reloads (and the first start) that made a configuration live.",
		}),
		reloadErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: CompatPrefix + "errors", ConstLabels: l,
			Help: "Attempts to make a configuration live that failed (nginx -t refused it, or workers did not take it up).",
		}),
		now: time.Now,
	}
}

func (c *Compat) collectors() []prometheus.Collector {
	build := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: CompatPrefix + "build_info",
		Help: "Always 1; the labels name the build.",
		ConstLabels: c.Identity.with(prometheus.Labels{
			"release": version.Version, "build": version.Commit, "repository": "https://github.com/causeway/causeway",
		}),
	}, func() float64 { return 1 })
	return []prometheus.Collector{c.configHash, c.lastOK, c.lastOKTime, c.reloads, c.reloadErrors, c.Certificates, build}
}

// Reloaded records a configuration made live by a reload (or the first
// start) of nginx.
func (c *Compat) Reloaded(version string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reloads.Inc()
	c.live(version)
}

// Unchanged records a successful apply that needed no reload. After a
// failure it marks the running configuration good again, as ingress-nginx
// does when a refused change is reverted.
func (c *Compat) Unchanged(version string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastFail {
		c.live(version)
	}
}

// Failed records a configuration that could not be made live.
func (c *Compat) Failed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastFail = true
	c.reloadErrors.Inc()
	c.lastOK.Set(0)
	c.configHash.Set(0)
}

func (c *Compat) live(version string) {
	c.lastFail = false
	c.lastOK.Set(1)
	c.lastOKTime.Set(float64(c.now().Unix()))
	c.configHash.Set(ConfigHash(version))
}

// ConfigHash turns a configuration version into a gauge value: FNV-1a of
// it, cut to 53 bits so the float holds it exactly and equal versions
// compare equal across replicas.
func ConfigHash(version string) float64 {
	h := fnv.New64a()
	h.Write([]byte(version))
	return float64(h.Sum64() & (1<<53 - 1))
}

// LeaderElection returns leader_election_status{name}: 1 while isLeader
// says this replica holds the Lease called name, else 0. Register it.
func (c *Compat) LeaderElection(name string, isLeader func() bool) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        CompatPrefix + "leader_election_status",
		Help:        "1 while this replica leads the election named by name, 0 while it follows.",
		ConstLabels: c.Identity.with(prometheus.Labels{"name": name}),
	}, func() float64 {
		if isLeader() {
			return 1
		}
		return 0
	})
}
