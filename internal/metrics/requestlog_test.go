package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/causeway/causeway/internal/balancer"
)

// appender opens the log as nginx's master does: append-only, by name.
func appender(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func write(t *testing.T, f *os.File, s string) {
	t.Helper()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func newTestLog(t *testing.T) (*RequestLog, *Requests, string) {
	t.Helper()
	r, _ := newTestRequests(t, testOptions())
	path := filepath.Join(t.TempDir(), "metrics.log")
	// What a previous run left: its log, and a file it had renamed.
	for _, p := range []string{path, path + ".1795000000000000000"} {
		if err := os.WriteFile(p, []byte(line(webKey, "200", "GET", plain, "")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := OpenRequestLog(path, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, r, path
}

// TestRequestLogReads: whole lines are counted once, a line whose end is
// not written yet waits for it, and the file is the owner's alone.
func TestRequestLogReads(t *testing.T) {
	l, r, path := newTestLog(t)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || st.Size() != 0 {
		t.Errorf("metrics log mode %o, size %d; want 600, empty", st.Mode().Perm(), st.Size())
	}
	if stale, _ := filepath.Glob(path + ".*"); len(stale) != 0 {
		t.Errorf("a previous run's files are left: %v", stale)
	}
	w := appender(t, path)
	one := line(webKey, "200", "GET", plain, "")
	write(t, w, one+one+one[:10])
	l.Read()
	if got := testutil.ToFloat64(r.lines); got != 2 {
		t.Errorf("lines = %v after two and a half, want 2", got)
	}
	write(t, w, one[10:])
	l.Read()
	l.Read()
	if got := testutil.ToFloat64(r.lines); got != 3 {
		t.Errorf("lines = %v, want 3", got)
	}
	if got := testutil.ToFloat64(r.dropped); got != 0 {
		t.Errorf("dropped = %v", got)
	}
	// A line longer than any the format writes is dropped, not held.
	write(t, w, strings.Repeat("x", maxLine+1))
	l.Read()
	write(t, w, "\n"+one)
	l.Read()
	if got := testutil.ToFloat64(r.dropped); got < 1 {
		t.Errorf("dropped = %v after an overlong line", got)
	}
	if len(l.cur.partial) != 0 {
		t.Errorf("%d bytes held after the overlong line", len(l.cur.partial))
	}
}

// TestRequestLogGivesSpaceBack: what was read does not stay on disk.
func TestRequestLogGivesSpaceBack(t *testing.T) {
	l, r, path := newTestLog(t)
	w := appender(t, path)
	one := line(webKey, "200", "GET", plain, "")
	n := 3*punchEvery/len(one) + 1
	for range 3 {
		write(t, w, strings.Repeat(one, n/3))
		l.Read()
	}
	write(t, w, strings.Repeat(one, n-n/3*3))
	l.Read()
	if got := testutil.ToFloat64(r.lines); got != float64(n) {
		t.Fatalf("lines = %v, want %d", got, n)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if l.noCollapse {
		// Holes only (tmpfs, say): the apparent size stays.
		if used := st.Blocks * 512; used > st.Size/2 {
			t.Errorf("%d bytes on disk for a %d-byte log read through", used, st.Size)
		}
		return
	}
	// ext4 and XFS: what was read is gone from the file's start.
	if st.Size >= punchEvery || st.Blocks*512 > punchEvery {
		t.Errorf("size %d, %d bytes on disk, after reading %d bytes; want under %d", st.Size, st.Blocks*512, n*len(one), punchEvery)
	}
	// The workers' next lines land at the new end and are read once,
	// also a line whose start was written before the collapse.
	half := len(one) / 2
	write(t, w, strings.Repeat(one, 10)+one[:half])
	l.Read()
	write(t, w, one[half:]+one)
	l.Read()
	if got := testutil.ToFloat64(r.lines); got != float64(n+12) {
		t.Errorf("lines = %v after more appends, want %d", got, n+12)
	}
	if got := testutil.ToFloat64(r.dropped); got != 0 {
		t.Errorf("%v lines dropped", got)
	}
}

// TestRequestLogRotates: past RotateAfter, Rotate renames the file and
// starts a new one for nginx to open; what the old workers still write
// to the old file is counted until it stops growing, then it is removed.
func TestRequestLogRotates(t *testing.T) {
	l, r, path := newTestLog(t)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	l.RotateAfter = 10
	old := appender(t, path)
	one := line(webKey, "200", "GET", plain, "")
	write(t, old, one)
	l.Rotate()
	l.Rotate() // the new file is empty: nothing to do
	matches, _ := filepath.Glob(path + ".*")
	if len(matches) != 1 {
		t.Fatalf("renamed files %v, want one", matches)
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() != 0 || st.Mode().Perm() != 0o600 {
		t.Fatalf("new log: %v, %v", st, err)
	}
	// An old worker finishes a request; a new one serves the next.
	write(t, old, one)
	write(t, appender(t, path), one)
	l.Read()
	if got := testutil.ToFloat64(r.lines); got != 3 {
		t.Errorf("lines = %v, want 3", got)
	}
	// Old workers may live 10 minutes (worker-shutdown-timeout): the
	// renamed file is read until then.
	r.SetSeries(map[string]*balancer.SeriesLabels{webKey: &webLabels, anyKey: &anyLabels}, 10*time.Minute)
	now = now.Add(l.Drain + time.Second)
	l.Read()
	if _, err := os.Stat(matches[0]); err != nil {
		t.Errorf("renamed file dropped while old workers may still write to it: %v", err)
	}
	now = now.Add(10 * time.Minute)
	l.Read()
	if _, err := os.Stat(matches[0]); !os.IsNotExist(err) {
		t.Errorf("drained file still there: %v", err)
	}
	if len(l.old) != 0 {
		t.Errorf("%d old files held", len(l.old))
	}
}

// TestRequestLogFollowsItsName: a log removed behind the controller's back
// is started again under its name (where nginx opens it at its next
// reload); what is still written to the removed file is counted until it
// stops growing, and a file nginx created there is read whole and made
// private.
func TestRequestLogFollowsItsName(t *testing.T) {
	l, r, path := newTestLog(t)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	one := line(webKey, "200", "GET", plain, "")
	before := appender(t, path)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	l.Read()
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("log not started again: %v, %v", st, err)
	}
	write(t, before, one)
	write(t, appender(t, path), one)
	l.Read()
	if got := testutil.ToFloat64(r.lines); got != 2 {
		t.Errorf("lines = %v, want 2", got)
	}
	// Replaced by a file of someone else's, already written to.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(one+one), 0o644); err != nil {
		t.Fatal(err)
	}
	l.Read()
	if got := testutil.ToFloat64(r.lines); got != 4 {
		t.Errorf("lines = %v, want 4", got)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("replaced log: %v, %v", st, err)
	}
	now = now.Add(l.Drain + time.Second)
	l.Read()
	if len(l.old) != 0 {
		t.Errorf("%d old files held after they stopped growing", len(l.old))
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the current log was removed with an old one: %v", err)
	}
}

// TestRequestLogCollapseWaitsForMore: a log read through to exactly a MiB
// boundary cannot lose that range yet (a collapse may not reach the end
// of the file); the next lines let it, and nothing falls back to holes.
func TestRequestLogCollapseWaitsForMore(t *testing.T) {
	l, r, path := newTestLog(t)
	w := appender(t, path)
	one := line(webKey, "200", "GET", plain, "")
	k := punchEvery/len(one) - 2
	pad := punchEvery - k*len(one) - len(line(webKey, "200", "GET", plain)) - 1
	write(t, w, strings.Repeat(one, k)+line(webKey, "200", "GET", plain, strings.Repeat("a", pad)))
	l.Read()
	st, err := os.Stat(path)
	if err != nil || st.Size() != punchEvery {
		t.Fatalf("log of %v bytes (%v), want exactly %d", st.Size(), err, punchEvery)
	}
	if l.noCollapse || l.cur.punched != 0 {
		t.Fatalf("gave up collapsing (%v) or punched %d bytes at the end of the file", l.noCollapse, l.cur.punched)
	}
	before := testutil.ToFloat64(r.lines)
	write(t, w, one)
	l.Read()
	if st, err = os.Stat(path); err != nil || st.Size() != int64(len(one)) {
		t.Fatalf("log of %v bytes (%v) after one more line, want %d", st.Size(), err, len(one))
	}
	if got := testutil.ToFloat64(r.lines); got != before+1 {
		t.Errorf("lines = %v, want %v", got, before+1)
	}
}
