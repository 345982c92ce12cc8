package runtime

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/causeway/causeway/internal/layout"
)

// access says who must reach the state directory. nginx's master runs as
// the controller; its workers run as the worker user when the controller is
// root, else as the controller too.
type access struct {
	self   owner
	worker owner
	// workerGroups are the worker's primary and supplementary groups.
	workerGroups []int
}

// accessFor resolves the worker user; "" means the workers run as the
// controller.
func accessFor(workerUser string) (access, error) {
	self := owner{os.Geteuid(), os.Getegid()}
	a := access{self: self, worker: self, workerGroups: []int{self.gid}}
	if workerUser == "" || self.uid != 0 {
		return a, nil
	}
	u, err := user.Lookup(workerUser)
	if err != nil {
		return a, fmt.Errorf("nginx worker user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	a.worker, a.workerGroups = owner{uid, gid}, []int{gid}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.Atoi(id); err == nil && g != gid {
				a.workerGroups = append(a.workerGroups, g)
			}
		}
	}
	return a, nil
}

// separate reports whether workers run as another user than the master.
func (a access) separate() bool { return a.worker.uid != a.self.uid }

// dirSpec is one directory of the state directory: its mode and owner.
type dirSpec struct {
	rel   string // "" is the state directory itself
	mode  os.FileMode
	owner owner
}

// dirs lists the state directory's directories with the modes and owners
// they must have. Directories workers must enter are group-accessible to
// the worker's group only; the rest are private to the controller.
func (a access) dirs() []dirSpec {
	shared, sharedOwner := os.FileMode(0o700), a.self
	if a.separate() {
		shared, sharedOwner = 0o750, owner{a.self.uid, a.worker.gid}
	}
	return []dirSpec{
		{"", shared, sharedOwner},
		{layout.ServersDir, 0o700, a.self},
		// nginx's master reads ModSecurity's rules as it loads the
		// configuration; workers never do.
		{layout.ModSecurityDir, 0o700, a.self},
		{layout.RunDir, 0o700, a.self},
		{layout.WorkerSocketsDir, shared, sharedOwner},
		{layout.TempDir, shared, sharedOwner},
		{layout.LuaDir, shared, sharedOwner},
		// Workers read certificates at handshake time.
		{layout.SecretsDir, 0o700, a.worker},
	}
}

// prepareDirs creates the directories and sets their modes and owners.
func (a access) prepareDirs(dir layout.Dir) error {
	for _, d := range a.dirs() {
		p := dir.Path(d.rel)
		if err := os.MkdirAll(p, d.mode); err != nil {
			return fmt.Errorf("state dir: %w", err)
		}
		if err := os.Chmod(p, d.mode); err != nil {
			if errors.Is(err, syscall.EPERM) {
				// A volume's root, typically: Kubernetes makes an
				// emptyDir root-owned and world-writable.
				return fmt.Errorf("state dir: %s belongs to another user than this process (uid %d), so it cannot be made private to it: "+
					"point --state-dir at a directory the process creates, such as a subdirectory of the volume: %w", p, a.self.uid, err)
			}
			return fmt.Errorf("state dir: %w", err)
		}
		if err := os.Lchown(p, d.owner.uid, d.owner.gid); err != nil && !(errors.Is(err, syscall.EPERM) && d.owner == a.self) {
			return fmt.Errorf("state dir: %w", err)
		}
	}
	return nil
}

// permBits are the rwx bits of a check: 4 read, 2 write, 1 search/execute.
const (
	permRead   = 4
	permSearch = 1
)

// may reports whether the worker may do want (permBits) on st, by its
// mode bits (ACLs are not consulted; Causeway sets none).
func (a access) may(st os.FileInfo, want os.FileMode) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	if a.worker.uid == 0 {
		return true
	}
	perm := st.Mode().Perm()
	switch {
	case int(sys.Uid) == a.worker.uid:
		return (perm>>6)&want == want
	case a.inGroup(int(sys.Gid)):
		return (perm>>3)&want == want
	default:
		return perm&want == want
	}
}

func (a access) inGroup(gid int) bool {
	for _, g := range a.workerGroups {
		if g == gid {
			return true
		}
	}
	return false
}

// checkWorkerAccess verifies that nginx's workers can reach what they read
// at request time: every directory down to the state directory, the
// temporary directory (request bodies), the worker sockets, the Lua
// modules they load lazily, and the certificates. It names the first path
// they cannot reach, so the operator sees why hosts would fail.
func (a access) checkWorkerAccess(dir layout.Dir, secrets []string) error {
	var errs []error
	check := func(p string, want os.FileMode, what string) {
		st, err := os.Stat(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", what, p, err))
			return
		}
		if !a.may(st, want) {
			errs = append(errs, fmt.Errorf("nginx workers (uid %d) cannot %s %s (mode %v, owner %d:%d)",
				a.worker.uid, verb(want), p, st.Mode(), st.Sys().(*syscall.Stat_t).Uid, st.Sys().(*syscall.Stat_t).Gid))
		}
	}
	for p := filepath.Clean(string(dir)); ; p = filepath.Dir(p) {
		check(p, permSearch, "directory")
		if p == filepath.Dir(p) {
			break
		}
	}
	for _, rel := range []string{layout.TempDir, layout.WorkerSocketsDir, layout.LuaDir, layout.SecretsDir} {
		check(dir.Path(rel), permSearch, "directory")
	}
	filepath.WalkDir(dir.LuaDir(), func(p string, d os.DirEntry, err error) error {
		if err == nil {
			if d.IsDir() {
				check(p, permSearch|permRead, "directory")
			} else {
				check(p, permRead, "Lua module")
			}
		}
		return nil
	})
	check(dir.DefaultCert(), permRead, "certificate")
	for _, rel := range secrets {
		check(dir.Path(rel), permRead, "certificate")
	}
	return errors.Join(errs...)
}

func verb(want os.FileMode) string {
	if want&permRead != 0 {
		return "read"
	}
	return "enter"
}
