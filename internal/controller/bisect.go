package controller

import (
	"context"
	"errors"
	"maps"
	"slices"
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
	var out []string
	out = changed(out, c.lastLive, "Ingress", snap.Ingresses)
	out = changed(out, c.lastLive, "VirtualServer", snap.VirtualServers)
	out = changed(out, c.lastLive, "TransportServer", snap.TransportServers)
	out = slices.DeleteFunc(out, func(key string) bool { _, bad := c.badObject[key]; return bad })
	sort.Strings(out)
	return out
}

// liveMarks are what changedObjects compares of the objects of the last
// live snapshot, by UID (or by model.ObjectRef key for an object without
// one). The snapshot itself would keep every one of its objects alive
// until the next live sync, and the status writes that follow a start
// replace each of them in the informers' caches: at 10,000 Ingresses,
// 10,000 old objects held beside the new ones.
type liveMarks map[string]liveMark

// liveMark is an object's generation (bumped by the API server with every
// change of its spec) and its annotations (the informers share an
// unchanged map between versions). An object without a generation (the
// files source's) is kept whole and compared by its fingerprint.
type liveMark struct {
	gen int64
	ann map[string]string
	obj metav1.Object
}

// markLive returns the marks of snap's objects of the kinds bisection
// suspects.
func markLive(snap *source.Snapshot) liveMarks {
	m := make(liveMarks, len(snap.Ingresses)+len(snap.VirtualServers)+len(snap.TransportServers))
	mark(m, "Ingress", snap.Ingresses)
	mark(m, "VirtualServer", snap.VirtualServers)
	mark(m, "TransportServer", snap.TransportServers)
	return m
}

func mark[T metav1.Object](m liveMarks, kind string, objs []T) {
	for _, o := range objs {
		lm := liveMark{gen: o.GetGeneration(), ann: o.GetAnnotations()}
		if lm.gen == 0 {
			lm.obj = o
		}
		m[markKey(kind, o)] = lm
	}
}

// markKey is o's UID, or its model.ObjectRef key when it has none.
func markKey(kind string, o metav1.Object) string {
	if uid := o.GetUID(); uid != "" {
		return string(uid)
	}
	return model.ObjectRef{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}.Key()
}

// changed appends to out the model.ObjectRef key of each of objs, of
// kind, that is new or changed since m was marked (every one when m is
// nil).
func changed[T metav1.Object](out []string, m liveMarks, kind string, objs []T) []string {
	for _, o := range objs {
		lm, ok := m[markKey(kind, o)]
		switch {
		case !ok:
		case lm.obj != nil || o.GetGeneration() == 0:
			if lm.obj != nil && fingerprint(lm.obj) == fingerprint(o) {
				continue
			}
		case lm.gen == o.GetGeneration() && maps.Equal(lm.ann, o.GetAnnotations()):
			continue
		}
		out = append(out, model.ObjectRef{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}.Key())
	}
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
