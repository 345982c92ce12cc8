package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// RequestLog reads a log nginx writes for the controller, the metrics log
// or the span log: nginx's workers append a line per request (render
// writes the log_format), through a buffer each flushes once a second,
// and RequestLog hands the complete lines to its Lines (Requests.Count
// for the metrics log). No worker waits for the controller: a worker
// writes to a file, and the controller reads what is there when it comes.
//
// The file is never truncated under the workers, which append to it
// through descriptors nginx's master opened: the space of what was read
// is given back to the file system (a hole punched), and the file is
// renamed, and a new one started, just before a reload or a start of
// nginx (Rotate) once it is past RotateAfter. The renamed file is read
// until it has not grown for Drain (the old workers finish their requests
// and flush their buffers when they exit), then removed.
type RequestLog struct {
	path     string
	requests Lines
	log      *slog.Logger
	// Name is the log's name in messages ("metrics log").
	Name string
	// MaxLine bounds a line (8 KiB): a longer one is not a line of the
	// format, and is handed on as "overlong line" to be dropped.
	MaxLine int
	// RotateAfter is the size past which Rotate starts a new file;
	// Drain how long a renamed file is read after it last grew.
	RotateAfter int64
	Drain       time.Duration

	mu   sync.Mutex
	cur  *logFile
	old  []*logFile
	buf  []byte
	now  func() time.Time
	errs int // read errors since the last one logged
	// noPunch: the file system cannot punch holes (said once);
	// noCollapse: it cannot remove a range either (said once).
	noPunch, noCollapse bool
}

// logFile is one file of the log, read up to off.
type logFile struct {
	f    *os.File
	name string
	off  int64
	// punched is where the hole punched at the start of the file ends.
	punched int64
	// partial is the start of a line whose end is not written yet.
	partial []byte
	grew    time.Time
}

// Lines reads a log's lines: Count gets complete lines, OldWorkers says
// how long old workers may still write after a reload.
type Lines interface {
	Count(data []byte)
	OldWorkers() time.Duration
}

// maxLine bounds a line of the metrics log: far above what the format
// writes (about 100 bytes, plus a Host).
const maxLine = 8 << 10

// punchEvery is how much read data is given back at a time.
const punchEvery = 1 << 20

// OpenRequestLog starts the log at path, empty and readable by its owner
// only, before nginx opens it; r reads its lines. Renamed files a
// previous run left are removed: no nginx writes them any more.
func OpenRequestLog(path string, r Lines, log *slog.Logger) (*RequestLog, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	stale, _ := filepath.Glob(path + ".*")
	for _, p := range stale {
		if err := os.Remove(p); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
	}
	l := &RequestLog{path: path, requests: r, log: log, Name: "metrics log", MaxLine: maxLine, RotateAfter: 256 << 20,
		Drain: 5 * time.Minute, buf: make([]byte, 256<<10), now: time.Now}
	f, err := l.create()
	if err != nil {
		return nil, err
	}
	l.cur = f
	return l, nil
}

func (l *RequestLog) create() (*logFile, error) {
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Name, err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", l.Name, err)
	}
	return &logFile{f: f, name: l.path, grew: l.now()}, nil
}

// Run reads the log every interval until ctx ends.
func (l *RequestLog) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.Read()
		}
	}
}

// Read counts what the workers wrote since the last Read.
func (l *RequestLog) Read() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	keep := l.old[:0]
	// An old worker may finish a long request (a WebSocket) as late as
	// worker-shutdown-timeout after the reload.
	drain := max(l.Drain, l.requests.OldWorkers()+oldWorkerSlack)
	for _, f := range l.old {
		l.readFile(f, now)
		if now.Sub(f.grew) < drain {
			keep = append(keep, f)
			continue
		}
		l.retire(f)
	}
	clear(l.old[len(keep):])
	l.old = keep
	l.readFile(l.cur, now)
	l.follow(now)
}

// follow keeps the file at path the current one when something removed
// or replaced it (a cleanup of the state directory): nginx opens the name
// again at its next reload, so the lines would go there unread. The file
// left is read on like a renamed one; l.mu is held.
func (l *RequestLog) follow(now time.Time) {
	st, err := os.Stat(l.path)
	cur, cerr := l.cur.f.Stat()
	if err == nil && cerr == nil && os.SameFile(st, cur) {
		return
	}
	var f *os.File
	if err == nil {
		// Someone else's file (nginx's after a reload): read it whole,
		// and make it the owner's alone like ours.
		if f, err = os.OpenFile(l.path, os.O_RDWR, 0); err == nil {
			err = f.Chmod(0o600)
		}
	} else if errors.Is(err, os.ErrNotExist) {
		f, err = os.OpenFile(l.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		l.readError(l.cur, err)
		return
	}
	l.log.Warn(l.Name+": the file was removed or replaced; reading the new one, and the old one until it stops growing", "file", l.path)
	l.cur.name = "" // gone from the directory: nothing to remove
	l.cur.grew = now
	l.old = append(l.old, l.cur)
	l.cur = &logFile{f: f, name: l.path, grew: now}
	l.readFile(l.cur, now)
}

// readFile counts f's new complete lines; l.mu is held.
func (l *RequestLog) readFile(f *logFile, now time.Time) {
	for {
		n, err := f.f.ReadAt(l.buf, f.off)
		if n > 0 {
			f.off += int64(n)
			f.grew = now
			l.count(f, l.buf[:n])
		}
		if err != nil || n < len(l.buf) {
			if err != nil && !errors.Is(err, io.EOF) {
				l.readError(f, err)
			}
			break
		}
	}
	l.punch(f)
}

// count hands the complete lines of data (after f's partial line) to
// Requests and keeps the unfinished last one.
func (l *RequestLog) count(f *logFile, data []byte) {
	if len(f.partial) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			f.partial = l.keepPartial(f.partial, data)
			return
		}
		f.partial = append(f.partial, data[:i+1]...)
		l.requests.Count(f.partial)
		f.partial = f.partial[:0]
		data = data[i+1:]
	}
	end := bytes.LastIndexByte(data, '\n')
	if end >= 0 {
		l.requests.Count(data[:end+1])
	}
	f.partial = l.keepPartial(f.partial, data[end+1:])
}

