package runtime

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	goruntime "runtime"
	"sync"
	"syscall"
	"time"
)

// spawner starts processes from one OS thread that never exits. Linux sends
// the parent-death signal when the thread that forked the child exits, not
// the process, and Go may retire threads; forking from a locked thread that
// lives as long as the controller ties nginx's life to the controller's.
type spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

func (s *spawner) start(cmd *exec.Cmd) error {
	s.once.Do(func() {
		s.reqs = make(chan spawnReq)
		go func() {
			goruntime.LockOSThread() // never unlocked: the thread must outlive every child
			for r := range s.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	s.reqs <- spawnReq{cmd, done}
	return <-done
}

// procAttr puts nginx in its own process group, so signals meant for the
// controller (Ctrl-C) do not reach it and its workers can be cleaned up as
// one group, and asks the kernel to send it SIGQUIT (graceful quit) when
// the controller dies by a signal it cannot catch.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGQUIT}
}

// logPipe carries nginx's stderr (its error log and, through /dev/stderr,
// its access log) to the controller, which writes it to its own output in
// whole lines: every write holds complete lines only, as many as have
// arrived (one write per batch, not per line: under load the access log
// is thousands of lines a second). Were nginx given the controller's
// stderr directly and that were a plain file, nginx would reopen it with
// its own offset and overwrite the controller's lines.
type logPipe struct {
	w    *os.File // nginx's end; kept open across nginx restarts
	done chan struct{}
	tap  *refusalTap
}

// maxLogLine bounds one forwarded line; longer ones are split.
const maxLogLine = 64 << 10

// logPause is how long the forwarder waits after each batch, so that the
// next one gathers the lines of that time: without it, a reader always
// waiting wakes for every line nginx writes, and a busy access log costs
// the controller a wake-up, a read and a write per request. logPipeSize
// (the pipe's capacity) holds about 100 ms of a 10 MB/s log, so nginx
// never waits for the forwarder meanwhile (nor with the default 64 KiB,
// which holds 6 ms).
const (
	logPause    = 5 * time.Millisecond
	logPipeSize = 1 << 20
)

// fSetPipeSize is Linux's F_SETPIPE_SZ.
const fSetPipeSize = 1031

func newLogPipe(out io.Writer) (*logPipe, error) {
	// A blocking pipe, kept out of Go's poller: a plain blocking read on
	// its own thread. Through the poller, every line nginx writes would
	// wake the runtime's epoll (even while the forwarder pauses), which
	// cost the controller more CPU per request than the copy itself.
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, err
	}
	r, w := os.NewFile(uintptr(fds[0]), "nginx-log-r"), os.NewFile(uintptr(fds[1]), "nginx-log-w")
	// Best effort: the default 64 KiB still works, with less slack.
	syscall.Syscall(syscall.SYS_FCNTL, uintptr(fds[1]), fSetPipeSize, logPipeSize)
	p := &logPipe{w: w, done: make(chan struct{}), tap: &refusalTap{out: out}}
	go func() {
		defer close(p.done)
		defer r.Close()
		forwardLines(r, p.tap, logPause)
	}()
	return p, nil
}

// forwardLines copies r to out until r ends, each write whole lines: the
// complete lines read so far, a line of maxLogLine bytes split with a
// newline, and an unterminated last line given one. It waits pause after
// each write.
func forwardLines(r io.Reader, out io.Writer, pause time.Duration) {
	buf := make([]byte, maxLogLine+1) // room for a newline after a full line
	held := 0
	for {
		n, err := r.Read(buf[held:maxLogLine])
		held += n
		if i := bytes.LastIndexByte(buf[:held], '\n'); i >= 0 {
			out.Write(buf[:i+1])
			held = copy(buf, buf[i+1:held])
			if err == nil && pause > 0 {
				time.Sleep(pause)
			}
		} else if held == maxLogLine {
			buf[held] = '\n'
			out.Write(buf[:held+1])
			held = 0
		}
		if err != nil {
			if held > 0 {
				buf[held] = '\n'
				out.Write(buf[:held+1])
			}
			return
		}
	}
}

// Close ends forwarding once every nginx process holding the pipe is gone,
// and waits up to a second for the last lines.
func (p *logPipe) Close() {
	p.w.Close()
	select {
	case <-p.done:
	case <-time.After(time.Second):
	}
}
