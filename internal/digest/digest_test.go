package digest

import (
	"hash/maphash"
	"maps"
	"reflect"
	"strconv"
	"testing"
)

func sum(t *testing.T, seed maphash.Seed, skip func(reflect.Type, int) bool, v any) uint64 {
	t.Helper()
	x := Hasher{Skip: skip}
	x.SetSeed(seed)
	if !x.Add(v) {
		t.Fatalf("%#v: not hashable", v)
	}
	return x.Sum64()
}

// TestTellsValuesApart: values that differ hash differently, however their
// parts are cut, and a map hashes the same in any order.
func TestTellsValuesApart(t *testing.T) {
	seed := maphash.MakeSeed()
	type pair struct{ A, B string }
	s := "x"
	for _, tc := range []struct{ a, b any }{
		{[]string{"ab", "c"}, []string{"a", "bc"}},
		{pair{"ab", ""}, pair{"a", "b"}},
		{(*string)(nil), &s},
		{[]string{}, []string{""}},
		{int64(1), uint64(1)},
		{map[string]int{"a": 1}, map[string]int{"a": 2}},
		{[]any{"1"}, []any{1}},
		{[2]int{1, 2}, [2]int{2, 1}},
		{[]string(nil), []string{}},
		{map[string]int(nil), map[string]int{}},
		{[]byte(nil), []byte{}},
		{struct{ A, B []int }{nil, []int{}}, struct{ A, B []int }{[]int{}, nil}},
	} {
		if sum(t, seed, nil, tc.a) == sum(t, seed, nil, tc.b) {
			t.Errorf("%#v and %#v hash alike", tc.a, tc.b)
		}
	}
	m := map[string]int{}
	for i := range 100 {
		m[strconv.Itoa(i)] = i
	}
	if sum(t, seed, nil, m) != sum(t, seed, nil, maps.Clone(m)) {
		t.Error("a map's digest depends on its order")
	}
	if new(Hasher).Add(struct{ F func() }{func() {}}) {
		t.Error("a func was hashed")
	}
}

// TestEqualValuesHashAlike: values reflect.DeepEqual finds equal, built
// apart (other pointers, other map orders), have one digest; Skip leaves
// its fields out and no other.
func TestEqualValuesHashAlike(t *testing.T) {
	seed := maphash.MakeSeed()
	type inner struct {
		N []int
		M map[string]*int
	}
	type outer struct {
		S    string
		P    *inner
		Skip int
	}
	one, two := 1, 1
	a := outer{S: "s", P: &inner{N: []int{1, 2}, M: map[string]*int{"a": &one, "b": nil}}, Skip: 1}
	b := outer{S: "s", P: &inner{N: []int{1, 2}, M: map[string]*int{"b": nil, "a": &two}}, Skip: 1}
	if !reflect.DeepEqual(a, b) || sum(t, seed, nil, a) != sum(t, seed, nil, b) {
		t.Error("equal values hash differently")
	}
	skip := func(t reflect.Type, i int) bool { return t.Field(i).Name == "Skip" }
	b.Skip = 2
	if sum(t, seed, skip, a) != sum(t, seed, skip, b) {
		t.Error("a skipped field is hashed")
	}
	if sum(t, seed, nil, a) == sum(t, seed, nil, b) {
		t.Error("a field is left out without Skip")
	}
	b.P.N[1] = 3
	if sum(t, seed, skip, a) == sum(t, seed, skip, b) {
		t.Error("Skip left out more than its field")
	}
}
