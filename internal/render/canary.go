package render

import (
	"strings"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// selectSplit makes a dynamic-mode location whose proxy has a split
// name the split instead of its backend: the balancer applies the rules
// and weights from the pushed state (see balancer.SplitOf), so they never
// appear here and changing them needs no reload. The location gets the
// Lua hooks any target's method needs. Without the Lua balancer
// Proxy.Backend serves every request; the controller reports that.
func selectSplit(lv *locationView, p *model.Proxy, backends map[string]*model.Backend, lua bool) error {
	if p.Split == nil || !lua {
		return nil
	}
	for _, key := range p.Split.Backends() {
		var target locationView
		if err := selectBackend(&target, key, backends, true); err != nil {
			return err
		}
		lv.HeaderFilter = lv.HeaderFilter || target.HeaderFilter
		lv.LogHook = lv.LogHook || target.LogHook
		sharePool(lv, &target)
	}
	return nameKey(lv, p.Split.Key())
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
	if p == nil || p.Split == nil || p.Split.Primary == "" || !sp.rc.lua {
		return nil
	}
	canary := p.Split.Canary()
	if b := sp.rc.backends[canary]; b != nil {
		labels.Canary = b.Namespace + "-" + b.Service + "-" + b.Port
	} else {
		labels.Canary = strings.ReplaceAll(canary, "/", "-")
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
