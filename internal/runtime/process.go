package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/causeway/causeway/internal/layout"
)

// The nginx process: start, supervise, stop.

// start launches the nginx master (see procAttr for how it is tied to the
// controller) with its output on the log pipe.
func (m *Manager) start() error {
	if m.beforeOpen != nil {
		m.beforeOpen()
	}
	// A unix socket left by a killed nginx would make bind() fail: the
	// fixed ones, and every socket of the workers' directory (the hop,
	// auth loop, SNI and passthrough servers' listeners).
	stale := []string{m.opts.StateDir.StatusSocket(), m.opts.StateDir.DynamicSocket()}
	if entries, err := os.ReadDir(m.opts.StateDir.Path(layout.WorkerSocketsDir)); err == nil {
		for _, e := range entries {
			if e.Type()&os.ModeSocket != 0 {
				stale = append(stale, m.opts.StateDir.Path(layout.WorkerSocketsDir, e.Name()))
			}
		}
	}
	for _, s := range stale {
		os.Remove(s)
	}
	cmd := exec.Command(m.opts.Binary, m.args()...)
	cmd.Stdout, cmd.Stderr = m.logs.w, m.logs.w
	cmd.SysProcAttr = procAttr()
	if err := m.spawner.start(cmd); err != nil {
		return fmt.Errorf("start %s: %w", m.opts.Binary, err)
	}
	exited := make(chan struct{})
	m.proc, m.exited = cmd.Process, exited
	m.masterPID.Store(int64(cmd.Process.Pid))
	go func() {
		err := cmd.Wait()
		m.masterPID.CompareAndSwap(int64(cmd.Process.Pid), 0)
		// The master is gone; kill any workers it left behind, which would
		// otherwise keep the listening sockets.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		m.opts.Log.Info("nginx master exited", "pid", cmd.Process.Pid, "status", err)
		close(exited)
	}()
	m.opts.Log.Info("nginx started", "pid", cmd.Process.Pid, "binary", m.opts.Binary)
	return nil
}

// startFailed reports whether a master started for the first time has
// exited (waiting a little for one that is about to), and then forgets
// it, so that the next Apply starts nginx again rather than signalling a
// process that is gone.
func (m *Manager) startFailed() bool {
	if m.proc == nil {
		return true // it never started
	}
	select {
	case <-m.exited:
	case <-time.After(2 * time.Second):
		return false
	}
	m.proc = nil
	return true
}

// MasterPID is the pid of the running nginx master, or 0 while none runs.
// It never waits for an Apply in progress, so a metrics scrape can call it.
func (m *Manager) MasterPID() int { return int(m.masterPID.Load()) }

func (m *Manager) signal(sig syscall.Signal) error {
	if m.proc == nil {
		return errors.New("nginx is not running")
	}
	if err := m.proc.Signal(sig); err != nil {
		return fmt.Errorf("signal nginx: %w", err)
	}
	return nil
}

// Supervise restarts nginx with backoff whenever it exits on its own, and
// heals the state directory every HealEvery, until ctx is done. It returns
// after Stop.
func (m *Manager) Supervise(ctx context.Context) {
	go m.healLoop(ctx)
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
		if m.proc == nil || m.exited != exited {
			// A first start that failed: Apply has let it go and starts
			// nginx again with the next configuration.
			m.mu.Unlock()
			continue
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
	// Whatever killed nginx may have damaged its files too.
	if err := m.heal(); err != nil {
		return err
	}
	if err := m.start(); err != nil {
		return err
	}
	if err := m.waitVersion(ctx, m.version, m.opts.VerifyTimeout, nil); err != nil {
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
	defer m.logs.Close()
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

func (m *Manager) healLoop(ctx context.Context) {
	t := time.NewTicker(m.opts.HealEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.mu.Lock()
			if !m.stopped {
				m.heal()
			}
			m.mu.Unlock()
		}
	}
}
