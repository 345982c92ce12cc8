package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNginxSnippetsGolden(t *testing.T) {
	s, err := NginxSnippets(SnippetOptions{LuaDir: "/var/lib/causeway/lua/", SocketPath: "/run/causeway/dynamic.sock", UnavailableSocket: "/run/causeway/unavailable.sock",
		NoLiveSocket: "/run/causeway/nolive.sock"})
	if err != nil {
		t.Fatal(err)
	}
	set, err := BackendDirective("default/web/80")
	if err != nil {
		t.Fatal(err)
	}
	got := "# http\n" + s.HTTP + "# upstream\n" + s.Upstream + "# location\n" + set + s.Location + "# dynamic server\n" + s.DynamicServer + "# unavailable server\n" + s.UnavailableServer
	golden := filepath.Join("testdata", "lua-snippets.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("snippets differ from %s (go test -update rewrites it)\n got:\n%s", golden, got)
	}
}

func TestNginxSnippetsRejectUnsafeOptions(t *testing.T) {
	ok := SnippetOptions{LuaDir: "/lua", SocketPath: "/run/d.sock", UnavailableSocket: "/run/u.sock", NoLiveSocket: "/run/n.sock"}
	tests := []struct {
		name string
		mod  func(*SnippetOptions)
	}{
		{"relative lua dir", func(o *SnippetOptions) { o.LuaDir = "lua" }},
		{"lua dir with ;", func(o *SnippetOptions) { o.LuaDir = "/a;b" }},
		{"lua dir with ?", func(o *SnippetOptions) { o.LuaDir = "/a?" }},
		{"lua dir with quote", func(o *SnippetOptions) { o.LuaDir = `/a"` }},
		{"socket empty", func(o *SnippetOptions) { o.SocketPath = "" }},
		{"socket with space", func(o *SnippetOptions) { o.SocketPath = "/a b.sock" }},
		{"socket with brace", func(o *SnippetOptions) { o.SocketPath = "/a}.sock" }},
		{"socket too long", func(o *SnippetOptions) { o.SocketPath = "/" + strings.Repeat("s", 107) }},
		{"unavailable socket empty", func(o *SnippetOptions) { o.UnavailableSocket = "" }},
		{"unavailable socket relative", func(o *SnippetOptions) { o.UnavailableSocket = "u.sock" }},
		{"unavailable socket with quote", func(o *SnippetOptions) { o.UnavailableSocket = `/u".sock` }},
		{"no-live socket empty", func(o *SnippetOptions) { o.NoLiveSocket = "" }},
		{"no-live socket with brace", func(o *SnippetOptions) { o.NoLiveSocket = "/n}.sock" }},
		{"dict size", func(o *SnippetOptions) { o.StateDictSize = "32 m" }},
		{"body size", func(o *SnippetOptions) { o.MaxBodySize = "1g;" }},
		{"timeout", func(o *SnippetOptions) { o.KeepaliveTimeout = "60s; evil" }},
		{"keepalive negative", func(o *SnippetOptions) { o.Keepalive = -1 }},
	}
	if _, err := NginxSnippets(ok); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	for _, tc := range tests {
		o := ok
		tc.mod(&o)
		if _, err := NginxSnippets(o); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func TestBackendDirective(t *testing.T) {
	got, err := BackendDirective("ns/svc/http")
	if err != nil || got != "set $causeway_backend \"ns/svc/http\";\n" {
		t.Errorf("got %q, %v", got, err)
	}
	for _, bad := range []string{"", `a"b`, "a$b", "a b", "a;b", "a{b", `a\b`} {
		if _, err := BackendDirective(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
