package render

import (
	"strings"
	"testing"
)

func TestParseLuaPackagePath(t *testing.T) {
	for _, tc := range []struct{ in, want, rendered string }{
		{"", ";;", "/s/lua/?.lua;;"},
		{";;", ";;", "/s/lua/?.lua;;"},
		{"/opt/angie/lualib/?.lua;;", "/opt/angie/lualib/?.lua;;", "/s/lua/?.lua;/opt/angie/lualib/?.lua;;"},
		{"/opt/angie/lualib/?.lua", "/opt/angie/lualib/?.lua", "/s/lua/?.lua;/opt/angie/lualib/?.lua"},
		{"/a/?.lua;/b/?/init.lua;;", "/a/?.lua;/b/?/init.lua;;", "/s/lua/?.lua;/a/?.lua;/b/?/init.lua;;"},
		{"/work/.cache/angie/lualib/?.lua;;", "/work/.cache/angie/lualib/?.lua;;", "/s/lua/?.lua;/work/.cache/angie/lualib/?.lua;;"},
	} {
		got, err := ParseLuaPackagePath(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
			continue
		}
		if r := luaPackagePath("/s/lua", got); r != tc.rendered {
			t.Errorf("%q renders %q, want %q", tc.in, r, tc.rendered)
		}
	}
}

func TestParseLuaPackagePathRefuses(t *testing.T) {
	for _, in := range []string{
		"relative/?.lua",
		"/no/question/mark.lua",
		"/a/?.lua;;/b/?.lua",
		";;;",
		"/a/?.lua;;;",
		";/a/?.lua",
		"/a/../etc/?.lua",
		`/a/?.lua"; load_module /x.so; #`,
		"/a/$prefix/?.lua",
		"/a b/?.lua",
		"/a/?.lua\n",
		"/a/{?}.lua",
		"/" + strings.Repeat("a", 1100) + "/?.lua",
	} {
		if got, err := ParseLuaPackagePath(in); err == nil {
			t.Errorf("%q: accepted as %q", in, got)
		}
	}
}

// FuzzParseLuaPackagePath: whatever is accepted is safe to place between
// double quotes in the configuration, unescaped.
func FuzzParseLuaPackagePath(f *testing.F) {
	for _, s := range []string{"", ";;", "/a/?.lua;;", "/a/?.lua;/b/?.lua", `/a/?.lua";`, "/a/$x/?.lua"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseLuaPackagePath(s)
		if err != nil {
			return
		}
		if strings.ContainsAny(got, "\"'\\$ \t\r\n{}#") {
			t.Fatalf("%q accepted as %q", s, got)
		}
		if q, err := Quote(luaPackagePath("/s/lua", got)); err != nil || q != `"`+luaPackagePath("/s/lua", got)+`"` {
			t.Fatalf("%q: quoting changes it: %s, %v", got, q, err)
		}
	})
}
