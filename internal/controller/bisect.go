package controller

import (
	"context"
	"errors"
	"maps"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/runtime"
	"github.com/causeway/causeway/internal/source"
)

// Tester checks files with nginx without making them live; the files on
// disk are the live ones again afterwards. *runtime.Manager implements it.
type Tester interface {
	Test(ctx context.Context, files render.Files) error
}

// bisect finds the object to blame when nginx refuses a configuration
// without naming a file that maps to an object (a hash table it cannot
// build, a limit of the whole configuration). It suspects only the
// Ingresses, VirtualServers and TransportServers added or changed since
// the last live configuration, which was accepted without them, and
// halves the suspects with nginx -t until one is left:
//
//	invariant: G (cleared) is accepted, G ∪ S (suspects) is refused;
//	split S into A and B; if G ∪ A is refused, S = A, else G = G ∪ A, S = B.
//
// That costs one test per halving. When the configuration is refused even
// without any suspect, no object is to blame and bisect returns "". When
// only a combination fails, the object that tipped it over is blamed,
// which still leaves everything else flowing.
func (c *Controller) bisect(ctx context.Context, snap *source.Snapshot) string {
	tester, ok := c.opts.Applier.(Tester)
	if !ok {
		return ""
	}
	suspects := c.changedObjects(snap)
	if len(suspects) == 0 {
		return ""
	}
	refused := func(excluded []string) bool {
		extra := make(map[string]bool, len(excluded))
		for _, k := range excluded {
			extra[k] = true
		}
		_, out, err := c.build(snap, extra)
		if err != nil {
			return true
		}
		err = tester.Test(ctx, out.Files)
		var cfgErr *runtime.ConfigError
		return errors.As(err, &cfgErr)
	}
	if refused(suspects) {
		c.opts.Log.Error("nginx refuses the configuration even without the changed objects; none is to blame", "changed", len(suspects))
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
	c.opts.Log.Error("bisection found the object nginx refuses", "object", suspects[0], "cleared", len(cleared))
	return suspects[0]
}

// changedObjects are the keys of the objects nginx's configuration can
// leave out (Ingresses, VirtualServers and TransportServers) that are new
// or changed since the last live snapshot (all of them before the first),
// sorted.
func (c *Controller) changedObjects(snap *source.Snapshot) []string {
	before := map[string]string{}
	if last := c.lastLive; last != nil {
		fingerprints(before, "Ingress", last.Ingresses)
		fingerprints(before, "VirtualServer", last.VirtualServers)
		fingerprints(before, "TransportServer", last.TransportServers)
	}
	now := map[string]string{}
	fingerprints(now, "Ingress", snap.Ingresses)
	fingerprints(now, "VirtualServer", snap.VirtualServers)
	fingerprints(now, "TransportServer", snap.TransportServers)
	var out []string
	for key, fp := range now {
		if _, bad := c.badObject[key]; bad {
			continue
		}
		if old, ok := before[key]; !ok || old != fp {
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}

// fingerprints adds each of objs, of kind, to m: its model.ObjectRef.Key
// and its fingerprint.
func fingerprints[T metav1.Object](m map[string]string, kind string, objs []T) {
	for _, o := range objs {
		m[model.ObjectRef{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}.Key()] = fingerprint(o)
	}
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
	_, out, err := c.build(snap, map[string]bool{key: true})
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
