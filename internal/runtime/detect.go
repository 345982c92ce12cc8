package runtime

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/render"
)

// probeHTTP goes first in the http block of every throw-away
// configuration: the access log is off, so that no binary opens its
// compiled-in default log (Angie's is relative to the prefix, which a probe
// directory does not have).
const probeHTTP = "access_log off;"

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
	probeDir := dir.Path("tmp", "lua-probe")
	if err := os.MkdirAll(probeDir, 0o700); err != nil {
		return nil, err
	}
	var conf strings.Builder
	for _, m := range mods {
		q, err := render.Quote(m)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&conf, "load_module %s;\n", q)
	}
	pid, err := render.Quote(filepath.Join(probeDir, "nginx.pid"))
	if err != nil {
		return nil, err
	}
	path, err := render.ParseLuaPackagePath(packagePath)
	if err != nil {
		return nil, err
	}
	sock, err := render.Quote("unix:" + filepath.Join(probeDir, "probe.sock"))
	if err != nil {
		return nil, err
	}
	// The servers' X-Request-ID (render/requestid.go) needs set_by_lua,
	// which the Lua module has only when built with the NDK; -t binds
	// no socket.
	fmt.Fprintf(&conf, "pid %s;\nerror_log stderr;\nevents {}\nhttp {\n  %s\n  lua_package_path \"%s\";\n  lua_shared_dict causeway_probe 64k;\n"+
		"  init_by_lua_block { require(\"resty.core\"); require(\"ngx.balancer\") }\n"+
		"  map $host $causeway_probe { default \"\"; }\n"+
		"  server {\n    listen %s;\n    set_by_lua_block $causeway_probe { return \"x\" }\n  }\n}\n", pid, probeHTTP, path, sock)
	confPath := filepath.Join(probeDir, "nginx.conf")
	if err := writeAtomic(confPath, []byte(conf.String()), 0o600); err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, binary, "-p", probeDir+"/", "-e", "stderr", "-c", confPath, "-t", "-q").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("nginx cannot run the Lua balancer: %s", strings.TrimSpace(string(out)))
	}
	return mods, nil
}
