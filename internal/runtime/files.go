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
	"syscall"

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
	dir    layout.Dir
	files  render.Files
	access access
	// stamps are what the disk showed right after each file was written,
	// so that a file deleted, replaced or changed behind our back is
	// noticed without reading it again.
	stamps map[string]stamp
	// stale are files no longer wanted but still on disk: removal waits
	// until the configuration that stopped using them is live.
	stale []string
}

// stamp identifies one write of a file: a rename gives a new inode, and an
// edit in place changes the size or the modification time.
type stamp struct {
	ino, size int64
	mtime     int64
	mode      os.FileMode
	uid, gid  uint32
}

func stampOf(path string) (stamp, bool) {
	st, err := os.Lstat(path)
	if err != nil {
		return stamp{}, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return stamp{}, false
	}
	return stamp{int64(sys.Ino), st.Size(), st.ModTime().UnixNano(), st.Mode(), sys.Uid, sys.Gid}, true
}

// ownerFor is who owns a file: secrets belong to nginx's workers, which
// read certificates at handshake time (still mode 0600).
func (s *fileSet) ownerFor(rel string) owner {
	if modeFor(rel) == 0o600 {
		return s.access.worker
	}
	return noOwner
}

// put writes one file and records its stamp.
func (s *fileSet) put(name string, data []byte) error {
	p := s.dir.Path(name)
	if err := os.MkdirAll(filepath.Dir(p), dirMode(name)); err != nil {
		return err
	}
	if err := writeAtomicOwned(p, data, modeFor(name), s.ownerFor(name)); err != nil {
		return err
	}
	if s.stamps == nil {
		s.stamps = map[string]stamp{}
	}
	st, _ := stampOf(p)
	s.stamps[name] = st
	return nil
}

// intact reports whether name is on disk exactly as it was last written.
func (s *fileSet) intact(name string) bool {
	st, ok := stampOf(s.dir.Path(name))
	return ok && st == s.stamps[name]
}

// write makes the disk hold want's new and changed files, removes dropped
// configuration files, and returns the names of all it changed; dropped
// secrets are remembered for prune. Files that are unchanged, and intact on
// disk, are not touched.
func (s *fileSet) write(want render.Files) ([]string, error) {
	var written []string
	for _, name := range want.Names() {
		if old, ok := s.files[name]; ok && bytes.Equal(old, want[name]) && s.intact(name) {
			continue
		}
		if err := s.put(name, want[name]); err != nil {
			return written, err
		}
		written = append(written, name)
	}
	for name := range s.files {
		if _, ok := want[name]; ok {
			continue
		}
		delete(s.stamps, name)
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

// repair puts back every managed file that is missing or not as last
// written, and removes server files nobody wrote (nginx would include
// them). It returns what it changed. The files are the ones nginx already
// runs, so no reload follows.
func (s *fileSet) repair() ([]string, error) {
	var healed []string
	for _, name := range s.files.Names() {
		if s.intact(name) {
			continue
		}
		if err := s.put(name, s.files[name]); err != nil {
			return healed, err
		}
		healed = append(healed, name)
	}
	stray, _ := filepath.Glob(s.dir.Path(layout.ServersDir, "*"))
	for _, p := range stray {
		rel, err := filepath.Rel(string(s.dir), p)
		if err != nil {
			continue
		}
		if _, ok := s.files[rel]; ok {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return healed, fmt.Errorf("remove %s: %w", rel, err)
		}
		healed = append(healed, rel)
	}
	return healed, nil
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

// dirMode is the mode of a directory MkdirAll creates below the fixed ones
// (the Lua modules' subdirectories).
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

// secretNames lists the managed secret files.
func (s *fileSet) secretNames() []string {
	var out []string
	for n := range s.files {
		if modeFor(n) == 0o600 {
			out = append(out, n)
		}
	}
	return out
}

// prepareStateDir creates the directory layout with its modes and owners
// and removes generated files left by an earlier run, so that a stale
// server file can never be included. The default certificate is kept.
func prepareStateDir(dir layout.Dir, a access) error {
	if err := a.prepareDirs(dir); err != nil {
		return err
	}
	for _, pattern := range []string{
		dir.Path(layout.ServersDir, "*"),
		dir.Path(layout.SecretsDir, "*"),
		dir.Path(layout.LuaDir, "*"),
		dir.Path(layout.ModSecurityDir, "*"),
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
