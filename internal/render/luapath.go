package render

import (
	"errors"
	"fmt"
	"strings"
)

// DefaultLuaPackagePath is the search path Causeway's Lua modules find
// their dependencies in when --lua-package-path is not given: ";;", LuaJIT's
// default path, which holds Debian's lua-resty-core and lua-resty-lrucache
// (/usr/share/lua/5.1).
const DefaultLuaPackagePath = ";;"

// maxLuaPackagePath bounds the flag's value.
const maxLuaPackagePath = 1024

// ParseLuaPackagePath validates the value of --lua-package-path: Lua
// search templates separated by ";", each an absolute path holding a "?"
// (such as /opt/angie/lualib/?.lua), optionally ending with ";;" (LuaJIT's
// default path after them), or ";;" alone. Paths are limited to letters,
// digits and "/._-+?", so the value needs no quoting in the configuration.
// It returns the value in the form lua_package_path takes it after
// Causeway's own directory.
func ParseLuaPackagePath(s string) (string, error) {
	if s == "" || s == DefaultLuaPackagePath {
		return DefaultLuaPackagePath, nil
	}
	if len(s) > maxLuaPackagePath {
		return "", fmt.Errorf("longer than %d bytes", maxLuaPackagePath)
	}
	body, withDefault := strings.CutSuffix(s, ";;")
	for _, t := range strings.Split(body, ";") {
		if err := checkLuaTemplate(t); err != nil {
			return "", fmt.Errorf("%q: %w", t, err)
		}
	}
	if withDefault {
		return body + ";;", nil
	}
	return body, nil
}

func checkLuaTemplate(t string) error {
	switch {
	case t == "":
		return errors.New("an empty template (\";;\" may only end the value)")
	case !strings.HasPrefix(t, "/"):
		return errors.New("not an absolute path")
	case !strings.Contains(t, "?"):
		return errors.New("no \"?\" for the module name")
	case strings.Contains(t, "/../") || strings.HasSuffix(t, "/.."):
		return errors.New("a \"..\" element")
	}
	for _, c := range t {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-+?", c)
		if !ok {
			return fmt.Errorf("character %q is not allowed", c)
		}
	}
	return nil
}

// luaPackagePath is lua_package_path's value: Causeway's module directory
// first, then the validated extra path.
func luaPackagePath(luaDir, extra string) string {
	if extra == "" {
		extra = DefaultLuaPackagePath
	}
	if strings.HasPrefix(extra, ";") {
		return luaDir + "/?.lua" + extra
	}
	return luaDir + "/?.lua;" + extra
}
