package render

import (
	"encoding/binary"
	"hash/maphash"
	"maps"
	"math"
	"reflect"
	"slices"

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
// own map (the rest is shared with later calls and must not change).
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
			mm.out = nil
			return out, err
		}
		mm.sum, mm.out = sum, out
	}
	out := *mm.out
	out.Files = maps.Clone(mm.out.Files)
	return &out, nil
}

var (
	backendType  = reflect.TypeFor[model.Backend]()
	hopStateType = reflect.TypeFor[HopState]()
)

// digest hashes everything of m but backends' endpoints, and p; false
// when a value cannot be hashed (a func or a channel).
func digest(seed maphash.Seed, m *model.Model, p Params) (uint64, bool) {
	var x hasher
	x.h.SetSeed(seed)
	ok := x.value(reflect.ValueOf(m)) && x.value(reflect.ValueOf(p))
	return x.h.Sum64(), ok
}

// hasher writes values to h unambiguously: every value with its kind,
// every string, slice and map with its length, map entries in an order
// of their own, and nothing of a model.Backend's Endpoints.
type hasher struct {
	h   maphash.Hash
	buf [9]byte
}

func (x *hasher) word(kind reflect.Kind, v uint64) {
	x.buf[0] = byte(kind)
	binary.LittleEndian.PutUint64(x.buf[1:], v)
	x.h.Write(x.buf[:])
}

func (x *hasher) value(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Invalid:
		x.word(reflect.Invalid, 0)
	case reflect.Bool:
		b := uint64(0)
		if v.Bool() {
			b = 1
		}
		x.word(reflect.Bool, b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x.word(reflect.Int, uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		x.word(reflect.Uint, v.Uint())
	case reflect.Float32, reflect.Float64:
		x.word(reflect.Float64, math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		x.word(reflect.Complex128, math.Float64bits(real(c)))
		x.word(reflect.Complex128, math.Float64bits(imag(c)))
	case reflect.String:
		x.word(reflect.String, uint64(v.Len()))
		x.h.WriteString(v.String())
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			x.word(v.Kind(), 0)
			return true
		}
		x.word(v.Kind(), 1)
		if v.Kind() == reflect.Interface {
			t := v.Elem().Type().String()
			x.word(reflect.String, uint64(len(t)))
			x.h.WriteString(t)
		}
		return x.value(v.Elem())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			x.word(reflect.Slice, uint64(v.Len()))
			x.h.Write(v.Bytes())
			return true
		}
		x.word(v.Kind(), uint64(v.Len()))
		for i := range v.Len() {
			if !x.value(v.Index(i)) {
				return false
			}
		}
	case reflect.Map:
		// Each entry hashed on its own, the sums sorted: map order is
		// random.
		x.word(reflect.Map, uint64(v.Len()))
		entries := make([]uint64, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			var e hasher
			e.h.SetSeed(x.h.Seed())
			if !e.value(it.Key()) || !e.value(it.Value()) {
				return false
			}
			entries = append(entries, e.h.Sum64())
		}
		slices.Sort(entries)
		for _, e := range entries {
			x.word(reflect.Map, e)
		}
	case reflect.Struct:
		t := v.Type()
		x.word(reflect.Struct, uint64(v.NumField()))
		for i := range v.NumField() {
			if t == backendType && t.Field(i).Name == "Endpoints" {
				continue // pushed, never rendered with the Lua balancer
			}
			if t == hopStateType && t.Field(i).Name == "shapes" {
				continue // derived from what Shapes and Names are
			}
			if !x.value(v.Field(i)) {
				return false
			}
		}
	default: // Func, Chan, UnsafePointer
		return false
	}
	return true
}