// keepPartial appends the start of an unfinished line, counting a line
// longer than maxLine as dropped rather than growing without bound.
func (l *RequestLog) keepPartial(partial, more []byte) []byte {
	if len(partial)+len(more) > l.MaxLine {
		l.requests.Count([]byte("overlong line\n"))
		return partial[:0]
	}
	return append(partial, more...)
}

// punch gives back the space of what was read, a MiB at a time. Where
// the file system can (ext4, XFS), it removes that range from the start
// of the file (FALLOC_FL_COLLAPSE_RANGE), so the file's size stays near
// what is not read yet: the workers append (O_APPEND), which the kernel
// orders with the collapse, so their next lines land at the new end.
// Elsewhere it punches a hole and the apparent size grows until the
// next rotation; file systems that can do neither keep the space until
// then.
func (l *RequestLog) punch(f *logFile) {
	upTo := f.off &^ (punchEvery - 1)
	if upTo-f.punched < punchEvery {
		return
	}
	if f.punched == 0 && !l.noCollapse {
		st, err := f.f.Stat()
		if err != nil {
			l.readError(f, err)
			return
		}
		if upTo >= st.Size() {
			// A collapse may not reach the end of the file: all of it
			// was read, up to a MiB boundary. Next time.
			return
		}
		err = unix.Fallocate(int(f.f.Fd()), unix.FALLOC_FL_COLLAPSE_RANGE, 0, upTo)
		switch {
		case err == nil:
			f.off -= upTo
			return
		case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EINVAL):
			// EINVAL too: the range is a MiB multiple short of the end,
			// so the file system cannot do it for this file.
			l.noCollapse = true
			l.log.Info(l.Name+": the file system cannot remove what was read from the file's start; punching holes instead, so its apparent size grows until it is rotated at a reload past --metrics-log-rotate-size",
				"file", f.name, "err", err)
		default:
			l.readError(f, err)
			return
		}
	}
	err := unix.Fallocate(int(f.f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, f.punched, upTo-f.punched)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			if !l.noPunch {
				l.noPunch = true
				l.log.Warn(l.Name+": the file system cannot give read space back; the log's disk use grows until it is rotated at a reload past --metrics-log-rotate-size",
					"file", f.name)
			}
		} else {
			l.readError(f, err)
		}
		f.punched = upTo // do not try again for this range
		return
	}
	f.punched = upTo
}

func (l *RequestLog) readError(f *logFile, err error) {
	l.errs++
	if l.errs == 1 || l.errs%1000 == 0 {
		l.log.Warn(l.Name+": cannot read", "file", f.name, "err", err, "errors", l.errs)
	}
}

// retire closes and removes a renamed file that stopped growing.
func (l *RequestLog) retire(f *logFile) {
	if len(f.partial) > 0 {
		l.requests.Count(append(f.partial, '\n'))
	}
	f.f.Close()
	if f.name == "" {
		return
	}
	if err := os.Remove(f.name); err != nil && !errors.Is(err, os.ErrNotExist) {
		l.log.Warn(l.Name+": cannot remove a drained file", "file", f.name, "err", err)
	}
}

// Rotate starts a new file when the current one is past RotateAfter: call
// it just before nginx reloads or starts, which opens the log by its name
// again. The old file is read on until it stops growing.
func (l *RequestLog) Rotate() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.readFile(l.cur, l.now())
	if l.cur.off < l.RotateAfter {
		return
	}
	old := fmt.Sprintf("%s.%d", l.path, l.now().UnixNano())
	if err := os.Rename(l.path, old); err != nil {
		l.log.Warn(l.Name+": cannot rotate", "err", err)
		return
	}
	f, err := l.create()
	if err != nil {
		// Back to the old file: nginx opens it again under its name.
		if rerr := os.Rename(old, l.path); rerr != nil {
			l.log.Error(l.Name+": cannot rotate", "err", err, "and", rerr)
		}
		return
	}
	l.cur.name = old
	l.cur.grew = l.now()
	l.old = append(l.old, l.cur)
	l.cur = f
}

// Close reads what is left and closes the files.
func (l *RequestLog) Close() error {
	l.Read()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.old {
		f.f.Close()
	}
	l.old = nil
	return l.cur.f.Close()
}
