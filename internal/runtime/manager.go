package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/render"
)

// Options configure a Manager.
type Options struct {
	// Binary is the nginx (or angie) executable.
	Binary   string
	StateDir layout.Dir
	Log      *slog.Logger
	// Output receives nginx's own stderr and stdout (its error and access
	// logs); the controller's stderr by default.
	Output io.Writer
	// VerifyTimeout bounds the wait for new workers to answer with the new
	// configuration version after a reload.
	VerifyTimeout time.Duration
}

// ConfigError is returned when nginx -t rejects the files. Output is
// nginx's message, which names the offending file.
type ConfigError struct{ Output string }

func (e *ConfigError) Error() string { return "nginx -t failed: " + e.Output }

// ApplyResult describes one Apply.
type ApplyResult struct {
	// Reloaded is true when nginx was reloaded (or started) and verified.
	Reloaded bool
	Duration time.Duration
}

// Manager owns the nginx master process and the files it reads.
type Manager struct {
	opts   Options
	client *http.Client

	mu      sync.Mutex // serialises Apply, start and stop
	files   fileSet    // what is on disk now: always the last good set
	version string     // the version live in nginx
	proc    *os.Process
	exited  chan struct{} // closed when proc exits
	stopped bool

	// Respawned receives a value after nginx was restarted following a
	// crash, so the controller can re-push dynamic state.
	Respawned chan struct{}
}

// NewManager prepares the state directory. It does not start nginx: the
// first Apply does, so nginx never runs without a verified configuration.
func NewManager(opts Options) (*Manager, error) {
	if opts.Output == nil {
		opts.Output = os.Stderr
	}
	if opts.VerifyTimeout == 0 {
		opts.VerifyTimeout = 15 * time.Second
	}
	if err := prepareStateDir(opts.StateDir); err != nil {
		return nil, err
	}
	if err := EnsureDefaultCert(opts.StateDir, time.Now()); err != nil {
		return nil, err
	}
	sock := opts.StateDir.StatusSocket()
	m := &Manager{
		opts:      opts,
		files:     fileSet{dir: opts.StateDir, files: render.Files{}},
		Respawned: make(chan struct{}, 1),
		client: &http.Client{
			Timeout: 2 * time.Second,
			Transport: &http.Transport{
				DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, "unix", sock)
				},
				DisableKeepAlives: true, // each poll must be free to reach a new worker
			},
		},
	}
	if err := m.stopLeftover(); err != nil {
		return nil, err
	}
	return m, nil
}

// Version returns the configuration version the live workers report.
func (m *Manager) Version() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.version
}

// Apply makes files live: it writes what changed, runs nginx -t, reloads
// (or starts) nginx and waits until a worker of the new generation reports
// version. When nginx -t fails or the new version never shows, the last good
// files are restored and nginx keeps serving them. Unchanged files cause no
// reload.
func (m *Manager) Apply(ctx context.Context, files render.Files, version string) (ApplyResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return ApplyResult{}, errors.New("nginx manager is stopped")
	}
	if m.proc != nil && m.files.equal(files) && m.version == version {
		return ApplyResult{}, nil
	}
	start := time.Now()
	last := m.files.files
	if _, err := m.files.sync(files); err != nil {
		m.restore(last)
		return ApplyResult{}, err
	}
	if out, err := m.test(ctx); err != nil {
		m.restore(last)
		return ApplyResult{}, err
	} else if out != "" {
		m.opts.Log.Warn("nginx -t warnings", "output", out)
	}
	if err := m.reloadAndVerify(ctx, version); err != nil {
		if m.proc == nil {
			// Nothing was serving yet; keep the files and report.
			return ApplyResult{}, err
		}
		m.restore(last)
		if rerr := m.signal(syscall.SIGHUP); rerr != nil {
			m.opts.Log.Error("reload after rollback failed", "err", rerr)
		}
		return ApplyResult{}, err
	}
	m.version = version
	return ApplyResult{Reloaded: true, Duration: time.Since(start)}, nil
}

// restore puts the last good files back.
func (m *Manager) restore(last render.Files) {
	if _, err := m.files.sync(last); err != nil {
		m.opts.Log.Error("restoring the last good configuration failed", "err", err)
	}
}

// test runs nginx -t on the files on disk.
func (m *Manager) test(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, m.opts.Binary, m.args("-t", "-q")...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	msg := strings.TrimSpace(out.String())
	if err != nil {
		if msg == "" {
			msg = err.Error()
		}
		return msg, &ConfigError{Output: msg}
	}
	return msg, nil
}

func (m *Manager) args(extra ...string) []string {
	return append([]string{"-p", string(m.opts.StateDir) + "/", "-e", "stderr", "-c", m.opts.StateDir.MainConf()}, extra...)
}

