package metrics

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// statLine is a /proc/<pid>/stat line with the given fields; the rest are
// zero.
func statLine(pid int, comm string, ppid int, utime, stime, start, vsize, rss uint64) string {
	// Fields 3..24 of proc(5); 25.. are irrelevant but present.
	return fmt.Sprintf("%d (%s) S %d 1 1 0 -1 4194560 100 0 0 0 %d %d 0 0 20 0 1 0 %d %d %d 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
		pid, comm, ppid, utime, stime, start, vsize, rss)
}

func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       procStat
		err        string
	}{
		{
			name: "an nginx worker",
			line: statLine(12, "nginx", 10, 250, 50, 4200, 1<<20, 300),
			want: procStat{PPID: 10, CPU: 3, StartTicks: 4200, VirtualBytes: 1 << 20, RSSPages: 300},
		},
		{
			name: "a command name with spaces and parentheses",
			line: statLine(12, "ng) (x y", 10, 1, 2, 3, 4, 5),
			want: procStat{PPID: 10, CPU: 0.03, StartTicks: 3, VirtualBytes: 4, RSSPages: 5},
		},
		{
			name: "a real line from this kernel",
			line: "12770 (cat) R 12768 12768 10472 0 -1 4194304 101 0 0 0 7 3 0 0 20 0 1 0 1283970 3133440 379 18446744073709551615 93897891635200 0\n",
			want: procStat{PPID: 12768, CPU: 0.1, StartTicks: 1283970, VirtualBytes: 3133440, RSSPages: 379},
		},
		{name: "no command name", line: "12 nginx S 10 1 1\n", err: "no parenthesised command name"},
		{name: "cut short", line: "12 (nginx) S 10 1 1 0 -1\n", err: "fields after the command name"},
		{
			name: "a field that is not a number",
			line: strings.Replace(statLine(12, "nginx", 10, 1, 2, 3, 4, 5), " 4 5 ", " x 5 ", 1),
			err:  "field 23",
		},
		{
			name: "a parent that is not a number",
			line: strings.Replace(statLine(12, "nginx", 10, 1, 2, 3, 4, 5), "S 10", "S ten", 1),
			err:  "field 4",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tc.line))
			checkParsed(t, got, err, tc.want, tc.err)
		})
	}
}

func TestParseProcIO(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       procIO
		err        string
	}{
		{
			name: "the kernel's layout",
			text: "rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n",
			want: procIO{ReadBytes: 4096, WriteBytes: 8192},
		},
		{name: "write_bytes missing", text: "read_bytes: 1\n", err: "missing"},
		{name: "not a number", text: "read_bytes: x\nwrite_bytes: 1\n", err: "read_bytes"},
		{name: "not key: value", text: "read_bytes 1\n", err: "no colon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcIO([]byte(tc.text))
			checkParsed(t, got, err, tc.want, tc.err)
		})
	}
}

func TestParseBootTime(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       uint64
		fails      bool
	}{
		{name: "present", text: "cpu  1 2 3\nintr 5\nbtime 1795448641\nprocesses 9\n", want: 1795448641},
		{name: "absent", text: "cpu  1 2 3\n", fails: true},
		{name: "garbled", text: "btime soon\n", fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseBootTime([]byte(tc.text))
			if (err != nil) != tc.fails || got != tc.want {
				t.Errorf("got %d, %v; want %d, failure %v", got, err, tc.want, tc.fails)
			}
		})
	}
}

// fakeProc is a /proc tree in a temporary directory.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) *fakeProc {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "stat"), []byte("cpu 0 0 0\nbtime 1000\n"), 0o644)
	os.WriteFile(filepath.Join(root, "self"), nil, 0o644) // not a pid
	return &fakeProc{t: t, root: root}
}

func (f *fakeProc) set(pid, ppid int, cpuTicks, start, vsize, rss, read, write uint64) {
	dir := filepath.Join(f.root, fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "stat"), []byte(statLine(pid, "nginx", ppid, cpuTicks, 0, start, vsize, rss)), 0o644)
	os.WriteFile(filepath.Join(dir, "io"), fmt.Appendf(nil, "read_bytes: %d\nwrite_bytes: %d\n", read, write), 0o644)
}

func (f *fakeProc) remove(pid int) { os.RemoveAll(filepath.Join(f.root, fmt.Sprint(pid))) }

