package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/render"
)

// selfAccess is the access of a controller whose workers run as itself.
func selfAccess(t *testing.T) access {
	t.Helper()
	a, err := accessFor("")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRepairPutsBackWhatChangedOnDisk(t *testing.T) {
	dir := layout.Dir(t.TempDir())
	a := selfAccess(t)
	if err := prepareStateDir(dir, a); err != nil {
		t.Fatal(err)
	}
	fs := fileSet{dir: dir, files: render.Files{}, access: a}
	want := render.Files{
		"nginx.conf":           []byte("main"),
		"servers/a.conf":       []byte("server a"),
		"servers/b.conf":       []byte("server b"),
		"secrets/ns_tls.pem":   []byte("pem"),
		"lua/causeway/api.lua": []byte("lua"),
	}
	if _, err := fs.sync(want); err != nil {
		t.Fatal(err)
	}
	os.Remove(dir.Path("servers/a.conf"))                                       // deleted
	os.WriteFile(dir.Path("servers/b.conf"), []byte("server B"), 0o644)         // edited in place
	os.Chmod(dir.Path("secrets/ns_tls.pem"), 0o644)                             // loosened
	os.RemoveAll(dir.Path("lua"))                                               // a whole directory gone
	os.WriteFile(dir.Path("servers/intruder.conf"), []byte("server {}"), 0o644) // would be included

	healed, err := fs.repair()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(healed)
	wantHealed := []string{"lua/causeway/api.lua", "secrets/ns_tls.pem", "servers/a.conf", "servers/b.conf", "servers/intruder.conf"}
	if !slices.Equal(healed, wantHealed) {
		t.Fatalf("healed %v, want %v", healed, wantHealed)
	}
	for name, data := range want {
		got, err := os.ReadFile(dir.Path(name))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: %q, %v; want %q", name, got, err, data)
		}
	}
	if st, _ := os.Stat(dir.Path("secrets/ns_tls.pem")); st.Mode() != 0o600 {
		t.Errorf("secret mode %v after repair, want 0600", st.Mode())
	}
	if _, err := os.Stat(dir.Path("servers/intruder.conf")); !os.IsNotExist(err) {
		t.Error("a server file nobody wrote survived the repair")
	}
	if again, _ := fs.repair(); len(again) != 0 {
		t.Errorf("a second repair changed %v", again)
	}
}

