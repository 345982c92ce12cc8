package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/causeway/causeway/bench/internal/proc"
)

// Loopback address blocks, kept apart from the integration tests'
// 127.0.x.y so that a benchmark and tests can run on one machine at once.
const (
	backendNet = "127.77" // echo backends: 127.77.x.y, a fresh address per "pod"
	listenNet  = "127.78" // nginx listeners: 127.78.x.y
	anchorNet  = "127.79" // port anchors: 127.79.x.y
)

// env is what one run owns: a work directory, the causeway binary, the
// loopback addresses handed out so far and the cleanups to run on exit.
type env struct {
	dir  string
	top  string // the run's work directory when dir is a plane's (usePlane)
	bin  string
	keep bool
	// plane is the data plane under test: the binary the controllers and
	// the hand-written configs run on (-binary). Backend nginx stays
	// Debian's, which is not under test.
	plane dataPlane

	mu       sync.Mutex
	cleanups []func()
	ips      map[string]int
	shm      string // tmpfsDir, once made
}

func newEnv(keep bool) (*env, error) {
	dir, err := os.MkdirTemp("", "causeway-bench-")
	if err != nil {
		return nil, fmt.Errorf("work directory: %w", err)
	}
	// nginx workers run as an unprivileged user and must reach the state
	// directories below this one.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, fmt.Errorf("work directory: %w", err)
	}
	return &env{dir: dir, keep: keep, ips: map[string]int{}}, nil
}

// root is the run's work directory; e.dir is a subdirectory of it while
// a second data plane runs (usePlane).
func (e *env) root() string {
	if e.top != "" {
		return e.top
	}
	return e.dir
}

// usePlane makes p the data plane under test. Every plane after the first
// works in a subdirectory of its own, since sections name their
// directories without the plane.
func (e *env) usePlane(p dataPlane, i int) error {
	e.plane = p
	if i == 0 {
		return nil
	}
	if e.top == "" {
		e.top = e.dir
	}
	e.dir = filepath.Join(e.top, fmt.Sprintf("plane-%d-%s", i, p.flavour.Name))
	return os.MkdirAll(e.dir, 0o755)
}

// onClose registers f to run when the environment closes, last first.
func (e *env) onClose(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cleanups = append(e.cleanups, f)
}

// close runs the cleanups (stopping every process and server this run
// started) and removes the work directory unless -keep was given.
func (e *env) close() {
	e.mu.Lock()
	fs := e.cleanups
	e.cleanups = nil
	e.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	if e.keep {
		fmt.Fprintln(os.Stderr, "work directory kept:", e.root())
		return
	}
	os.RemoveAll(e.root())
}

// nextIP returns a fresh address in the block prefix ("127.77"). Each run
// starts at a third octet of its own, from its pid, so that two runs at
// once (an nginx and an Angie run, say) do not race for one address's
// ports.
func (e *env) nextIP(prefix string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	n, ok := e.ips[prefix]
	if !ok {
		n = os.Getpid() % 200 * 250
	}
	e.ips[prefix] = n + 1
	return fmt.Sprintf("%s.%d.%d", prefix, n/250, 1+n%250)
}

// build compiles ./cmd/causeway (without -race: timings are the point).
func (e *env) build(ctx context.Context) (string, error) {
	bin := filepath.Join(e.dir, "causeway")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/causeway/causeway/cmd/causeway")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build causeway (run from inside the repository, or pass -causeway): %w\n%s", err, out)
	}
	return bin, nil
}

// freePort asks the kernel for a port that is free on ip ("" means every
// address).
func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("free port on %q: %w", ip, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// runNginx checks conf with nginx -t, runs nginx on it in the foreground
// (its error log in dir), stops it when the environment closes, and waits
// until every addr accepts connections. what names it in errors.
func (e *env) runNginx(ctx context.Context, what, dir, conf string, addrs ...string) (*process, error) {
	return e.runBinary(ctx, e.plane.binary, what, dir, conf, addrs...)
}

// runBinary is runNginx on another binary. A configuration for a data
// plane other than Debian's nginx is adapted first (dataPlane.adapt).
func (e *env) runBinary(ctx context.Context, binary, what, dir, conf string, addrs ...string) (*process, error) {
	if binary == e.plane.binary && e.plane.other() {
		if err := e.plane.adapt(conf); err != nil {
			return nil, err
		}
	}
	errLog := filepath.Join(dir, "error.log")
	args := []string{"-p", dir, "-c", conf, "-e", errLog}
	if out, err := exec.CommandContext(ctx, binary, append([]string{"-t"}, args...)...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s -t on the %s config: %w\n%s", binary, what, err, out)
	}
	proc, err := startProcess(filepath.Join(dir, "nginx.out"), binary, args...)
	if err != nil {
		return nil, err
	}
	e.onClose(func() { proc.stop(syscall.SIGQUIT, 5*time.Second) })
	deadline := time.Now().Add(10 * time.Second)
	for _, addr := range addrs {
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			if proc.exited() || time.Now().After(deadline) {
				return nil, fmt.Errorf("%s nginx not listening on %s: %w\n%s", what, addr, err, tail(errLog, 2000))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return proc, nil
}

// process is a child process in its own process group. It receives
// SIGTERM if this benchmark dies, so nothing outlives a killed run.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// startProcess starts name with args, sending its output to logPath.
func startProcess(logPath, name string, args ...string) (*process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{}), log: f}
	go func() {
		cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends sig, waits up to grace, then kills the whole process group.
func (p *process) stop(sig syscall.Signal, grace time.Duration) {
	if p.exited() {
		return
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// tail returns the last n bytes of a log file, for error messages.
func tail(path string, n int64) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if int64(len(data)) > n {
		data = data[int64(len(data))-n:]
	}
	return string(data)
}

// nginxWorkers counts the children of master (nginx's workers) and
// returns the user+system CPU time they have used so far.
func nginxWorkers(master int) (int, time.Duration, error) {
	pids, err := childPIDs(master)
	if err != nil {
		return 0, 0, fmt.Errorf("nginx workers: %w", err)
	}
	var total time.Duration
	for _, pid := range pids {
		cpu, err := proc.CPU(pid)
		if err != nil {
			return 0, 0, fmt.Errorf("nginx worker: %w", err)
		}
		total += cpu
	}
	return len(pids), total, nil
}

// tmpfsDir is a directory on tmpfs (/dev/shm) for bulky logs, removed
// when the environment closes unless -keep was given; the work directory
// when there is no /dev/shm.
func (e *env) tmpfsDir() (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.shm != "" {
		return e.shm, nil
	}
	if st, err := os.Stat("/dev/shm"); err != nil || !st.IsDir() {
		e.shm = e.dir
		return e.shm, nil
	}
	dir, err := os.MkdirTemp("/dev/shm", "causeway-bench-")
	if err != nil {
		return "", fmt.Errorf("tmpfs directory: %w", err)
	}
	e.shm = dir
	// Registered before the processes that write there, so it runs
	// after they stop.
	e.cleanups = append(e.cleanups, func() {
		if e.keep {
			fmt.Fprintln(os.Stderr, "tmpfs directory kept:", dir)
			return
		}
		os.RemoveAll(dir)
	})
	return dir, nil
}

// childPIDs lists the processes whose parent is pid.
func childPIDs(pid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("read /proc: %w", err)
	}
	var out []int
	for _, d := range entries {
		child, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) && child != pid {
			out = append(out, child)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no child processes under pid %d", pid)
	}
	return out, nil
}