func processValues(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		name := strings.TrimPrefix(mf.GetName(), CompatPrefix+"nginx_process_")
		for _, m := range mf.GetMetric() {
			switch {
			case m.Gauge != nil:
				out[name] = m.GetGauge().GetValue()
			case m.Counter != nil:
				out[name] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

func TestNginxProcesses(t *testing.T) {
	page := uint64(os.Getpagesize())
	fp := newFakeProc(t)
	master := 10
	errs := prometheus.NewCounter(prometheus.CounterOpts{Name: "errs"})
	c := newNginxProcesses(Identity{}, fp.root, func() int { return master }, &failureLog{what: "nginx_process", log: slog.New(slog.DiscardHandler), errors: errs})

	fp.set(10, 1, 100, 500, 1000, 1, 10, 20)
	fp.set(11, 10, 200, 600, 2000, 2, 30, 40)
	fp.set(12, 10, 300, 700, 3000, 3, 50, 60)
	fp.set(99, 1, 900, 100, 9000, 9, 90, 90) // not nginx: another parent
	steps := []struct {
		name   string
		change func()
		want   map[string]float64
	}{
		{
			name:   "master and two workers",
			change: func() {},
			want: map[string]float64{"num_procs": 3, "cpu_seconds_total": 6, "read_bytes_total": 90, "write_bytes_total": 120,
				"resident_memory_bytes": float64(6 * page), "virtual_memory_bytes": 6000, "oldest_start_time_seconds": 1005},
		},
		{
			name: "a reload replaces worker 12 (and a new process reuses pid 11)",
			change: func() {
				fp.remove(12)
				fp.set(11, 10, 10, 800, 2000, 2, 1, 1)
				fp.set(13, 10, 20, 800, 2000, 2, 2, 2)
			},
			// Counters keep what the exited processes had used:
			// the old 11 and 12 together had 5s, 80 and 100 bytes.
			want: map[string]float64{"num_procs": 3, "cpu_seconds_total": 5 + 1.3, "read_bytes_total": 80 + 13, "write_bytes_total": 100 + 23,
				"resident_memory_bytes": float64(5 * page), "virtual_memory_bytes": 5000, "oldest_start_time_seconds": 1005},
		},
		{
			name:   "nginx is not running",
			change: func() { master = 0 },
			want:   map[string]float64{},
		},
	}
	for _, s := range steps {
		s.change()
		got := processValues(t, c)
		if len(got) != len(s.want) {
			t.Errorf("%s: got %v, want %v", s.name, got, s.want)
			continue
		}
		for k, v := range s.want {
			if d := got[k] - v; d > 1e-9 || d < -1e-9 {
				t.Errorf("%s: %s = %v, want %v", s.name, k, got[k], v)
			}
		}
	}
	if n := counterValue(t, errs); n != 0 {
		t.Errorf("%v collection errors, want 0", n)
	}
}

func TestNginxProcessesFailure(t *testing.T) {
	fp := newFakeProc(t)
	errs := prometheus.NewCounter(prometheus.CounterOpts{Name: "errs"})
	var logs strings.Builder
	c := newNginxProcesses(Identity{}, fp.root, func() int { return 10 },
		&failureLog{what: "nginx_process", log: slog.New(slog.NewTextHandler(&logs, nil)), errors: errs})
	for i := 0; i < 3; i++ {
		if got := processValues(t, c); len(got) != 0 {
			t.Fatalf("a missing master produced %v", got)
		}
	}
	if n := counterValue(t, errs); n != 3 {
		t.Errorf("%v collection errors, want 3", n)
	}
	if n := strings.Count(logs.String(), "collecting failed"); n != 1 {
		t.Errorf("failure logged %d times, want once:\n%s", n, logs.String())
	}
	fp.set(10, 1, 1, 1, 1, 1, 1, 1)
	if got := processValues(t, c); got["num_procs"] != 1 {
		t.Errorf("after recovery got %v", got)
	}
	if !strings.Contains(logs.String(), "collecting works again") {
		t.Errorf("recovery not logged:\n%s", logs.String())
	}
}

// The real /proc, with this test process standing in for the master.
func TestNginxProcessesRealProc(t *testing.T) {
	errs := prometheus.NewCounter(prometheus.CounterOpts{Name: "errs"})
	c := newNginxProcesses(Identity{}, "/proc", os.Getpid, &failureLog{what: "nginx_process", log: slog.New(slog.NewTextHandler(io.Discard, nil)), errors: errs})
	got := processValues(t, c)
	if counterValue(t, errs) != 0 {
		t.Skip("/proc is not readable here")
	}
	if got["num_procs"] < 1 || got["resident_memory_bytes"] <= 0 || got["virtual_memory_bytes"] <= 0 {
		t.Errorf("implausible values %v", got)
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
