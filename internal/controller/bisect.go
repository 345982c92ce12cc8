package controller

import (
	"context"
	"errors"
	"maps"
	"sort"

	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/runtime"
	"github.com/causeway/causeway/internal/source"
)

// Tester checks files with nginx without making them live; the files on
// disk are the live ones again afterwards. *runtime.Manager implements it.
type Tester interface {
	Test(ctx context.Context, files render.Files) error
}

// bisect finds the Ingress to blame when nginx refuses a configuration
// without naming a file that maps to an object (a hash table it cannot
// build, a limit of the whole configuration). It suspects only Ingresses
// added or changed since the last live configuration, which was accepted
// without them, and halves the suspects with nginx -t until one is left:
//
//	invariant: G (cleared) is accepted, G ∪ S (suspects) is refused;
//	split S into A and B; if G ∪ A is refused, S = A, else G = G ∪ A, S = B.
//
// That costs one test per halving. When the configuration is refused even
// without any suspect, no Ingress is to blame and bisect returns "". When
// only a combination fails, the Ingress that tipped it over is blamed,
// which still leaves everything else flowing.
func (c *Controller) bisect(ctx context.Context, snap *source.Snapshot) string {
	tester, ok := c.opts.Applier.(Tester)
	if !ok {
		return ""
	}
	suspects := c.changedIngresses(snap)
	if len(suspects) == 0 {
		return ""
	}
	refused := func(excluded []string) bool {
		extra := make(map[string]bool, len(excluded))
		for _, k := range excluded {
			extra[k] = true
		}
		_, _, out, err := c.build(snap, extra)
		if err != nil {
			return true
		}
		err = tester.Test(ctx, out.Files)
		var cfgErr *runtime.ConfigError
		return errors.As(err, &cfgErr)
	}
	if refused(suspects) {
		c.opts.Log.Error("nginx refuses the configuration even without the changed Ingresses; no Ingress is to blame", "changed", len(suspects))
		return ""
	}
	all := suspects
	cleared := map[string]bool{}
	for len(suspects) > 1 && ctx.Err() == nil {
		a, b := suspects[:len(suspects)/2], suspects[len(suspects)/2:]
		// Test cleared ∪ a: exclude every other changed Ingress.
		keep := maps.Clone(cleared)
		for _, k := range a {
			keep[k] = true
		}
		var excluded []string
		for _, k := range all {
			if !keep[k] {
				excluded = append(excluded, k)
			}
		}
		if refused(excluded) {
			suspects = a
		} else {
			maps.Copy(cleared, keep)
			suspects = b
		}
	}
	if ctx.Err() != nil {
		return ""
	}
	c.opts.Log.Error("bisection found the Ingress nginx refuses", "ingress", suspects[0], "cleared", len(cleared))
	return suspects[0]
}

// changedIngresses are the keys of Ingresses that are new or changed since
// the last live snapshot (all of them before the first), sorted.
func (c *Controller) changedIngresses(snap *source.Snapshot) []string {
	before := map[string]string{}
	if c.lastLive != nil {
		for _, ing := range c.lastLive.Ingresses {
			before[ingressKey(ing)] = fingerprintOf(ing)
		}
	}
	var out []string
	for _, ing := range snap.Ingresses {
		key := ingressKey(ing)
		if _, bad := c.badObject[key]; bad {
			continue
		}
		if fp, ok := before[key]; !ok || fp != fingerprintOf(ing) {
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}

// blameConfigMap checks whether nginx accepts the configuration when the
// controller's ConfigMap is left out (its defaults used instead), and then
// names it: a value nginx refuses there (an OpenSSL cipher name it does
// not know, say) must not freeze every other change. It returns "" when
// there is no ConfigMap, no Tester, or nginx refuses without it too.
func (c *Controller) blameConfigMap(ctx context.Context, snap *source.Snapshot) string {
	tester, ok := c.opts.Applier.(Tester)
	if !ok {
		return ""
	}
	key := ""
	for _, cm := range snap.ConfigMaps {
		if cm.Namespace+"/"+cm.Name == c.opts.Model.ConfigMap {
			key = configMapKey(cm)
		}
	}
	if key == "" {
		return ""
	}
	if _, bad := c.badObject[key]; bad {
		return ""
	}
	_, _, out, err := c.build(snap, map[string]bool{key: true})
	if err != nil {
		return ""
	}
	var cfgErr *runtime.ConfigError
	if err := tester.Test(ctx, out.Files); errors.As(err, &cfgErr) {
		return ""
	}
	c.opts.Log.Error("nginx refuses the configuration the ConfigMap's settings make; its defaults are used", "configmap", key)
	return key
}