// reloadAndVerify starts nginx if it is not running, else sends SIGHUP
// (what "nginx -s reload" does, without re-reading the pid file), then polls
// the status socket until the new version answers.
func (m *Manager) reloadAndVerify(ctx context.Context, version string) error {
	if m.proc == nil {
		if err := m.start(); err != nil {
			return err
		}
	} else if err := m.signal(syscall.SIGHUP); err != nil {
		return err
	}
	return m.waitVersion(ctx, version, m.opts.VerifyTimeout)
}

func (m *Manager) waitVersion(ctx context.Context, version string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	var lastErr error
	for {
		v, err := m.queryVersion(ctx)
		if err == nil && v == version {
			return nil
		}
		last, lastErr = v, err
		if time.Now().After(deadline) {
			if lastErr != nil {
				return fmt.Errorf("nginx did not report configuration %s within %s: %w", version, timeout, lastErr)
			}
			return fmt.Errorf("nginx did not report configuration %s within %s (workers still report %q)", version, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.exited:
			return errors.New("nginx exited while reloading")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (m *Manager) queryVersion(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://causeway/causeway/config-version", nil)
	if err != nil {
		return "", err
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// start launches the nginx master in its own process group, so signals
// meant for the controller (Ctrl-C) do not reach it and its workers can be
// cleaned up as one group.
func (m *Manager) start() error {
	// A unix socket left by a killed nginx would make bind() fail.
	for _, s := range []string{m.opts.StateDir.StatusSocket(), m.opts.StateDir.DynamicSocket()} {
		os.Remove(s)
	}
	cmd := exec.Command(m.opts.Binary, m.args()...)
	cmd.Stdout, cmd.Stderr = m.opts.Output, m.opts.Output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", m.opts.Binary, err)
	}
	exited := make(chan struct{})
	m.proc, m.exited = cmd.Process, exited
	go func() {
		err := cmd.Wait()
		// The master is gone; kill any workers it left behind, which would
		// otherwise keep the listening sockets.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		m.opts.Log.Info("nginx master exited", "pid", cmd.Process.Pid, "status", err)
		close(exited)
	}()
	m.opts.Log.Info("nginx started", "pid", cmd.Process.Pid, "binary", m.opts.Binary)
	return nil
}

func (m *Manager) signal(sig syscall.Signal) error {
	if m.proc == nil {
		return errors.New("nginx is not running")
	}
	if err := m.proc.Signal(sig); err != nil {
		return fmt.Errorf("signal nginx: %w", err)
	}
	return nil
}

// Supervise restarts nginx with backoff whenever it exits on its own, until
// ctx is done. It returns after Stop.
func (m *Manager) Supervise(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for {
		m.mu.Lock()
		exited, running := m.exited, m.proc != nil
		m.mu.Unlock()
		if !running {
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
				continue
			}
		}
		started := time.Now()
		select {
		case <-ctx.Done():
			return
		case <-exited:
		}
		m.mu.Lock()
		if m.stopped {
			m.mu.Unlock()
			return
		}
		if time.Since(started) > 30*time.Second {
			backoff = 100 * time.Millisecond
		}
		m.opts.Log.Error("nginx exited unexpectedly; restarting", "backoff", backoff)
		m.proc = nil
		m.mu.Unlock()

		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
		if err := m.respawn(ctx); err != nil {
			m.opts.Log.Error("restarting nginx failed", "err", err)
		}
	}
}

func (m *Manager) respawn(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped || m.proc != nil {
		return nil
	}
	if err := m.start(); err != nil {
		return err
	}
	if err := m.waitVersion(ctx, m.version, m.opts.VerifyTimeout); err != nil {
		return err
	}
	select {
	case m.Respawned <- struct{}{}:
	default:
	}
	m.opts.Log.Info("nginx restarted and serving", "version", m.version)
	return nil
}

// Stop asks nginx to finish in-flight requests and exit (what "nginx -s
// quit" does), and kills it if ctx ends first.
func (m *Manager) Stop(ctx context.Context) error {
	m.mu.Lock()
	m.stopped = true
	proc, exited := m.proc, m.exited
	m.mu.Unlock()
	if proc == nil {
		return nil
	}
	if err := proc.Signal(syscall.SIGQUIT); err != nil {
		return nil // already gone
	}
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
		syscall.Kill(-proc.Pid, syscall.SIGKILL)
		<-exited
		return fmt.Errorf("nginx did not quit in time; killed")
	}
}

// stopLeftover ends an nginx master that an earlier, killed controller
// left running on this state directory: it holds the ports and would make
// ours fail to start. Only a process whose command line names our
// configuration file is touched.
func (m *Manager) stopLeftover() error {
	data, err := os.ReadFile(m.opts.StateDir.PidFile())
	if err != nil {
		return nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return nil
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || !bytes.Contains(cmdline, []byte(m.opts.StateDir.MainConf())) {
		return nil
	}
	m.opts.Log.Warn("stopping an nginx left running by an earlier controller", "pid", pid)
	syscall.Kill(pid, syscall.SIGQUIT)
	for i := 0; i < 100; i++ {
		if syscall.Kill(pid, 0) != nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	syscall.Kill(pid, syscall.SIGKILL)
	return nil
}
