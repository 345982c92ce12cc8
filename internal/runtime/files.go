// Package runtime is the only stage with side effects: it writes the
// rendered files, tests and reloads nginx, verifies the new configuration
// is live, rolls back when it is not, and keeps the nginx process alive.
package runtime

import (
	"bytes"
	"errors"
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
	return writeAtomicOwned(path, data, mode, noOwner)
}

// owner is a uid/gid pair for files nginx workers must read; noOwner
// leaves ownership alone.
type owner struct{ uid, gid int }

var noOwner = owner{-1, -1}

// writeAtomicOwned is writeAtomic that also hands the file to o, before
// the rename, so it is never visible with the wrong owner.
func writeAtomicOwned(path string, data []byte, mode os.FileMode, o owner) error {
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
	if o != noOwner {
		if err := tmp.Chown(o.uid, o.gid); err != nil {
			tmp.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
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
	// secretOwner owns secret files: nginx workers read certificates at
	// handshake time, so when nginx runs as root with unprivileged workers
	// the files belong to the worker user (still mode 0600).
	secretOwner owner
	// stale are files no longer wanted but still on disk: removal waits
	// until the configuration that stopped using them is live.
	stale []string
}

// write makes the disk hold want's new and changed files, removes dropped
// configuration files, and returns the names of all it changed; dropped
// secrets are remembered for prune. Unchanged files are not touched.
func (s *fileSet) write(want render.Files) ([]string, error) {
	var written []string
	for _, name := range want.Names() {
		if old, ok := s.files[name]; ok && bytes.Equal(old, want[name]) {
			continue
		}
		p := s.dir.Path(name)
		if err := os.MkdirAll(filepath.Dir(p), dirMode(name)); err != nil {
			return written, err
		}
		o := noOwner
		if modeFor(name) == 0o600 {
			o = s.secretOwner
		}
		if err := writeAtomicOwned(p, want[name], modeFor(name), o); err != nil {
			return written, err
		}
		written = append(written, name)
	}
	for name := range s.files {
		if _, ok := want[name]; ok {
			continue
		}
		// Configuration files go now: nginx includes servers/*.conf, so a
		// file left on disk would still be loaded. Secrets wait for prune:
		// old workers read them at handshake until the reload completes.
		if modeFor(name) == 0o600 {
			s.stale = append(s.stale, name)
		} else if err := os.Remove(s.dir.Path(name)); err != nil && !os.IsNotExist(err) {
			return written, fmt.Errorf("remove %s: %w", name, err)
		} else {
			written = append(written, name)
		}
	}
	s.files = want
	return written, nil
}

// prune removes the files write left behind.
func (s *fileSet) prune() error {
	var errs []error
	for _, name := range s.stale {
		if _, wanted := s.files[name]; wanted {
			continue
		}
		if err := os.Remove(s.dir.Path(name)); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("remove %s: %w", name, err))
		}
	}
	s.stale = nil
	return errors.Join(errs...)
}

// sync writes want and prunes at once; it reports whether anything
// changed on disk.
func (s *fileSet) sync(want render.Files) (bool, error) {
	stale := len(s.stale)
	written, err := s.write(want)
	if err != nil {
		return len(written) > 0, err
	}
	changed := len(written) > 0 || len(s.stale) > stale
	return changed, s.prune()
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
func prepareStateDir(dir layout.Dir, secretOwner owner) error {
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
	if secretOwner != noOwner {
		if err := os.Chown(dir.Path(layout.SecretsDir), secretOwner.uid, secretOwner.gid); err != nil {
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
