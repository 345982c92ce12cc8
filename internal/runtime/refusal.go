package runtime

import (
	"bytes"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A reload is a SIGHUP without a prior nginx -t: the master parses the
// files itself and, when it cannot use them, logs why at [emerg] (or
// [alert]) under its own pid and keeps serving the old configuration. So
// nginx -t runs only when the master says something went wrong, to get the
// message that names the culprit; at 10,000 hosts that saves a whole parse
// of the configuration on every change.

// refusalTap passes nginx's output on to out and, during a watch, keeps
// the [emerg] and [alert] lines the watched master logs.
type refusalTap struct {
	out io.Writer

	mu sync.Mutex
	w  *complaints // the watch in progress, if any
}

// complaints are what one master logged at [emerg] or [alert] during a
// watch: first closes at the first such line, and more receives a token
// after each write that added some. Of their text, only what a refusal
// nginx -t cannot see needs keeping (bind failures, below); nginx -t says
// the rest.
type complaints struct {
	pid   int // anyPID: every process's lines count
	first chan struct{}
	more  chan struct{}

	mu    sync.Mutex
	fired bool
	// binds are the distinct "bind() to ADDRESS failed (…)" messages (at
	// most maxBinds); gaveUp is set once the master said "still could
	// not bind()".
	binds  []string
	gaveUp bool
}

// anyPID watches every process: when nginx starts, its master's pid is
// not known before its first lines may be written.
const anyPID = -1

// maxBinds bounds the bind failures a watch keeps: a refusal names at
// most that many addresses at once, the rest at the next try.
const maxBinds = 64

var (
	emergTag = []byte("[emerg] ")
	alertTag = []byte("[alert] ")
)

func (t *refusalTap) Write(p []byte) (int, error) {
	t.mu.Lock()
	if w := t.w; w != nil {
		if lines := masterComplaints(p, w.pid); len(lines) > 0 {
			w.add(lines)
		}
	}
	t.mu.Unlock()
	return t.out.Write(p)
}

func (w *complaints) add(lines []byte) {
	w.mu.Lock()
	for line := range bytes.Lines(lines) {
		if bytes.Contains(line, bindGaveUpTag) {
			w.gaveUp = true
		}
		if msg := bindFailure(line); msg != "" && len(w.binds) < maxBinds && !slices.Contains(w.binds, msg) {
			w.binds = append(w.binds, msg)
		}
	}
	if !w.fired {
		w.fired = true
		close(w.first)
	}
	w.mu.Unlock()
	select {
	case w.more <- struct{}{}:
	default:
	}
}

// bindRefusal is what the master could not bind so far, one message a
// line ("" for nothing), and whether it has given up.
func (w *complaints) bindRefusal() (msg string, gaveUp bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.binds, "\n"), w.gaveUp
}

// awaitGaveUp waits up to d for the master to give up binding.
func (w *complaints) awaitGaveUp(d time.Duration) {
	timeout := time.After(d)
	for {
		if _, gaveUp := w.bindRefusal(); gaveUp {
			return
		}
		select {
		case <-w.more:
		case <-timeout:
			return
		}
	}
}

// watch starts keeping pid's complaints (anyPID: every process's); stop
// (or the next watch) ends the watch.
func (t *refusalTap) watch(pid int) *complaints {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.w = &complaints{pid: pid, first: make(chan struct{}), more: make(chan struct{}, 1)}
	return t.w
}

func (t *refusalTap) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.w = nil
}

// masterComplaints returns the [emerg] and [alert] lines that process pid
// (anyPID: any process) wrote among lines (whole lines of nginx's error
// log: "2026/11/26 12:00:00 [emerg] 1234#1234: message"), each ending in a
// newline. Only the log's own layout counts, not the same words inside
// another line (an access log line, say).
func masterComplaints(lines []byte, pid int) []byte {
	if !bytes.Contains(lines, emergTag) && !bytes.Contains(lines, alertTag) {
		return nil // the common case, at the cost of two scans
	}
	want := []byte(strconv.Itoa(pid) + "#")
	var out []byte
	for len(lines) > 0 {
		line := lines
		if i := bytes.IndexByte(lines, '\n'); i >= 0 {
			line, lines = lines[:i], lines[i+1:]
		} else {
			lines = nil
		}
		// The time is 19 bytes and a space; the level tag follows.
		const at = len("2026/11/26 12:00:00 ")
		if len(line) < at+len(emergTag) || line[at-1] != ' ' {
			continue
		}
		rest := line[at:]
		if !bytes.HasPrefix(rest, emergTag) && !bytes.HasPrefix(rest, alertTag) {
			continue
		}
		rest = rest[len(emergTag):]
		if pid == anyPID {
			n := bytes.IndexByte(rest, '#')
			if n < 1 || !allDigits(rest[:n]) {
				continue
			}
			rest = rest[n+1:]
		} else if bytes.HasPrefix(rest, want) {
			rest = rest[len(want):]
		} else {
			continue
		}
		tid := bytes.IndexByte(rest, ':')
		if tid < 1 || !allDigits(rest[:tid]) {
			continue
		}
		out = append(append(out, line...), '\n')
	}
	return out
}

func allDigits(b []byte) bool {
	return !bytes.ContainsFunc(b, func(r rune) bool { return r < '0' || r > '9' })
}

// nginx -t does not bind the listening addresses, so it accepts files
// whose new address another process holds. At a reload the master then
// tries each such address five times, half a second apart, logging
// "bind() to ADDRESS failed (…)" at [emerg] each time, then "still could
// not bind()", and keeps the old configuration (at its first start, it
// exits). The controller names the object whose listener it is from the
// address (ConfigError.Output holds the messages, once each).
var (
	bindFailedTag = []byte(": bind() to ")
	bindGaveUpTag = []byte(": still could not bind()")
)

// bindFailure is the "bind() to ADDRESS failed (…)" message of an error
// log line, "" for another line.
func bindFailure(line []byte) string {
	i := bytes.Index(line, bindFailedTag)
	if i < 0 || !bytes.Contains(line[i:], []byte(" failed (")) {
		return ""
	}
	return string(bytes.TrimRight(line[i+2:], "\n"))
}
