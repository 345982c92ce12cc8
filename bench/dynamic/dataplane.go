package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/causeway/causeway/internal/flavour"
)

// debianModules is where Debian's nginx keeps its dynamic modules, which
// the hand-written configurations load.
const debianModules = "/usr/lib/nginx/modules"

// dataPlane is the binary under test (-binary, -modules-dir,
// -lua-package-path): Debian's nginx by default, or Angie built by
// `make angie`.
type dataPlane struct {
	binary, modules, luaPath string
	flavour                  flavour.Flavour
}

func (d dataPlane) other() bool { return d.binary != "nginx" }

// detect reads the binary's flavour.
func (d *dataPlane) detect(ctx context.Context) error {
	f, err := flavour.Detect(ctx, d.binary)
	if err != nil {
		return fmt.Errorf("-binary: %w", err)
	}
	d.flavour = f
	// nginx reads a relative path against its prefix, not our directory.
	d.modules, err = filepath.Abs(d.modules)
	return err
}

// controllerArgs select the data plane for a controller.
func (d dataPlane) controllerArgs() []string {
	if !d.other() {
		return nil
	}
	args := []string{"--nginx-binary", d.binary, "--nginx-modules-dir", d.modules}
	if d.luaPath != "" {
		args = append(args, "--lua-package-path", d.luaPath)
	}
	return args
}

// adapt rewrites a hand-written configuration, written for Debian's nginx,
// for this binary: its module directory, and its lua-resty-core first on
// the Lua path. Nothing else differs.
func (d dataPlane) adapt(conf string) error {
	data, err := os.ReadFile(conf)
	if err != nil {
		return err
	}
	s := strings.ReplaceAll(string(data), debianModules+"/", strings.TrimSuffix(d.modules, "/")+"/")
	if d.luaPath != "" && strings.Contains(s, "_by_lua") {
		s = strings.Replace(s, "\nhttp {\n", fmt.Sprintf("\nhttp {\n    lua_package_path %q;\n", d.luaPath), 1)
	}
	return os.WriteFile(conf, []byte(s), 0o644)
}
