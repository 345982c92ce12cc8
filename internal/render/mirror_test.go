package render

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
)

var luaParams = func() Params {
	p := goldenParams
	p.Dynamic = &Dynamic{Modules: []string{"/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"}}
	return p
}()

// toBackend is a mirror of pct% of the requests to backend key.
func toBackend(key string, pct int) model.Mirror {
	return model.Mirror{Backend: key, RequestBody: true, Percent: pct}
}

// mirrorModel has locations mirroring to backends: one mirror, two,
// two of 20%, one of 35% with request headers of the location's own, and
// one to a backend without endpoints (which plain mode answers itself).
func mirrorModel() *model.Model {
	headers := &model.Snippet{ProxySetHeaders: []model.TemplateHeader{{Name: "X-Header-Set", Value: model.Template{{Literal: "set"}}}}}
	m := policyModel(&model.Server{Host: "mirror.example.com", Locations: []*model.Location{
		loc(model.Prefix, "/", &model.Policy{Mirrors: []model.Mirror{toBackend("shop/shadow/80", 100)}}),
		loc(model.Prefix, "/two", &model.Policy{Mirrors: []model.Mirror{toBackend("shop/shadow/80", 100), toBackend("shop/errors/80", 100)}}),
		loc(model.Prefix, "/some", &model.Policy{Mirrors: []model.Mirror{toBackend("shop/shadow/80", 20), toBackend("shop/errors/80", 20)}}),
		loc(model.Prefix, "/headers", &model.Policy{Snippet: headers, Mirrors: []model.Mirror{toBackend("shop/shadow/80", 35)}}),
		loc(model.Prefix, "/idle", &model.Policy{Mirrors: []model.Mirror{toBackend("shop/idle/80", 100)}}),
		// The same mirror as "/": the same internal location.
		loc(model.Exact, "/again", &model.Policy{Mirrors: []model.Mirror{toBackend("shop/shadow/80", 100)}}),
	}})
	idle := testBackend("shop", "idle", "80", "")
	idle.Endpoints = nil
	m.Backends = append(m.Backends, testBackend("shop", "shadow", "80", "10.0.0.5"), idle)
	return m
}

func TestMirrorGolden(t *testing.T) {
	for dir, p := range map[string]Params{"mirror-backends": goldenParams, "lua-mirror-backends": luaParams} {
		t.Run(dir, func(t *testing.T) {
			out, err := Render(mirrorModel(), p)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", dir, "golden"), out.Files)
		})
	}
}

// TestMirrorShapes: servers differing only in their mirror's backend do
// not share a file (its key is in the internal location, not in a map
// per host); servers with the same mirror do.
func TestMirrorShapes(t *testing.T) {
	srv := func(host, mirror string) *model.Server {
		return &model.Server{Host: host, Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{Mirrors: []model.Mirror{toBackend(mirror, 100)}})}}
	}
	m := policyModel(srv("a.mirror.test", "shop/shadow/80"), srv("b.mirror.test", "shop/shadow/80"), srv("c.mirror.test", "shop/errors/80"))
	m.Backends = append(m.Backends, testBackend("shop", "shadow", "80", "10.0.0.5"))
	out, err := Render(m, luaParams)
	if err != nil {
		t.Fatal(err)
	}
	var shared, own []string
	for _, name := range out.Files.Names() {
		text := string(out.Files[name])
		if !strings.Contains(text, "mirror.test") || name == layout.MapsFile {
			continue // the merged maps name every shared host
		}
		if strings.Contains(text, "a.mirror.test") && strings.Contains(text, "b.mirror.test") {
			shared = append(shared, name)
		} else {
			own = append(own, name)
		}
		a, c := strings.Contains(text, "a.mirror.test"), strings.Contains(text, "c.mirror.test")
		switch {
		case a && c:
			t.Fatalf("%s serves a.mirror.test and c.mirror.test, whose mirrors differ:\n%s", name, text)
		case a && !strings.Contains(text, `set $causeway_mirror_backend "shop/shadow/80";`):
			t.Errorf("%s: a.mirror.test's mirror is not shop/shadow/80:\n%s", name, text)
		case c && !strings.Contains(text, `set $causeway_mirror_backend "shop/errors/80";`):
			t.Errorf("%s: c.mirror.test's mirror is not shop/errors/80:\n%s", name, text)
		}
	}
	if len(shared) != 1 || len(own) != 1 || own[0] != layout.ServerFile("c.mirror.test") {
		t.Fatalf("shared %q, own %q: want a and b in one file, c in its own", shared, own)
	}
}

// TestMirrorRefused: mirrors render cannot print as asked are errors.
func TestMirrorRefused(t *testing.T) {
	for name, pol := range map[string]*model.Policy{
		"percent 0":            {Mirrors: []model.Mirror{toBackend("shop/shadow/80", 0)}},
		"percent 101":          {Mirrors: []model.Mirror{toBackend("shop/shadow/80", 101)}},
		"URL and backend":      {Mirrors: []model.Mirror{{URL: "http://10.0.0.9/m", Backend: "shop/shadow/80", Percent: 100}}},
		"neither":              {Mirrors: []model.Mirror{{Percent: 100}}},
		"host of a backend":    {Mirrors: []model.Mirror{{Backend: "shop/shadow/80", Host: "x.test", Percent: 100}}},
		"backend key":          {Mirrors: []model.Mirror{toBackend(`shop/a"b/80`, 100)}},
		"body and no body":     {Mirrors: []model.Mirror{toBackend("shop/shadow/80", 100), {Backend: "shop/errors/80", Percent: 100}}},
		"from a gRPC location": {Protocol: model.ProtocolGRPC, Mirrors: []model.Mirror{toBackend("shop/shadow/80", 100)}},
		"too many":             {Mirrors: make([]model.Mirror, model.MaxMirrors+1)},
	} {
		for plane, p := range map[string]Params{"plain": goldenParams, "lua": luaParams} {
			t.Run(name+"/"+plane, func(t *testing.T) {
				m := policyModel(&model.Server{Host: "mirror.example.com", Locations: []*model.Location{loc(model.Prefix, "/", pol)}})
				m.Backends = append(m.Backends, testBackend("shop", "shadow", "80", "10.0.0.5"))
				if _, err := Render(m, p); err == nil {
					t.Fatal("rendered, want an error")
				}
			})
		}
	}
}
