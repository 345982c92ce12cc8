package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Process is one child (etcd, kube-apiserver, or a node component of
// test/cluster) whose output goes to a log file, so a failure can be
// explained by the tail of that log. The kernel kills it when the process
// that started it dies (childProcAttr).
type Process struct {
	name string
	cmd  *exec.Cmd
	// LogPath is the file its stdout and stderr are appended to.
	LogPath string
	done    chan struct{} // closed when the process has exited
	waitErr error         // valid once done is closed
}

// StartProcess starts bin with args, appending its stdout and stderr to
// logPath. env, when not nil, replaces the inherited environment.
func StartProcess(name, bin string, args []string, env []string, logPath string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	// The child holds its own copy of the descriptor; ours can go.
	defer logFile.Close()

	fmt.Fprintf(logFile, "=== %s %s\n", time.Now().Format(time.RFC3339), strings.Join(append([]string{bin}, args...), " "))

	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = env
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p := &Process{name: name, cmd: cmd, LogPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the process has already exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitError describes an unexpected exit, with the end of the log.
func (p *Process) ExitError() error {
	return fmt.Errorf("%s %w (%v); last lines of %s:\n%s", p.name, errProcessExited, p.waitErr, p.LogPath, p.LogTail(30))
}

// Stop asks the process to terminate and kills it if it has not exited
// within grace. It returns once the process is gone.
func (p *Process) Stop(grace time.Duration) {
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// LogTail returns up to n last lines of the process log.
func (p *Process) LogTail(n int) string {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// errProcessExited is wrapped by waits that end because the process died.
var errProcessExited = errors.New("exited early")
