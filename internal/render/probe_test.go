package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbeConfigGolden: every probe the runtime runs, as nginx -t reads it.
func TestProbeConfigGolden(t *testing.T) {
	dir := "/var/lib/causeway/tmp/probe"
	var got strings.Builder
	for _, tc := range []struct {
		name string
		p    Probe
	}{
		{"load", Probe{Dir: dir, Check: ProbeLoad, Modules: []string{"/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so"}}},
		{"stream compiled in", Probe{Dir: dir, Check: ProbeStream}},
		{"stream realip", Probe{Dir: dir, Check: ProbeStreamRealIP, Modules: []string{"/usr/lib/nginx/modules/ngx_stream_module.so"}}},
		{"gunzip", Probe{Dir: dir, Check: ProbeGunzip}},
		{"lua", Probe{Dir: dir, Check: ProbeLua, LuaPackagePath: "/opt/angie/lualib/?.lua;;",
			Modules: []string{"/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"}}},
		{"certificates", Probe{Dir: dir, Check: ProbeCertificates, Certificates: []string{"/var/lib/causeway/secrets/a/b.pem", "/var/lib/causeway/secrets/c/d.pem"}}},
		{"no certificates", Probe{Dir: dir, Check: ProbeCertificates}},
	} {
		out, err := ProbeConfig(tc.p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got.WriteString("# " + tc.name + "\n")
		got.Write(out)
	}
	golden := filepath.Join("testdata", "probes.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got.String() != string(want) {
		t.Errorf("probes differ from %s (go test -update rewrites it)\n got:\n%s", golden, got.String())
	}
}

// TestProbeConfigRefusesUnsafeValues: what would change the
// configuration's meaning is refused, not printed.
func TestProbeConfigRefusesUnsafeValues(t *testing.T) {
	for name, p := range map[string]Probe{
		"relative dir":      {Dir: "tmp/probe"},
		"dir with $":        {Dir: "/tmp/$probe"},
		"module with $":     {Dir: "/tmp", Modules: []string{"/m/$x.so"}},
		"module with \\n":   {Dir: "/tmp", Modules: []string{"/m/x.so\nuser root"}},
		"certificate $":     {Dir: "/tmp", Check: ProbeCertificates, Certificates: []string{"/s/$a.pem"}},
		"lua path relative": {Dir: "/tmp", Check: ProbeLua, LuaPackagePath: "lib/?.lua"},
		"lua path quote":    {Dir: "/tmp", Check: ProbeLua, LuaPackagePath: `/lib/?.lua";`},
	} {
		if out, err := ProbeConfig(p); err == nil {
			t.Errorf("%s: accepted:\n%s", name, out)
		}
	}
}
