package runtime

import (
	"bytes"
	"testing"
	"time"
)

func TestMasterComplains(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines string
		want  bool
	}{
		{"emerg from the master", "2026/11/26 12:00:00 [emerg] 42#42: unknown directive \"x\" in /s/nginx.conf:3\n", true},
		{"alert from the master", "2026/11/26 12:00:00 [alert] 42#42: could not open error log file\n", true},
		{"among other lines", "a\n2026/11/26 12:00:00 [notice] 42#42: signal 1 (SIGHUP) received\n2026/11/26 12:00:00 [emerg] 42#42: bad\nb\n", true},
		{"emerg from a worker", "2026/11/26 12:00:00 [emerg] 43#43: something\n", false},
		{"a pid that only starts alike", "2026/11/26 12:00:00 [emerg] 421#421: something\n", false},
		{"error level", "2026/11/26 12:00:00 [error] 42#42: upstream timed out\n", false},
		{"warn level", "2026/11/26 12:00:00 [warn] 42#42: duplicate MIME type\n", false},
		{"the tag inside an access log line", `127.0.0.1 - - "GET /[emerg] 42#x HTTP/1.1" 404` + "\n", false},
		{"the tag in a line, the pid in a later one", "GET /[emerg] x\n2026/11/26 12:00:00 [error] 42#42: y\n", false},
		{"a later real line after a false one", "GET /[emerg] x#\n2026/11/26 12:00:00 [emerg] 42#42: y\n", true},
		{"no pid", "[emerg] \n", false},
		{"no thread id", "2026/11/26 12:00:00 [emerg] 42#: bad\n", false},
		{"the last line unterminated", "2026/11/26 12:00:00 [emerg] 42#42: bad", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := masterComplains([]byte(tc.lines), 42); got != tc.want {
				t.Fatalf("masterComplains(%q) = %v, want %v", tc.lines, got, tc.want)
			}
		})
	}
}

func TestRefusalTapSignalsOnceAndForwardsEverything(t *testing.T) {
	var out bytes.Buffer
	tap := &refusalTap{out: &out}
	line := []byte("2026/11/26 12:00:00 [emerg] 7#7: bad\n")
	tap.Write(line) // no watch yet: forwarded only
	seen := tap.watch(7)
	select {
	case <-seen:
		t.Fatal("a line from before the watch must not count")
	default:
	}
	tap.Write([]byte("2026/11/26 12:00:00 [emerg] 8#8: another process\n"))
	select {
	case <-seen:
		t.Fatal("another pid's line must not count")
	default:
	}
	tap.Write(line)
	tap.Write(line) // a second complaint must not close the channel again
	select {
	case <-seen:
	case <-time.After(time.Second):
		t.Fatal("the master's [emerg] was not noticed")
	}
	tap.stop()
	if got := bytes.Count(out.Bytes(), []byte("\n")); got != 4 {
		t.Fatalf("forwarded %d lines, want 4", got)
	}
	// A new watch starts afresh.
	seen = tap.watch(7)
	select {
	case <-seen:
		t.Fatal("a new watch must start open")
	default:
	}
}
