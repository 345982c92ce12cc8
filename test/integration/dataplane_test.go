package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/causeway/causeway/internal/flavour"
	"github.com/causeway/causeway/internal/render"
)

// The data plane under test is Debian's nginx unless the environment names
// another: CAUSEWAY_NGINX (the binary), CAUSEWAY_NGINX_MODULES (its dynamic
// modules) and CAUSEWAY_LUA_PACKAGE_PATH (where its lua-resty-core is).
// `make test-integration-angie` runs this tier again with Angie built by
// hack/build-angie.sh. The same tests run on both; none is copied.
var dataPlane = struct {
	binary, modules, luaPath string
	// other is set when the environment chose the binary.
	other bool
}{
	binary:  envOr("CAUSEWAY_NGINX", "nginx"),
	modules: envOr("CAUSEWAY_NGINX_MODULES", "/usr/lib/nginx/modules"),
	luaPath: os.Getenv("CAUSEWAY_LUA_PACKAGE_PATH"),
	other:   os.Getenv("CAUSEWAY_NGINX") != "",
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// dataPlaneArgs are the controller flags that select the data plane under
// test; tests' own flags come after them and win.
func dataPlaneArgs() []string {
	if !dataPlane.other {
		return nil
	}
	args := []string{"--nginx-binary", dataPlane.binary, "--nginx-modules-dir", dataPlane.modules}
	if dataPlane.luaPath != "" {
		args = append(args, "--lua-package-path", dataPlane.luaPath)
	}
	return args
}

// dataPlaneFlavour is the flavour of the binary under test, as the
// controller detects it; TestMain sets it.
var dataPlaneFlavour flavour.Flavour

func detectDataPlane() error {
	var err error
	dataPlaneFlavour, err = flavour.Detect(context.Background(), dataPlane.binary)
	return err
}

// dataPlaneParams completes render parameters for the binary under test,
// as the controller does: its flavour, and on the Lua plane its modules
// and Lua package path.
func dataPlaneParams(p render.Params, lua bool) render.Params {
	p.Flavour = dataPlaneFlavour
	if lua {
		p.Dynamic = &render.Dynamic{Modules: []string{filepath.Join(dataPlane.modules, "ndk_http_module.so"),
			filepath.Join(dataPlane.modules, "ngx_http_lua_module.so")}, LuaPackagePath: dataPlane.luaPath}
	}
	return p
}

// optionalModule reports whether the data plane under test can load an
// optional module (brotli, headers-more). Debian's nginx must, under
// CAUSEWAY_REQUIRE_NGINX=1, since hack/install-deps.sh installs them; the
// vendored Angie build has the Lua module only, so there a missing one is
// reported and the test goes on without it.
func optionalModule(t *testing.T, file string) bool {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dataPlane.modules, file)); err == nil {
		return true
	}
	if !dataPlane.other && os.Getenv("CAUSEWAY_REQUIRE_NGINX") == "1" {
		t.Fatalf("nginx's %s is missing; run hack/install-deps.sh", file)
	}
	t.Logf("%s has no %s in %s: left out", dataPlane.binary, file, dataPlane.modules)
	return false
}

// requireModule skips a test whose subject is an optional module the data
// plane under test cannot load (see optionalModule).
func requireModule(t *testing.T, file string) {
	t.Helper()
	if !optionalModule(t, file) {
		t.Skipf("%s cannot load %s", dataPlane.binary, file)
	}
}

// serverProduct is what the data plane under test names itself in the
// Server header.
func serverProduct() string {
	if dataPlaneFlavour.Name == flavour.Angie {
		return "Angie"
	}
	return "nginx"
}
