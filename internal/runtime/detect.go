package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/render"
)

// LuaModules are the dynamic modules the Lua data plane loads, in order.
var luaModules = []string{"ndk_http_module.so", "ngx_http_lua_module.so"}

// DetectLua reports the module files to load for the Lua data plane, or an
// error saying why it cannot run here. It does not trust file presence
// alone: it has nginx load the modules, create a shared dict, require
// lua-resty-core and accept a server-level set_by_lua_block in a
// throw-away configuration, which is exactly what the real configuration
// needs, with lua_package_path set to packagePath (a
// value render.ParseLuaPackagePath returned).
func DetectLua(ctx context.Context, binary, modulesDir, packagePath string, dir layout.Dir) ([]string, error) {
	var mods []string
	for _, m := range luaModules {
		p := filepath.Join(modulesDir, m)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("module %s not found (install libnginx-mod-http-lua)", p)
		}
		mods = append(mods, p)
	}
	probe := render.Probe{Dir: dir.Path("tmp", "lua-probe"), Check: render.ProbeLua, Modules: mods, LuaPackagePath: packagePath}
	if err := runProbe(ctx, binary, probe); err != nil {
		return nil, refusal(err, "nginx cannot run the Lua balancer")
	}
	return mods, nil
}
