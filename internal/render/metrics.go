package render

import (
	"strings"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// Metrics configures the per-request metrics (ingress-nginx's
// nginx_ingress_controller_requests and histograms): each counted location
// names its series in balancer.MetricsVariable and writes one line per
// request to the metrics log, through a buffer nginx flushes once a second;
// the controller reads the log and counts (package metrics).
type Metrics struct {
	// Histograms are the names (balancer.Histograms) to observe; the
	// others cost nothing.
	Histograms []string
	// PerHost labels series with the host; PerUndefinedHost also counts
	// requests to hosts no Ingress defines (the catch-all server's own
	// locations), labelled with the request's Host (ingress-nginx's
	// --metrics-per-host and --metrics-per-undefined-host).
	PerHost, PerUndefinedHost bool
}

// metricsLogFormat is the log format's name and metricsLogBuffer its
// buffer: a worker writes the lines it holds when the buffer is full or
// once a second, and when it exits.
const (
	metricsLogFormat = "causeway_metrics"
	metricsLogBuffer = "buffer=64k flush=1s"
)

// logFormat is the metrics log's log_format string (after escape=none):
// variables only, joined by balancer.MetricsLogSeparator.
func (m *Metrics) logFormat() (string, error) {
	fields, err := balancer.MetricsLogFields(m.Histograms)
	if err != nil {
		return "", err
	}
	for i, f := range fields {
		fields[i] = "$" + f
	}
	return "'" + strings.Join(fields, balancer.MetricsLogSeparator) + "'", nil
}

// MetricsLogFormat is the metrics log's format (logFormat), "" without
// metrics.
func (v *mainView) MetricsLogFormat() (string, error) {
	if v.metrics == nil {
		return "", nil
	}
	return v.metrics.logFormat()
}

// metricsAccessLogs are the access_log arguments of a counted location:
// the metrics log, then the access log unless the location turns it off
// (a location's access_log replaces the http level's).
func (rc *renderCtx) metricsAccessLogs(logOff bool) []string {
	// One slice of each kind for every location (none changes one in
	// place): a slice of its own each was 30,000 at 10,000 Ingresses.
	if rc.metricsLogs == nil {
		rc.metricsLogs = [][]string{{rc.metricsLog}, {rc.metricsLog, rc.accessLog}}
	}
	if logOff || rc.accessLog == "" {
		return rc.metricsLogs[0]
	}
	return rc.metricsLogs[1]
}

// planMetrics makes a location count its requests: it sets the series key
// (a log variable, so shared servers map it per host like the others) and
// the log hook. The controller's own locations of the catch-all server
// (the default 404 or default backend) are counted only for undefined
// hosts, as in ingress-nginx.
func (sp *serverPlan) planMetrics(lv *locationView, l *model.Location) error {
	mc := sp.rc.p.Metrics
	if mc == nil {
		return nil
	}
	own := l.Source == (model.ObjectRef{})
	catchAll := sp.srv.Host == ""
	if own && catchAll && mc.PerHost && !mc.PerUndefinedHost {
		return nil
	}
	labels := &balancer.SeriesLabels{Namespace: l.Source.Namespace, Ingress: l.Source.Name}
	if !own {
		labels.Path = l.Match.Path
	}
	if p := l.Action.Proxy; p != nil && !own {
		if b := sp.rc.backends[p.Backend]; b != nil {
			labels.Service = b.Service
		} else if parts := strings.Split(p.Backend, "/"); len(parts) == 3 {
			labels.Service = parts[1]
		}
	}
	if mc.PerHost {
		labels.Host = sp.srv.Host
		labels.HostFromRequest = catchAll && mc.PerUndefinedHost
	}
	key := balancer.SeriesKey(*labels)
	q, err := Quote(key)
	if err != nil {
		return err
	}
	lv.LogVars = append(lv.LogVars, logVar{Name: balancer.MetricsVariable, Value: q})
	lv.AccessLogs = sp.rc.metricsAccessLogs(lv.AccessLogOff || lv.Policy != nil && lv.Policy.AccessLogOff)
	if sp.rc.planned == nil {
		// About two locations per host: growing the map was a third of
		// this function's time at 10,000 hosts.
		sp.rc.planned = make(map[string]*balancer.SeriesLabels, 2*len(sp.rc.m.Servers))
		sp.rc.series = make(map[string]*balancer.SeriesLabels, 2*len(sp.rc.m.Servers))
	}
	sp.rc.planned[key] = labels
	return sp.planCanaryMetrics(lv, l, labels)
}

// putSeries maps the series key name to labels in the render's series,
// taking the key string and labels the collector knows under name
// (Params.KnownSeries) when they are equal, so that both share them.
// name is only read.
func (rc *renderCtx) putSeries(name []byte, labels *balancer.SeriesLabels) {
	if known := rc.p.KnownSeries; known != nil {
		if key, l, ok := known(name); ok && *l == *labels {
			rc.series[key] = l
			return
		}
	}
	rc.series[string(name)] = labels
}

// putSharedSeries maps a shared server's series key and one of its hosts
// (SharedSeriesEntry) to labels, as putSeries does.
func (rc *renderCtx) putSharedSeries(key, host string, labels *balancer.SeriesLabels) {
	rc.entry = balancer.AppendSharedSeriesEntry(rc.entry[:0], key, host)
	rc.putSeries(rc.entry, labels)
}

// useSeries adds the series keys v's locations set to the render's
// series: the keys planned for them, which a shared server replaces by
// its own (shareLogVars).
func (rc *renderCtx) useSeries(v *serverView) {
	if rc.planned == nil {
		return
	}
	for _, l := range v.Locations {
		for _, lv := range l.LogVars {
			if lv.Name != balancer.MetricsVariable && lv.Name != balancer.CanaryMetricsVariable {
				continue
			}
			key := unquoteName(lv.Value) // a quoted hex key
			if labels, ok := rc.planned[key]; ok {
				rc.entry = append(rc.entry[:0], key...)
				rc.putSeries(rc.entry, labels)
			}
		}
	}
}
