package render

import "github.com/causeway/causeway/internal/model"

// planRouteRetry declares $causeway_tries (balancer.TriesVariable) at the
// http level when a location of the Lua data plane sets it, for a
// Gateway API retry (model.RouteRetry): the balancer reads it on every
// request, and nginx warns on every read of a variable that `set`
// declares elsewhere and this request never set. Without such a
// location nothing declares it, and the balancer reads nothing.
func (v *mainView) planRouteRetry(m *model.Model) {
	if v.lua == nil {
		return
	}
	for _, s := range m.Servers {
		for _, l := range s.Locations {
			if l.Policy != nil && l.Policy.Retry.Route != nil {
				v.RouteTries = true
				return
			}
		}
	}
}
