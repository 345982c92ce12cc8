package runtime

import (
	"bytes"
	"io"
	"strconv"
	"sync"
)

// A reload is a SIGHUP without a prior nginx -t: the master parses the
// files itself and, when it cannot use them, logs why at [emerg] (or
// [alert]) under its own pid and keeps serving the old configuration. So
// nginx -t runs only when the master says something went wrong, to get the
// message that names the culprit; at 10,000 hosts that saves a whole parse
// of the configuration on every change.

// refusalTap passes nginx's output on to out and tells a waiting reload
// when the master logs an [emerg] or [alert] line.
type refusalTap struct {
	out io.Writer

	mu    sync.Mutex
	pid   int           // the master being watched; 0 for none
	seen  chan struct{} // closed at the first such line from pid
	fired bool
}

var (
	emergTag = []byte("[emerg] ")
	alertTag = []byte("[alert] ")
)

func (t *refusalTap) Write(p []byte) (int, error) {
	t.mu.Lock()
	if t.pid != 0 && !t.fired && masterComplains(p, t.pid) {
		t.fired = true
		close(t.seen)
	}
	t.mu.Unlock()
	return t.out.Write(p)
}

// watch starts watching for pid's complaints and returns a channel that
// closes at the first; stop (or the next watch) ends the watch.
func (t *refusalTap) watch(pid int) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pid, t.seen, t.fired = pid, make(chan struct{}), false
	return t.seen
}

func (t *refusalTap) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pid = 0
}

// masterComplains reports whether lines (whole lines of nginx's error log:
// "2026/11/26 12:00:00 [emerg] 1234#1234: message") hold an [emerg] or
// [alert] line written by process pid. Only the log's own layout counts,
// not the same words inside another line (an access log line, say).
func masterComplains(lines []byte, pid int) bool {
	if !bytes.Contains(lines, emergTag) && !bytes.Contains(lines, alertTag) {
		return false // the common case, at the cost of two scans
	}
	want := strconv.Itoa(pid) + "#"
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
		if !bytes.HasPrefix(rest, []byte(want)) {
			continue
		}
		rest = rest[len(want):]
		tid := bytes.IndexByte(rest, ':')
		if tid < 1 || bytes.ContainsFunc(rest[:tid], func(r rune) bool { return r < '0' || r > '9' }) {
			continue
		}
		return true
	}
	return false
}
