package balancer

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// luaFiles holds the Lua modules; paths start with "lua/causeway/".
//
//go:embed lua/causeway/*.lua lua/causeway/method/*.lua
var luaFiles embed.FS

// LuaFS returns the embedded Lua modules, rooted so that module
// "causeway.store" is the file "causeway/store.lua".
func LuaFS() fs.FS {
	sub, err := fs.Sub(luaFiles, "lua")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory exists
	}
	return sub
}

// WriteLua installs the embedded Lua modules under dir (as dir/causeway/…),
// the directory named in lua_package_path. Each file is written to a
// temporary name and renamed into place, so nginx starting or reloading
// concurrently reads either the old or the new file, never a torn one.
// Files are 0644 and directories 0755 because nginx workers run as an
// unprivileged user. Unchanged files are left alone, and .lua files under
// dir/causeway that this build does not ship are removed. nginx loads the
// modules at start and on reload, so call WriteLua before either.
func WriteLua(dir string) error {
	want := map[string]bool{}
	src := LuaFS()
	err := fs.WalkDir(src, "causeway", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if d.IsDir() {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			return os.Chmod(dst, 0o755)
		}
		want[dst] = true
		data, err := fs.ReadFile(src, name)
		if err != nil {
			return err
		}
		return writeIfChanged(dst, data)
	})
	if err != nil {
		return fmt.Errorf("write lua modules to %s: %w", dir, err)
	}
	root := filepath.Join(dir, "causeway")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".lua") && !want[path] {
			return os.Remove(path)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove stale lua modules in %s: %w", root, err)
	}
	return nil
}

func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() == 0o644 {
			return nil
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
