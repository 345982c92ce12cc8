// Package runtime is the only stage with side effects: it writes the
// rendered files, tests and reloads nginx, verifies the new configuration
// is live, rolls back when it is not, and keeps the nginx process alive.
package runtime

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/render"
)

// modeFor gives secrets 0600 and everything else 0644.
func modeFor(rel string) os.FileMode {
	if strings.HasPrefix(rel, layout.SecretsDir+string(filepath.Separator)) {
		return 0o600
	}
	return 0o644
}

// writeAtomic writes data to path through a temporary file in the same
// directory and a rename, so nginx never reads a half-written file.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// fileSet is the set of managed files on disk, by relative path.
type fileSet struct {
	dir   layout.Dir
	files render.Files
}

// sync makes the disk hold exactly want: it writes new or changed files and
// removes managed files that are no longer wanted. It returns whether
// anything changed.
func (s *fileSet) sync(want render.Files) (bool, error) {
	changed := false
	for _, name := range want.Names() {
		if old, ok := s.files[name]; ok && bytes.Equal(old, want[name]) {
			continue
		}
		p := s.dir.Path(name)
		if err := os.MkdirAll(filepath.Dir(p), dirMode(name)); err != nil {
			return changed, err
		}
		if err := writeAtomic(p, want[name], modeFor(name)); err != nil {
			return changed, err
		}
		changed = true
	}
	for name := range s.files {
		if _, ok := want[name]; ok {
			continue
		}
		if err := os.Remove(s.dir.Path(name)); err != nil && !os.IsNotExist(err) {
			return changed, fmt.Errorf("remove %s: %w", name, err)
		}
		changed = true
	}
	s.files = want
	return changed, nil
}

func dirMode(rel string) os.FileMode {
	if strings.HasPrefix(rel, layout.SecretsDir) {
		return 0o700
	}
	return 0o755
}

// equal reports whether want is exactly what is on disk.
func (s *fileSet) equal(want render.Files) bool {
	if len(want) != len(s.files) {
		return false
	}
	for n, d := range want {
		if old, ok := s.files[n]; !ok || !bytes.Equal(old, d) {
			return false
		}
	}
	return true
}

// prepareStateDir creates the directory layout and removes generated files
// left by an earlier run, so that a stale server file can never be
// included. The default certificate is kept.
func prepareStateDir(dir layout.Dir) error {
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{
		{string(dir), 0o755},
		{dir.Path(layout.ServersDir), 0o755},
		{dir.Path(layout.SecretsDir), 0o700},
		{dir.Path("run"), 0o755},
		{dir.TempDir(), 0o755},
	} {
		if err := os.MkdirAll(d.path, d.mode); err != nil {
			return fmt.Errorf("state dir: %w", err)
		}
		if err := os.Chmod(d.path, d.mode); err != nil {
			return fmt.Errorf("state dir: %w", err)
		}
	}
	for _, pattern := range []string{
		dir.Path(layout.ServersDir, "*"),
		dir.Path(layout.SecretsDir, "*"),
	} {
		matches, _ := filepath.Glob(pattern)
		for _, m := range matches {
			if m == dir.DefaultCert() {
				continue
			}
			if err := os.RemoveAll(m); err != nil {
				return fmt.Errorf("state dir: %w", err)
			}
		}
	}
	return nil
}
