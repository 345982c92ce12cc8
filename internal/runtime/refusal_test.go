package runtime

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestMasterComplaints(t *testing.T) {
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
			if got := masterComplaints([]byte(tc.lines), 42); (len(got) > 0) != tc.want {
				t.Fatalf("masterComplaints(%q) = %q, want a line: %v", tc.lines, got, tc.want)
			}
		})
	}
}

func TestRefusalTapSignalsOnceAndForwardsEverything(t *testing.T) {
	var out bytes.Buffer
	tap := &refusalTap{out: &out}
	line := []byte("2026/11/26 12:00:00 [emerg] 7#7: bad\n")
	tap.Write(line) // no watch yet: forwarded only
	seen := tap.watch(7).first
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
	seen = tap.watch(7).first
	select {
	case <-seen:
		t.Fatal("a new watch must start open")
	default:
	}
}

func TestMasterComplaintsKeepsTheLines(t *testing.T) {
	lines := "2026/11/26 12:00:00 [notice] 42#42: signal 1 (SIGHUP) received\n" +
		"2026/11/26 12:00:00 [emerg] 42#42: bind() to 127.0.0.1:9000 failed (98: Address already in use)\n" +
		"2026/11/26 12:00:00 [emerg] 43#43: from a worker\n" +
		"2026/11/26 12:00:00 [alert] 42#42: the last, unterminated"
	want := "2026/11/26 12:00:00 [emerg] 42#42: bind() to 127.0.0.1:9000 failed (98: Address already in use)\n" +
		"2026/11/26 12:00:00 [alert] 42#42: the last, unterminated\n"
	if got := string(masterComplaints([]byte(lines), 42)); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// When nginx starts, its pid is not known yet: any process's lines.
	any := string(masterComplaints([]byte(lines), anyPID))
	if !strings.Contains(any, "43#43: from a worker") || strings.Contains(any, "[notice]") {
		t.Fatalf("anyPID: got %q", any)
	}
	if got := masterComplaints([]byte("2026/11/26 12:00:00 [emerg] x#1: no pid\n"), anyPID); got != nil {
		t.Fatalf("anyPID took a line without a pid: %q", got)
	}
}

func TestComplaintsKeepBindFailures(t *testing.T) {
	tap := &refusalTap{out: io.Discard}
	w := tap.watch(7)
	bind := "2026/11/26 12:00:00 [emerg] 7#7: bind() to 127.0.0.1:9000 failed (98: Address already in use)\n"
	tap.Write([]byte(bind))
	<-w.first
	<-w.more
	if msg, gaveUp := w.bindRefusal(); msg != "bind() to 127.0.0.1:9000 failed (98: Address already in use)" || gaveUp {
		t.Fatalf("after one bind failure: %q, %v", msg, gaveUp)
	}
	tap.Write([]byte("2026/11/26 12:00:01 [notice] 7#7: try again to bind() after 500ms\n"))
	select {
	case <-w.more:
		t.Fatal("a notice is no complaint")
	default:
	}
	// The same address again, another one, then giving up: each
	// address once, in order.
	tap.Write([]byte(bind + "2026/11/26 12:00:01 [emerg] 7#7: bind() to [::1]:9001 failed (99: Cannot assign requested address)\n" + bind))
	tap.Write([]byte("2026/11/26 12:00:03 [emerg] 7#7: still could not bind()\n"))
	msg, gaveUp := w.bindRefusal()
	want := "bind() to 127.0.0.1:9000 failed (98: Address already in use)\nbind() to [::1]:9001 failed (99: Cannot assign requested address)"
	if msg != want || !gaveUp {
		t.Fatalf("after giving up: %q, %v; want %q, true", msg, gaveUp, want)
	}
	// However many addresses fail, giving up is seen and the messages
	// are bounded.
	w = tap.watch(7)
	var many strings.Builder
	for port := range 1000 {
		fmt.Fprintf(&many, "2026/11/26 12:00:00 [emerg] 7#7: bind() to 127.0.0.1:%d failed (98: Address already in use)\n", 10000+port)
	}
	many.WriteString("2026/11/26 12:00:03 [emerg] 7#7: still could not bind()\n")
	tap.Write([]byte(many.String()))
	msg, gaveUp = w.bindRefusal()
	if n := strings.Count(msg, "\n") + 1; n != maxBinds || !gaveUp {
		t.Fatalf("%d messages kept, gave up %v; want %d, true", n, gaveUp, maxBinds)
	}
}

func TestBindFailure(t *testing.T) {
	for _, tc := range []struct {
		line, want string
	}{
		{"2026/11/26 12:00:00 [emerg] 7#7: bind() to 127.0.0.1:9000 failed (98: Address already in use)\n", "bind() to 127.0.0.1:9000 failed (98: Address already in use)"},
		{"2026/11/26 12:00:00 [emerg] 7#7: bind() to [::1]:9000 failed (99: Cannot assign requested address)", "bind() to [::1]:9000 failed (99: Cannot assign requested address)"},
		{"2026/11/26 12:00:00 [emerg] 7#7: bind() to unix:/s/x.sock failed (13: Permission denied)\n", "bind() to unix:/s/x.sock failed (13: Permission denied)"},
		{"2026/11/26 12:00:00 [emerg] 7#7: unknown directive \"bind()\" in /s/x.conf:1\n", ""},
		{"2026/11/26 12:00:00 [emerg] 7#7: still could not bind()\n", ""},
	} {
		if got := bindFailure([]byte(tc.line)); got != tc.want {
			t.Errorf("bindFailure(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestAwaitGaveUp(t *testing.T) {
	tap := &refusalTap{out: io.Discard}
	w := tap.watch(anyPID)
	go func() {
		time.Sleep(20 * time.Millisecond)
		tap.Write([]byte("2026/11/26 12:00:00 [emerg] 9#9: bind() to 127.0.0.1:9000 failed (98: Address already in use)\n"))
		time.Sleep(20 * time.Millisecond)
		tap.Write([]byte("2026/11/26 12:00:02 [emerg] 9#9: still could not bind()\n"))
	}()
	w.awaitGaveUp(5 * time.Second)
	if msg, gaveUp := w.bindRefusal(); !gaveUp || msg == "" {
		t.Fatalf("got %q, %v", msg, gaveUp)
	}
	start := time.Now()
	w = tap.watch(anyPID)
	w.awaitGaveUp(50 * time.Millisecond)
	if msg, gaveUp := w.bindRefusal(); msg != "" || gaveUp || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("without lines: got %q, %v after %s", msg, gaveUp, time.Since(start))
	}
}
