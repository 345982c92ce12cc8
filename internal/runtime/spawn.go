package runtime

import (
	"bufio"
	"errors"
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
// its access log) to the controller, which writes each line whole to its
// own output. Were nginx given the controller's stderr directly and that
// were a plain file, nginx would reopen it with its own offset and
// overwrite the controller's lines.
type logPipe struct {
	w    *os.File // nginx's end; kept open across nginx restarts
	done chan struct{}
}

// maxLogLine bounds one forwarded line; longer ones are split.
const maxLogLine = 64 << 10

func newLogPipe(out io.Writer) (*logPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p := &logPipe{w: w, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer r.Close()
		br := bufio.NewReaderSize(r, maxLogLine)
		for {
			line, err := br.ReadSlice('\n')
			if len(line) > 0 {
				if line[len(line)-1] != '\n' {
					// line aliases the reader's buffer: extend a copy.
					line = append(append(make([]byte, 0, len(line)+1), line...), '\n')
				}
				out.Write(line) // one write per line: never interleaved mid-line
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return
			}
		}
	}()
	return p, nil
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