// write, not only repair, compares with the disk: an unchanged file that
// vanished is written again with the next configuration.
func TestWriteRewritesMissingUnchangedFile(t *testing.T) {
	dir := layout.Dir(t.TempDir())
	a := selfAccess(t)
	prepareStateDir(dir, a)
	fs := fileSet{dir: dir, files: render.Files{}, access: a}
	files := render.Files{"nginx.conf": []byte("a"), "servers/x.conf": []byte("x")}
	if _, err := fs.sync(files); err != nil {
		t.Fatal(err)
	}
	os.Remove(dir.Path("servers/x.conf"))
	written, err := fs.write(render.Files{"nginx.conf": []byte("b"), "servers/x.conf": []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(written, []string{"nginx.conf", "servers/x.conf"}) {
		t.Fatalf("wrote %v", written)
	}
}

// workerAccess is the access of a root controller whose workers run as an
// unprivileged user; it skips when that cannot be arranged.
func workerAccess(t *testing.T) access {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand files to another user")
	}
	for _, name := range []string{"www-data", "nobody"} {
		if _, err := user.Lookup(name); err == nil {
			a, err := accessFor(name)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
	}
	t.Skip("no unprivileged user")
	return access{}
}

func TestStateDirModesKeepControlSocketsPrivate(t *testing.T) {
	a := workerAccess(t)
	dir := layout.Dir(filepath.Join(openTempDir(t), "state"))
	if err := prepareStateDir(dir, a); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rel      string
		mode     os.FileMode
		uid, gid int
	}{
		{"", 0o750, 0, a.worker.gid},
		{layout.RunDir, 0o700, 0, a.self.gid},
		{layout.ServersDir, 0o700, 0, a.self.gid},
		{layout.WorkerSocketsDir, 0o750, 0, a.worker.gid},
		{layout.TempDir, 0o750, 0, a.worker.gid},
		{layout.LuaDir, 0o750, 0, a.worker.gid},
		{layout.SecretsDir, 0o700, a.worker.uid, a.worker.gid},
	} {
		st, err := os.Stat(dir.Path(tc.rel))
		if err != nil {
			t.Fatal(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		if st.Mode().Perm() != tc.mode || int(sys.Uid) != tc.uid || int(sys.Gid) != tc.gid {
			t.Errorf("%q: mode %v owner %d:%d, want %v %d:%d", tc.rel, st.Mode().Perm(), sys.Uid, sys.Gid, tc.mode, tc.uid, tc.gid)
		}
	}
	// A loosened directory is tightened again by the next heal.
	os.Chmod(dir.Path(layout.RunDir), 0o777)
	if err := a.prepareDirs(dir); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(dir.Path(layout.RunDir)); st.Mode().Perm() != 0o700 {
		t.Errorf("run dir mode %v after heal", st.Mode().Perm())
	}
	if err := EnsureDefaultCert(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	os.Chown(dir.DefaultCert(), a.worker.uid, a.worker.gid)
	if err := a.checkWorkerAccess(dir, nil); err != nil {
		t.Fatalf("a prepared state dir must pass the check: %v", err)
	}
}

func TestCheckWorkerAccessNamesWhatWorkersCannotReach(t *testing.T) {
	a := workerAccess(t)
	for _, tc := range []struct {
		name   string
		break_ func(base string, dir layout.Dir)
		want   string
	}{
		{"parent not traversable", func(base string, _ layout.Dir) { os.Chmod(base, 0o700) }, "cannot enter " + "BASE"},
		{"lua module unreadable", func(_ string, dir layout.Dir) {
			os.WriteFile(dir.Path("lua", "x.lua"), []byte("x"), 0o600)
		}, "cannot read " + "DIR/lua/x.lua"},
		{"certificate owned by root", func(_ string, dir layout.Dir) { os.Chown(dir.DefaultCert(), 0, 0) }, "cannot read " + "DIR/secrets/_default.pem"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := openTempDir(t)
			dir := layout.Dir(filepath.Join(base, "state"))
			if err := prepareStateDir(dir, a); err != nil {
				t.Fatal(err)
			}
			if err := ensureDefaultCert(dir, time.Now(), a.worker); err != nil {
				t.Fatal(err)
			}
			if err := a.checkWorkerAccess(dir, nil); err != nil {
				t.Fatalf("before: %v", err)
			}
			tc.break_(base, dir)
			want := strings.NewReplacer("BASE", base, "DIR", string(dir)).Replace(tc.want)
			err := a.checkWorkerAccess(dir, nil)
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "uid "+strconv.Itoa(a.worker.uid)) {
				t.Fatalf("got %v, want it to contain %q", err, want)
			}
		})
	}
}

// openTempDir is a temporary directory every user may enter (t.TempDir's
// parent is private to root).
func openTempDir(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "causeway-runtime-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	return base
}

// lineRecorder records each Write as one entry.
type lineRecorder struct {
	mu     sync.Mutex
	writes []string
}

func (r *lineRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

func TestLogPipeForwardsWholeLines(t *testing.T) {
	rec := &lineRecorder{}
	p, err := newLogPipe(rec)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", maxLogLine+10)
	// Written in pieces that split lines, as several processes would.
	for _, chunk := range []string{"first li", "ne\nsecond line\nthi", "rd\n", long + "\n", "unterminated"} {
		p.w.Write([]byte(chunk))
	}
	p.Close()
	want := "first line\nsecond line\nthird\n" + long[:maxLogLine] + "\n" + long[maxLogLine:] + "\n" + "unterminated\n"
	if got := strings.Join(rec.writes, ""); got != want {
		t.Fatalf("forwarded %.80q..., want %.80q...", got, want)
	}
	for _, w := range rec.writes {
		if !strings.HasSuffix(w, "\n") {
			t.Errorf("write %.80q is not whole lines", w)
		}
	}
}

// TestLogPipeBatchesLines: lines that arrive together leave in one write,
// so a busy access log costs a write per batch, not per line.
func TestLogPipeBatchesLines(t *testing.T) {
	rec := &lineRecorder{}
	var in strings.Builder
	for i := range 100 {
		fmt.Fprintf(&in, "line %d\n", i)
	}
	forwardLines(strings.NewReader(in.String()), rec, 0)
	if len(rec.writes) != 1 || rec.writes[0] != in.String() {
		t.Fatalf("%d writes for 100 lines read at once, want 1", len(rec.writes))
	}
}

// Readiness probes read Health while an Apply may hold the Manager for
// seconds (nginx -t at thousands of hosts): it must not wait for it.
func TestHealthDoesNotWaitForApply(t *testing.T) {
	m := &Manager{}
	err := errors.New("workers cannot enter /x")
	m.health.Store(&err)
	m.mu.Lock() // an Apply in progress
	defer m.mu.Unlock()
	got := make(chan error, 1)
	go func() { got <- m.Health() }()
	select {
	case e := <-got:
		if e != err {
			t.Fatalf("Health() = %v, want %v", e, err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Health blocked behind the Manager's lock")
	}
}

// TestLogPipeGathersAStream: lines nginx writes one at a time leave in
// far fewer writes (the forwarder pauses between batches), all whole.
func TestLogPipeGathersAStream(t *testing.T) {
	rec := &lineRecorder{}
	p, err := newLogPipe(rec)
	if err != nil {
		t.Fatal(err)
	}
	const n = 5000
	var want strings.Builder
	for i := range n {
		line := fmt.Sprintf("GET /item/%d 200\n", i)
		want.WriteString(line)
		p.w.Write([]byte(line))
	}
	p.Close()
	if got := strings.Join(rec.writes, ""); got != want.String() {
		t.Fatalf("forwarded %d bytes, want %d", len(got), want.Len())
	}
	if len(rec.writes) > n/5 {
		t.Errorf("%d writes for %d lines written one by one, want at most %d", len(rec.writes), n, n/5)
	}
}
