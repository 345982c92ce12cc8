package render

import (
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
	key := model.SplitKey(p.Backend, p.Canary)
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
