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
	src := seriesSource{loc: l}
	if mc.PerHost {
		src.host = sp.srv.Host
		src.fromRequest = catchAll && mc.PerUndefinedHost
	}
	key := sp.rc.seriesKey(src)
	q, err := Quote(key)
	if err != nil {
		return err
	}
	lv.LogVars = append(lv.LogVars, logVar{Name: balancer.MetricsVariable, Value: q})
	lv.AccessLogs = sp.rc.metricsAccessLogs(lv.AccessLogOff || lv.Policy != nil && lv.Policy.AccessLogOff)
	if sp.rc.planned == nil {
		// About two locations per host: growing the map was a third of
		// this function's time at 10,000 hosts.
		sp.rc.planned = make(map[string]seriesSource, 2*len(sp.rc.m.Servers))
		sp.rc.series = make(map[string]*balancer.SeriesLabels, 2*len(sp.rc.m.Servers))
	}
	sp.rc.planned[key] = src
	return sp.planCanaryMetrics(lv, l, src)
}

// seriesSource is what the labels of a location's series are made of
// (labels). The render's planned series keep it rather than the labels:
// the labels it made for every location planned, though nearly all equal
// the collector's, were a fifth of what a render held live at 10,000
// hosts.
type seriesSource struct {
	loc *model.Location
	// host is the server's host with per-host metrics, "" otherwise;
	// fromRequest: the request's Host replaces it (the catch-all with
	// --metrics-per-undefined-host).
	host        string
	fromRequest bool
	// canary: the series of the requests the location's split sends to
	// its canary (planCanaryMetrics).
	canary bool
}

// labels are the series labels of s.
func (s seriesSource) labels(rc *renderCtx) balancer.SeriesLabels {
	l := s.loc
	labels := balancer.SeriesLabels{Namespace: l.Source.Namespace, Ingress: l.Source.Name, Host: s.host, HostFromRequest: s.fromRequest}
	own := l.Source == (model.ObjectRef{})
	if !own {
		labels.Path = l.Match.Path
	}
	p := l.Action.Proxy
	if p != nil && !own {
		labels.Service = serviceLabel(rc, p.Backend)
	}
	if s.canary {
		labels.Canary = canaryLabel(rc, p.Split.Canary())
	}
	return labels
}

// serviceLabel is the service label of the series of a location that
// proxies to backend: the backend's Service, or the name's middle part
// for a backend the model does not have.
func serviceLabel(rc *renderCtx, backend string) string {
	if b := rc.backends[backend]; b != nil {
		return b.Service
	}
	if parts := strings.Split(backend, "/"); len(parts) == 3 {
		return parts[1]
	}
	return ""
}

// seriesKey is the series key of s: the collector's string when it knows
// the key (Params.KnownSeries), so that the planned series share it.
func (rc *renderCtx) seriesKey(s seriesSource) string {
	labels := s.labels(rc)
	rc.entry = balancer.AppendSeriesKey(rc.entry[:0], labels)
	if known := rc.p.KnownSeries; known != nil {
		if key, _, ok := known(rc.entry); ok {
			return key
		}
	}
	return string(rc.entry)
}

// putSeries maps the series key name to the labels of s in the render's
// series, taking the key string and labels the collector knows under
// name (Params.KnownSeries) when they are equal, so that both share them.
// name is only read.
func (rc *renderCtx) putSeries(name []byte, s seriesSource) {
	labels := s.labels(rc)
	if known := rc.p.KnownSeries; known != nil {
		if key, l, ok := known(name); ok && *l == labels {
			rc.series[key] = l
			return
		}
	}
	kept := new(balancer.SeriesLabels) // not &labels: that would make one every call
	*kept = labels
	rc.series[string(name)] = kept
}

// putSharedSeries maps a shared server's series key and one of its hosts
// (SharedSeriesEntry) to the labels of s, as putSeries does.
func (rc *renderCtx) putSharedSeries(key, host string, s seriesSource) {
	rc.entry = balancer.AppendSharedSeriesEntry(rc.entry[:0], key, host)
	rc.putSeries(rc.entry, s)
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
			if src, ok := rc.planned[key]; ok {
				rc.entry = append(rc.entry[:0], key...)
				rc.putSeries(rc.entry, src)
			}
		}
	}
}
