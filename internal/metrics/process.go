package metrics

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat. Linux fixes it
// at 100 for user space on every architecture Causeway runs on.
const userHZ = 100

// procStat is what the nginx_process metrics need from /proc/<pid>/stat.
type procStat struct {
	PPID int
	// CPU is user plus system time, in seconds.
	CPU float64
	// StartTicks is the start time in clock ticks after boot.
	StartTicks uint64
	// VirtualBytes and RSSPages are the memory sizes.
	VirtualBytes, RSSPages uint64
}

// parseProcStat reads one /proc/<pid>/stat line. The command name is
// parenthesised and may itself hold spaces and parentheses, so the fields
// are counted from the last ')'.
func parseProcStat(line []byte) (procStat, error) {
	end := bytes.LastIndexByte(line, ')')
	if end < 0 || bytes.IndexByte(line, '(') < 0 {
		return procStat{}, errors.New("no parenthesised command name")
	}
	// f[0] is field 3 (state) of proc(5).
	f := strings.Fields(string(line[end+1:]))
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("%d fields after the command name, want at least 22", len(f))
	}
	var s procStat
	var utime, stime uint64
	var err error
	for _, x := range []struct {
		field int
		into  *uint64
	}{{14, &utime}, {15, &stime}, {22, &s.StartTicks}, {23, &s.VirtualBytes}, {24, &s.RSSPages}} {
		if *x.into, err = strconv.ParseUint(f[x.field-3], 10, 64); err != nil {
			return procStat{}, fmt.Errorf("field %d: %w", x.field, err)
		}
	}
	if s.PPID, err = strconv.Atoi(f[4-3]); err != nil {
		return procStat{}, fmt.Errorf("field 4 (ppid): %w", err)
	}
	s.CPU = float64(utime+stime) / userHZ
	return s, nil
}

// procIO is what the metrics need from /proc/<pid>/io.
type procIO struct {
	ReadBytes, WriteBytes uint64
}

// parseProcIO reads /proc/<pid>/io; both read_bytes and write_bytes must
// be present.
func parseProcIO(data []byte) (procIO, error) {
	var io procIO
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			return procIO{}, fmt.Errorf("line %q: no colon", sc.Text())
		}
		var into *uint64
		switch key {
		case "read_bytes":
			into = &io.ReadBytes
		case "write_bytes":
			into = &io.WriteBytes
		default:
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(val), 10, 64)
		if err != nil {
			return procIO{}, fmt.Errorf("%s: %w", key, err)
		}
		*into = n
		seen++
	}
	if seen != 2 {
		return procIO{}, errors.New("read_bytes or write_bytes missing")
	}
	return io, nil
}

// parseBootTime finds btime, the boot time in Unix seconds, in /proc/stat.
func parseBootTime(data []byte) (uint64, error) {
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New("no btime line")
}

// procKey tells a process from a later one that reuses its pid.
type procKey struct {
	pid        int
	startTicks uint64
}

// procTotals are the counters of one process.
type procTotals struct {
	cpu               float64
	readBytes, writes uint64
}

func (t *procTotals) add(o procTotals) {
	t.cpu += o.cpu
	t.readBytes += o.readBytes
	t.writes += o.writes
}

// nginxProcesses collects the nginx_process_* metrics for the nginx
// master the controller runs and its children (workers, cache manager and
// loader), reading /proc at scrape time.
type nginxProcesses struct {
	root string // "/proc"; tests use a fake tree
	pid  func() int
	fail *failureLog

	numProcs, cpu, readBytes, writeBytes, rss, vms, oldest *prometheus.Desc

	mu sync.Mutex
	// last are the counters of each process at the previous scrape, and
	// gone the sum of those of processes that have exited since: the
	// counters then stay monotonic while workers come and go on reloads.
	last map[procKey]procTotals
	gone procTotals
	boot uint64
}

func newNginxProcesses(id Identity, root string, pid func() int, fail *failureLog) *nginxProcesses {
	l := id.Labels()
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(CompatPrefix+"nginx_process_"+name, help, nil, l)
	}
	return &nginxProcesses{
		root: root, pid: pid, fail: fail, last: map[procKey]procTotals{},
		numProcs:   d("num_procs", "nginx processes: the master and its children."),
		cpu:        d("cpu_seconds_total", "CPU time (user and system) of the nginx processes, including exited ones."),
		readBytes:  d("read_bytes_total", "Bytes the nginx processes read from storage, including exited ones."),
		writeBytes: d("write_bytes_total", "Bytes the nginx processes wrote to storage, including exited ones."),
		rss:        d("resident_memory_bytes", "Resident memory of the nginx processes."),
		vms:        d("virtual_memory_bytes", "Virtual memory of the nginx processes."),
		oldest:     d("oldest_start_time_seconds", "Unix time at which the oldest nginx process started."),
	}
}

