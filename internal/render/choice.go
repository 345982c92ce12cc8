package render

import "github.com/causeway/causeway/internal/model"

// selectChoice makes a dynamic-mode location whose proxy has a choice
// (a VirtualServer route's splits and matches) name the choice instead of
// its backend: the balancer applies the matches and weights from the
// pushed state (see balancer.ChoiceOf), so they never appear here and
// changing them needs no reload. The location gets the Lua hooks any
// target's method needs. Without the Lua balancer Proxy.Backend serves
// every request; the controller reports that.
func selectChoice(lv *locationView, p *model.Proxy, backends map[string]*model.Backend, lua bool) error {
	if p.Choice == nil || !lua {
		return nil
	}
	for _, key := range p.Choice.Backends() {
		var target locationView
		if err := selectBackend(&target, key, backends, true); err != nil {
			return err
		}
		lv.HeaderFilter = lv.HeaderFilter || target.HeaderFilter
		lv.LogHook = lv.LogHook || target.LogHook
	}
	return nameKey(lv, model.ChoiceKey(p.Choice))
}
