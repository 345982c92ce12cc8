package render

import (
	"strings"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// selectSplit makes a dynamic-mode location whose proxy has a canary name
// the split instead of its primary backend: the balancer applies the
// split's rule from the pushed state (see balancer.SplitOf), so the rule
// never appears here and changing it needs no reload. The location gets
// the Lua hooks either backend's method needs. Without the Lua balancer
// the canary is not applied; the controller reports that.
func selectSplit(lv *locationView, p *model.Proxy, backends map[string]*model.Backend, lua bool) error {
	if p.Canary == nil || !lua {
		return nil
	}
	var canary locationView
	if err := selectBackend(&canary, p.Canary.Backend, backends, true); err != nil {
		return err
	}
	lv.HeaderFilter = lv.HeaderFilter || canary.HeaderFilter
	lv.LogHook = lv.LogHook || canary.LogHook
	sharePool(lv, &canary)
	return nameKey(lv, model.SplitKey(p.Backend, p.Canary))
}

// sharePool makes a location whose backends keep idle connections
// differently (their own keepalive, or the ConfigMap's) keep its
// connections in the shared pool: a location proxies to one upstream.
// The controller reports it.
func sharePool(lv, target *locationView) {
	if target.PassURL != lv.PassURL {
		lv.PassURL = "http://" + balancer.UpstreamName
	}
}

// nameKey makes the location select key (a split or a choice) in the
// balancer.
func nameKey(lv *locationView, key string) error {
	if err := balancer.ValidateKey(key); err != nil {
		return err
	}
	q, err := Quote(key)
	if err != nil {
		return err
	}
	lv.Backend, lv.SelectKey = key, q
	return nil
}

// planCanaryMetrics gives a counted split location a second series, for
// the requests its canary serves: the location's labels with ingress-nginx's
// canary label, the canary's upstream name. The balancer's log hook (which
// knows the split's choice) picks the series, so the location gets it.
func (sp *serverPlan) planCanaryMetrics(lv *locationView, l *model.Location, labels balancer.SeriesLabels) error {
	p := l.Action.Proxy
	if p == nil || p.Canary == nil || !sp.rc.lua {
		return nil
	}
	if b := sp.rc.backends[p.Canary.Backend]; b != nil {
		labels.Canary = b.Namespace + "-" + b.Service + "-" + b.Port
	} else {
		labels.Canary = strings.ReplaceAll(p.Canary.Backend, "/", "-")
	}
	key := balancer.SeriesKey(labels)
	q, err := Quote(key)
	if err != nil {
		return err
	}
	lv.LogVars = append(lv.LogVars, logVar{Name: balancer.CanaryMetricsVariable, Value: q})
	lv.LogHook = true
	sp.rc.planned[key] = labels
	return nil
}
