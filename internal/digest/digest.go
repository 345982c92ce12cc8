// Package digest hashes Go values by what they hold, not where they are:
// two values that reflect.DeepEqual finds equal have one digest (NaN
// floats and cyclic values aside, which no caller passes), and values it
// tells apart, a nil slice or map from an empty one included, differ in
// all but a chance collision. It is
// maphash's, 64 bits under a seed the caller draws: no one can aim at a
// collision, and a caller that must not be wrong on a chance one confirms
// equality itself.
package digest

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"reflect"
	"slices"
)

// Hasher writes values to its hash unambiguously: every value with its
// kind, every string, slice and map with its length, map entries in an
// order of their own (each hashed alone, the sums sorted), and nothing of
// the struct fields Skip names.
type Hasher struct {
	// Skip, when set, leaves field i of struct type t out.
	Skip func(t reflect.Type, i int) bool
	h    maphash.Hash
	buf  [9]byte
}

// SetSeed starts the hash again under seed.
func (x *Hasher) SetSeed(seed maphash.Seed) { x.h.SetSeed(seed) }

// Sum64 is the digest of what was added.
func (x *Hasher) Sum64() uint64 { return x.h.Sum64() }

// Add hashes v; false when v holds what cannot be hashed (a func, a
// channel, an unsafe pointer).
func (x *Hasher) Add(v any) bool { return x.value(reflect.ValueOf(v)) }

func (x *Hasher) word(kind reflect.Kind, v uint64) {
	x.buf[0] = byte(kind)
	binary.LittleEndian.PutUint64(x.buf[1:], v)
	x.h.Write(x.buf[:])
}

func (x *Hasher) value(v reflect.Value) bool {
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
		if v.Kind() == reflect.Slice && v.IsNil() {
			x.word(reflect.Invalid, 0) // not an empty slice: code may tell them apart
			return true
		}
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
		if v.IsNil() {
			x.word(reflect.Invalid, 0) // not an empty map, as a slice
			return true
		}
		x.word(reflect.Map, uint64(v.Len()))
		entries := make([]uint64, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			e := Hasher{Skip: x.Skip}
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
			if x.Skip != nil && x.Skip(t, i) {
				continue
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
