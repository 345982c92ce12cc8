package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// Metrics configures the per-request metrics of the dynamic data plane
// (ingress-nginx's nginx_ingress_controller_requests and histograms):
// each counted location names its series in balancer.MetricsVariable, and
// causeway/metrics.lua counts requests per worker and sends the counts to
// the controller's socket once a second.
type Metrics struct {
	// Histograms are the names (balancer.Histograms) to observe; the
	// others cost nothing.
	Histograms []string
	// TimeBuckets, LengthBuckets and SizeBuckets are the upper bounds,
	// ascending, of the histograms of each kind.
	TimeBuckets, LengthBuckets, SizeBuckets []float64
	// PerHost labels series with the host; PerUndefinedHost also counts
	// requests to hosts no Ingress defines (the catch-all server's own
	// locations), labelled with the request's Host (ingress-nginx's
	// --metrics-per-host and --metrics-per-undefined-host).
	PerHost, PerUndefinedHost bool
	// MaxSeries bounds the series one worker holds between two batches
	// (20,000 when 0).
	MaxSeries int
}

// luaInit is the metrics.lua init call for the http block's
// init_by_lua_block: every value a number or a name from a fixed list, and
// socket, which NginxSnippets checks with its other sockets.
func (m *Metrics) luaInit(socket string) (string, error) {
	var names []string
	for _, n := range m.Histograms {
		if !slices.ContainsFunc(balancer.Histograms, func(h balancer.Histogram) bool { return h.Name == n }) {
			return "", fmt.Errorf("metrics: unknown histogram %q", n)
		}
		names = append(names, strconv.Quote(n))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `require("causeway.metrics").init({ socket = %q, interval = 1, max_series = %d, host_for_undefined = %t, histograms = { %s }`,
		socket, orDefault(m.MaxSeries, 20000), m.PerHost && m.PerUndefinedHost, strings.Join(names, ", "))
	for _, kind := range []struct {
		name    string
		buckets []float64
	}{{"time", m.TimeBuckets}, {"length", m.LengthBuckets}, {"size", m.SizeBuckets}} {
		s, err := luaBuckets(kind.buckets)
		if err != nil {
			return "", fmt.Errorf("metrics: %s buckets: %w", kind.name, err)
		}
		fmt.Fprintf(&b, ", %s = { %s }", kind.name, s)
	}
	b.WriteString(" })")
	return b.String(), nil
}

// luaBuckets renders bounds as a Lua list, checking they ascend.
func luaBuckets(bounds []float64) (string, error) {
	if err := balancer.CheckBuckets(bounds); err != nil {
		return "", err
	}
	out := make([]string, len(bounds))
	for i, v := range bounds {
		out[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(out, ", "), nil
}

// planMetrics makes a location count its requests: it sets the series key
// (a log variable, so shared servers map it per host like the others) and
// the log hook. The controller's own locations of the catch-all server
// (the default 404 or default backend) are counted only for undefined
// hosts, as in ingress-nginx.
func (sp *serverPlan) planMetrics(lv *locationView, l *model.Location) error {
	if !sp.rc.lua || sp.rc.p.Dynamic == nil || sp.rc.p.Dynamic.Metrics == nil {
		return nil
	}
	mc := sp.rc.p.Dynamic.Metrics
	own := l.Source == (model.ObjectRef{})
	catchAll := sp.srv.Host == ""
	if own && catchAll && mc.PerHost && !mc.PerUndefinedHost {
		return nil
	}
	labels := balancer.SeriesLabels{Namespace: l.Source.Namespace, Ingress: l.Source.Name}
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
	key := balancer.SeriesKey(labels)
	q, err := Quote(key)
	if err != nil {
		return err
	}
	lv.LogVars = append(lv.LogVars, logVar{Name: balancer.MetricsVariable, Value: q})
	lv.Metrics = true
	if sp.rc.series == nil {
		// About two locations per host: growing the map was a third of
		// this function's time at 10,000 hosts.
		sp.rc.series = make(map[string]balancer.SeriesLabels, 2*len(sp.rc.m.Servers))
	}
	sp.rc.series[key] = labels
	return sp.planCanaryMetrics(lv, l, labels)
}
