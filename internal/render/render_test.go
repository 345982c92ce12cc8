package render

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/flavour"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/source/files"
)

var update = flag.Bool("update", false, "rewrite golden files from the current output")

var goldenParams = Params{StateDir: layout.Dir("/var/lib/causeway"), HTTPPort: 80, HTTPSPort: 443}

var goldenOpts = build.Options{
	Class:     class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"},
	ConfigMap: "causeway/causeway",
}

// TestGolden renders each testdata case and compares every file with
// testdata/CASE/golden. Run with -update to accept new output, then review
// the diff.
func TestGolden(t *testing.T) {
	for _, name := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			m, params := goldenCase(t, name)
			res, err := Render(m, params)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", name, "golden"), res.Files)
		})
	}
}

// goldenCases are the testdata cases built from manifests.
func goldenCases(t *testing.T) []string {
	t.Helper()
	cases, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cases {
		if _, err := os.Stat(filepath.Join("testdata", c.Name(), "input.yaml")); err == nil {
			out = append(out, c.Name()) // else a policy case, whose Model is built in Go
		}
	}
	return out
}

// goldenCase builds testdata case name's Model, and the Params it is
// rendered with, which its name selects.
func goldenCase(t *testing.T, name string) (*model.Model, Params) {
	t.Helper()
	snap, opts, params := goldenInput(t, name)
	m, _ := build.Build(snap, opts)
	if strings.HasPrefix(name, "lua") { // the Lua-balanced data plane
		params.Dynamic = &Dynamic{Modules: []string{"/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"}}
	}
	if strings.Contains(name, "metrics") { // either data plane
		params.Metrics = &goldenMetrics
	}
	return m, params
}

// goldenInput is testdata case name's snapshot, and the build Options
// and Params (but their data plane's) its name selects.
func goldenInput(t *testing.T, name string) (*source.Snapshot, build.Options, Params) {
	t.Helper()
	snap, err := files.Load(filepath.Join("testdata", name, "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	opts, params := goldenOpts, goldenParams
	if strings.Contains(name, "brotli") { // nginx has the brotli module
		opts.BrotliAvailable = true
		params.BrotliModule = "/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so"
	}
	if strings.HasPrefix(name, "lua") { // the build knows the Lua data plane serves
		opts.LuaAvailable = true
	}
	if strings.HasPrefix(name, "stream") { // TransportServers, nginx with the stream module
		opts.GlobalConfiguration, opts.StreamAvailable, opts.HTTPPort, opts.HTTPSPort = "causeway/listeners", true, 80, 443
		opts.TCPServices = "causeway/tcp-services" // ingress-nginx's, beside the TransportServers
		params.StreamModule = "/usr/lib/nginx/modules/ngx_stream_module.so"
	}
	if strings.HasPrefix(name, "passthrough") { // TLS passthrough, nginx with stream and stream realip
		opts.TLSPassthrough, opts.StreamAvailable, opts.StreamRealIPAvailable, opts.HTTPPort, opts.HTTPSPort = true, true, true, 80, 443
		params.StreamModule, params.StreamRealIP = "/usr/lib/nginx/modules/ngx_stream_module.so", true
	}
	if strings.HasPrefix(name, "passthrough-pass") { // a stream module with pass
		params.Flavour = flavour.Flavour{Name: flavour.Nginx, Version: []int{1, 26, 3}}
	}
	if strings.Contains(name, "modsecurity") { // nginx with ModSecurity and the CRS
		opts.ModSecurityAvailable, opts.CRSAvailable = true, true
		params.ModSecurity = &goldenModSecurity
	}
	return snap, opts, params
}

// goldenModSecurity is Debian's ModSecurity, with two of the CRS's files.
var goldenModSecurity = ModSecurity{Module: "/usr/lib/nginx/modules/ngx_http_modsecurity_module.so",
	CRS:            []string{"/usr/share/modsecurity-crs/rules/REQUEST-901-INITIALIZATION.conf", "/usr/share/modsecurity-crs/rules/REQUEST-942-APPLICATION-ATTACK-SQLI.conf"},
	UnicodeMapping: "/etc/nginx/unicode.mapping"}

func TestRenderIsDeterministic(t *testing.T) {
	snap, err := files.Load("testdata/basic/input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := build.Build(snap, goldenOpts)
	r1, _ := Render(m, goldenParams)
	first, v1 := r1.Files, r1.Version
	for i := 0; i < 10; i++ {
		r2, _ := Render(m, goldenParams)
		again, v2 := r2.Files, r2.Version
		if v1 != v2 || len(first) != len(again) {
			t.Fatal("render is not deterministic")
		}
		for n := range first {
			if string(first[n]) != string(again[n]) {
				t.Fatalf("%s differs between renders", n)
			}
		}
	}
}

func TestQuote(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"/plain/path", `"/plain/path"`, true},
		{`a"b`, `"a\"b"`, true},
		{`a\b`, `"a\\b"`, true},
		{`a;b{c}#d'e`, `"a;b{c}#d'e"`, true},
		{"ünïcödé", `"ünïcödé"`, true},
		{"$host", "", false},
		{"a\nb", "", false},
		{"a\rb", "", false},
		{"a\x00b", "", false},
		{"\xff", "", false},
		{strings.Repeat("a", 5000), "", false},
	} {
		got, err := Quote(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Quote(%q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestServerName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "_"},
		{"a.example.com", `"a.example.com"`},
		{"*.example.com", `"~^[^.]+\\.example\\.com\\z"`},
	} {
		if got, err := serverName(tc.in); err != nil || got != tc.want {
			t.Errorf("serverName(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"A.com", "a b.com", `a".com`, "a;b.com"} {
		if _, err := serverName(bad); err == nil {
			t.Errorf("serverName(%q) must fail", bad)
		}
	}
}