// Describe implements prometheus.Collector.
func (p *nginxProcesses) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{p.numProcs, p.cpu, p.readBytes, p.writeBytes, p.rss, p.vms, p.oldest} {
		ch <- d
	}
}

// processSample is one process as read from /proc.
type processSample struct {
	key   procKey
	stat  procStat
	total procTotals
}

// Collect implements prometheus.Collector. Without a running master it
// reports nothing; a /proc failure is logged and counted.
func (p *nginxProcesses) Collect(ch chan<- prometheus.Metric) {
	master := p.pid()
	if master <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	procs, err := p.read(master)
	if p.fail.record(err) {
		return
	}
	now := make(map[procKey]procTotals, len(procs))
	var total procTotals
	var rss, vms uint64
	oldest := procs[0].stat.StartTicks
	for _, s := range procs {
		now[s.key] = s.total
		total.add(s.total)
		rss += s.stat.RSSPages * uint64(os.Getpagesize())
		vms += s.stat.VirtualBytes
		oldest = min(oldest, s.stat.StartTicks)
	}
	for k, t := range p.last {
		if _, ok := now[k]; !ok {
			p.gone.add(t)
		}
	}
	p.last = now
	total.add(p.gone)
	ch <- prometheus.MustNewConstMetric(p.numProcs, prometheus.GaugeValue, float64(len(procs)))
	ch <- prometheus.MustNewConstMetric(p.cpu, prometheus.CounterValue, total.cpu)
	ch <- prometheus.MustNewConstMetric(p.readBytes, prometheus.CounterValue, float64(total.readBytes))
	ch <- prometheus.MustNewConstMetric(p.writeBytes, prometheus.CounterValue, float64(total.writes))
	ch <- prometheus.MustNewConstMetric(p.rss, prometheus.GaugeValue, float64(rss))
	ch <- prometheus.MustNewConstMetric(p.vms, prometheus.GaugeValue, float64(vms))
	ch <- prometheus.MustNewConstMetric(p.oldest, prometheus.GaugeValue, float64(p.boot+oldest/userHZ))
}

// read samples the master and every process whose parent it is. A child
// that exits while being read is skipped; the master must be readable.
func (p *nginxProcesses) read(master int) ([]processSample, error) {
	if p.boot == 0 {
		data, err := os.ReadFile(filepath.Join(p.root, "stat"))
		if err != nil {
			return nil, err
		}
		if p.boot, err = parseBootTime(data); err != nil {
			return nil, fmt.Errorf("%s/stat: %w", p.root, err)
		}
	}
	m, err := p.sample(master)
	if err != nil {
		return nil, fmt.Errorf("nginx master %d: %w", master, err)
	}
	out := []processSample{m}
	entries, err := os.ReadDir(p.root)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == master {
			continue
		}
		data, err := os.ReadFile(filepath.Join(p.root, e.Name(), "stat"))
		if err != nil {
			continue // exited since the listing, or not ours to read
		}
		if st, err := parseProcStat(data); err != nil || st.PPID != master {
			continue
		}
		if s, err := p.sample(pid); err == nil {
			out = append(out, s)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("nginx process %d: %w", pid, err)
		}
	}
	return out, nil
}

func (p *nginxProcesses) sample(pid int) (processSample, error) {
	dir := filepath.Join(p.root, strconv.Itoa(pid))
	data, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return processSample{}, err
	}
	st, err := parseProcStat(data)
	if err != nil {
		return processSample{}, fmt.Errorf("stat: %w", err)
	}
	data, err = os.ReadFile(filepath.Join(dir, "io"))
	if err != nil {
		return processSample{}, err
	}
	io, err := parseProcIO(data)
	if err != nil {
		return processSample{}, fmt.Errorf("io: %w", err)
	}
	return processSample{
		key:   procKey{pid: pid, startTicks: st.StartTicks},
		stat:  st,
		total: procTotals{cpu: st.CPU, readBytes: io.ReadBytes, writes: io.WriteBytes},
	}, nil
}

// failureLog counts a collector's failures and logs when it starts and
// stops failing, not at every scrape.
type failureLog struct {
	what    string
	log     *slog.Logger
	errors  prometheus.Counter
	mu      sync.Mutex
	failing bool
}

// record counts and (on a change) logs err, and reports whether it was one.
func (f *failureLog) record(err error) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.errors.Inc()
		if !f.failing {
			f.log.Warn("metrics: collecting failed; will retry at every scrape", "collector", f.what, "err", err)
		}
		f.failing = true
		return true
	}
	if f.failing {
		f.log.Info("metrics: collecting works again", "collector", f.what)
	}
	f.failing = false
	return false
}
