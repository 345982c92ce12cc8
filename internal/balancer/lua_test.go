package balancer

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteLua(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "causeway", "method", "old.lua")
	os.MkdirAll(filepath.Dir(stale), 0o700)
	os.WriteFile(stale, []byte("-- from an older build"), 0o600)
	other := filepath.Join(dir, "unrelated.lua")
	os.WriteFile(other, []byte("-- not ours"), 0o600)

	if err := WriteLua(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"balancer", "api", "store", "validate", "json", "stats", "peers", "backend",
		"vars", "method/round_robin", "method/least_conn", "method/ewma", "method/p2c", "method/chash", "method/sticky"} {
		p := filepath.Join(dir, "causeway", filepath.FromSlash(name)+".lua")
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("module %s: %v", name, err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", p, fi.Mode().Perm())
		}
	}
	for _, d := range []string{"causeway", "causeway/method"} {
		if fi, _ := os.Stat(filepath.Join(dir, d)); fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v, want 0755", d, fi.Mode().Perm())
		}
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale module not removed: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("file outside causeway/ touched: %v", err)
	}
	// Unchanged files are not rewritten; leftovers of a temp file are not left.
	p := filepath.Join(dir, "causeway", "store.lua")
	before, _ := os.Stat(p)
	if err := WriteLua(dir); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(p)
	if !before.ModTime().Equal(after.ModTime()) || !os.SameFile(before, after) {
		t.Errorf("unchanged module rewritten")
	}
	// A modified file is put back.
	os.WriteFile(p, []byte("broken"), 0o644)
	if err := WriteLua(dir); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(p); string(data) == "broken" {
		t.Errorf("modified module not restored")
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, "causeway", ".tmp-*"))
	if len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}
