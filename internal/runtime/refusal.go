package runtime

import (
	"bytes"
	"io"
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
// watch: first closes at the first such line, more receives a token after
// each write that added lines, and text holds them (at most
// maxComplaintText bytes).
type complaints struct {
	pid   int // anyPID: every process's lines count
	first chan struct{}
	more  chan struct{}

	mu    sync.Mutex
	text  []byte
	fired bool
}

// anyPID watches every process: when nginx starts, its master's pid is
// not known before its first lines may be written.
const anyPID = -1

// maxComplaintText bounds the complaint text a watch keeps.
const maxComplaintText = 16 << 10

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
	w.text = append(w.text, lines[:min(len(lines), maxComplaintText-len(w.text))]...)
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

// Text is what the master logged at [emerg] or [alert] so far.
func (w *complaints) Text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.text)
}

// awaitText waits up to d for the text to satisfy done and returns it.
func (w *complaints) awaitText(done func(string) bool, d time.Duration) string {
	timeout := time.After(d)
	for {
		if text := w.Text(); done(text) {
			return text
		}
		select {
		case <-w.more:
		case <-timeout:
			return w.Text()
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
// not bind()", and keeps the old configuration. The controller names the
// object whose listener it is from the address (ConfigError.Output holds
// these lines).
const bindGaveUpTag = ": still could not bind()"

// bindFailed reports whether complaint lines say a bind() failed.
func bindFailed(text string) bool {
	return strings.Contains(text, ": bind() to ") && strings.Contains(text, " failed (")
}

// bindGaveUp reports whether the master has given up binding.
func bindGaveUp(text string) bool { return strings.Contains(text, bindGaveUpTag) }
