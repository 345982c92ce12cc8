package render

import (
	"hash/maphash"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	digestpkg "github.com/causeway/causeway/internal/digest"
	"github.com/causeway/causeway/internal/model"
)

// changeEndpoints returns m with every backend's endpoints changed: one
// moved to another port, one added, and every third backend left with
// none. m itself is not changed.
func changeEndpoints(m *model.Model) *model.Model {
	c := *m
	c.Backends = make([]*model.Backend, len(m.Backends))
	for i, b := range m.Backends {
		nb := *b
		nb.Endpoints = nil
		if i%3 != 2 {
			for _, e := range b.Endpoints {
				e.Port++
				nb.Endpoints = append(nb.Endpoints, e)
			}
			nb.Endpoints = append(nb.Endpoints, model.Endpoint{Address: "10.99.0.1", Port: 8080})
		}
		c.Backends[i] = &nb
	}
	return &c
}

// TestLuaOutputIgnoresEndpoints: with the Lua balancer, no rendered file
// depends on backends' endpoints, gone or changed, in any golden case.
// Memo relies on it.
func TestLuaOutputIgnoresEndpoints(t *testing.T) {
	type luaCase struct {
		name string
		m    *model.Model
		p    Params
	}
	var cases []luaCase
	for _, name := range goldenCases(t) {
		if m, p := goldenCase(t, name); p.Dynamic != nil {
			cases = append(cases, luaCase{name, m, p})
		}
	}
	for _, c := range policyCases {
		if slices.Contains(c.planes, "lua") {
			p := goldenParams
			p.Dynamic = &Dynamic{Modules: []string{"/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"}}
			cases = append(cases, luaCase{"lua-policy-" + c.name, c.model(), p})
		}
	}
	if len(cases) < 20 {
		t.Fatalf("%d Lua cases, want the golden ones", len(cases))
	}
	for _, c := range cases {
		name, m, p := c.name, c.m, c.p
		before, err := Render(m, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		after, err := Render(changeEndpoints(m), p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(before, after) {
			for _, f := range before.Files.Names() {
				if string(before.Files[f]) != string(after.Files[f]) {
					t.Errorf("%s: %s changes with the endpoints", name, f)
				}
			}
			t.Errorf("%s: the output changes with the endpoints", name)
		}
	}
}

// TestMemo: the memo renders again for any change but endpoints, and
// never keeps anything without the Lua balancer.
func TestMemo(t *testing.T) {
	m, p := goldenCase(t, "lua-metrics")
	if p.Dynamic == nil || len(m.Backends) == 0 {
		t.Fatal("lua-metrics: want the Lua data plane and backends")
	}
	var mm Memo
	first, err := mm.Render(m, p)
	if err != nil {
		t.Fatal(err)
	}
	files := maps.Clone(first.Files)
	first.Files["extra"] = []byte("the caller's own map")

	// Endpoints only: the same output, the same version, a map of its own.
	again, err := mm.Render(changeEndpoints(m), p)
	if err != nil {
		t.Fatal(err)
	}
	if again.Version != first.Version || !reflect.DeepEqual(again.Files, files) {
		t.Fatal("an endpoint change rendered different files")
	}
	if !again.Memoized || first.Memoized {
		t.Error("an endpoint change rendered again instead of using the memo")
	}
	if len(first.Series) == 0 || again.Series != nil {
		t.Errorf("the render gave %d series, the memo's output again %d: want some, then none (the collector has them)", len(first.Series), len(again.Series))
	}

	// Anything else renders again: a host, a backend's method, the params.
	host := *m
	host.Servers = append([]*model.Server(nil), m.Servers...)
	srv := *host.Servers[len(host.Servers)-1]
	srv.Host = "other.example.com"
	host.Servers[len(host.Servers)-1] = &srv
	lb := changeEndpoints(m)
	b := *lb.Backends[0]
	b.Balance.Method = "ewma"
	lb.Backends[0] = &b
	users := p
	users.User = "nobody"
	for _, tc := range []struct {
		what string
		m    *model.Model
		p    Params
	}{{"a host", &host, p}, {"a backend's method", lb, p}, {"the worker user", m, users}} {
		want, err := Render(tc.m, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := mm.Render(tc.m, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the memo's output differs from Render's", tc.what)
		}
		if got.Version == first.Version {
			t.Errorf("%s: the version did not change", tc.what)
		}
	}

	// A stream server's endpoints are in its file, Lua balancer or not.
	sm, sp := goldenCase(t, "stream")
	sp.Dynamic = p.Dynamic
	if len(sm.Streams) == 0 {
		t.Fatal("stream: want stream servers")
	}
	if _, err := mm.Render(sm, sp); err != nil {
		t.Fatal(err)
	}
	moved := *sm
	moved.Streams = append([]*model.StreamServer(nil), sm.Streams...)
	st := *moved.Streams[0]
	st.Endpoints = append(slices.Clone(st.Endpoints), model.Endpoint{Address: "10.99.0.2", Port: 9000})
	moved.Streams[0] = &st
	want, err := Render(&moved, sp)
	if err != nil {
		t.Fatal(err)
	}
	got, err := mm.Render(&moved, sp)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || !strings.Contains(strings.Join(fileTexts(got.Files), ""), "10.99.0.2") {
		t.Error("a stream server's new endpoint was not rendered")
	}

	// Plain upstreams hold the endpoints: always rendered.
	plain := p
	plain.Dynamic = nil
	if _, err := mm.Render(m, plain); err != nil {
		t.Fatal(err)
	}
	plainOut, err := mm.Render(changeEndpoints(m), plain)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(plainOut.Files["upstreams.conf"]), "10.99.0.1") {
		t.Error("plain upstreams kept the old endpoints")
	}
}

// fileTexts are the contents of files, in name order.
func fileTexts(files Files) []string {
	var out []string
	for _, n := range files.Names() {
		out = append(out, string(files[n]))
	}
	return out
}

// TestDigestSkipsEndpoints: the memo's digest (package digest's, which
// TestTellsValuesApart there covers) leaves out a backend's endpoints, and
// only those: a stream server's are in the files.
func TestDigestSkipsEndpoints(t *testing.T) {
	seed := maphash.MakeSeed()
	sum := func(v any) uint64 {
		t.Helper()
		x := digestpkg.Hasher{Skip: skipField}
		x.SetSeed(seed)
		if !x.Add(v) {
			t.Fatalf("%#v: not hashable", v)
		}
		return x.Sum64()
	}
	for _, tc := range []struct{ a, b any }{
		{model.Backend{Key: "a"}, model.Backend{Key: "b"}},
		{model.StreamServer{Endpoints: []model.Endpoint{{Port: 1}}}, model.StreamServer{Endpoints: []model.Endpoint{{Port: 2}}}},
	} {
		if sum(tc.a) == sum(tc.b) {
			t.Errorf("%#v and %#v hash alike", tc.a, tc.b)
		}
	}
	if sum(model.Backend{Key: "a", Endpoints: []model.Endpoint{{Port: 1}}}) != sum(model.Backend{Key: "a"}) {
		t.Error("a backend's endpoints are hashed")
	}
}
