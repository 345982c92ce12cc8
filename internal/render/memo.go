package render

import (
	"hash/maphash"
	"maps"
	"reflect"

	digestpkg "github.com/causeway/causeway/internal/digest"
	"github.com/causeway/causeway/internal/model"
)

// Memo remembers the last Render. With the Lua balancer no rendered file
// reads a backend's endpoints (they reach nginx over the dynamic channel,
// and TestLuaOutputIgnoresEndpoints pins that), so a model that differs
// from the last one only in them renders exactly alike, and Memo hands
// out the last output instead of rendering again. An EndpointSlice
// change, the most frequent change in a cluster, is such a model: at
// 10,000 Ingresses the render was a third of its sync. Without the Lua
// balancer endpoints are in upstreams.conf, and Memo always renders.
//
// Memo keeps a digest of the model, not the model: holding the last model
// would keep a whole build's memory alive between syncs. The digest is
// maphash's, 64 bits with a seed drawn per Memo: no one can aim at a
// collision, and a chance one would keep the last files until the next
// change.
//
// A Memo is not safe for concurrent use.
type Memo struct {
	// seed is drawn at the first Render; sum digests the last model
	// rendered, without backends' endpoints, and its Params; out is what
	// they rendered (nil: none kept).
	seed maphash.Seed
	sum  uint64
	out  *Output
}

// Render is Render through the memo. The Output's Files is the caller's
// own map (the rest is shared with later calls and must not change). The
// last output handed out again is Memoized and has no Series: the memo
// does not keep them, as the one they went to (the metrics collector)
// holds them already (at 10,000 Ingresses the map of 30,000 series keys
// was 4.5 MiB, kept through every build).
func (mm *Memo) Render(m *model.Model, p Params) (*Output, error) {
	if mm.seed == (maphash.Seed{}) {
		mm.seed = maphash.MakeSeed()
	}
	sum, ok := uint64(0), false
	if p.Dynamic != nil {
		sum, ok = digest(mm.seed, m, p)
	}
	if !ok || mm.out == nil || sum != mm.sum {
		// The last output goes before the render, not after it: kept
		// through it, it would be garbage live beside the new one at the
		// render's peak (a seventh of the controller's heap at 10,000
		// Ingresses), which sets the collector's next goal.
		mm.out = nil
		out, err := Render(m, p)
		if err != nil || !ok {
			return out, err
		}
		kept := *out
		kept.Files, kept.Series = maps.Clone(out.Files), nil
		mm.sum, mm.out = sum, &kept
		return out, nil
	}
	out := *mm.out
	out.Files = maps.Clone(mm.out.Files)
	out.Memoized = true
	return &out, nil
}

var (
	backendType  = reflect.TypeFor[model.Backend]()
	hopStateType = reflect.TypeFor[HopState]()
	paramsType   = reflect.TypeFor[Params]()
)

// digest hashes everything of m but backends' endpoints, and p; false
// when a value cannot be hashed (a func or a channel).
func digest(seed maphash.Seed, m *model.Model, p Params) (uint64, bool) {
	x := digestpkg.Hasher{Skip: skipField}
	x.SetSeed(seed)
	ok := x.Add(m) && x.Add(p)
	return x.Sum64(), ok
}

// skipField leaves out of the digest a model.Backend's Endpoints (pushed,
// never rendered with the Lua balancer) and a HopState's shapes (derived
// from what Shapes and Names are), and Params' KnownSeries (which only
// lets the output share what the collector holds).
func skipField(t reflect.Type, i int) bool {
	name := t.Field(i).Name
	return t == backendType && name == "Endpoints" || t == hopStateType && name == "shapes" || t == paramsType && name == "KnownSeries"
}
