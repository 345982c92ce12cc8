package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/layout"
)

// TestWarnHopSockets: a --state-dir too long for the hop servers' sockets
// is said at start, with the directory, not left to show as reloads.
func TestWarnHopSockets(t *testing.T) {
	for _, c := range []struct {
		dir  string
		warn bool
	}{
		{"/var/lib/causeway", false},
		{"/" + strings.Repeat("d", 100), true},
	} {
		var logs bytes.Buffer
		warned := warnHopSockets(slog.New(slog.NewTextHandler(&logs, nil)), layout.Dir(c.dir))
		if warned != c.warn || strings.Contains(logs.String(), "reload-free hosts unavailable") != c.warn {
			t.Errorf("state dir of %d bytes: warned %v, log %q; want a warning: %v", len(c.dir), warned, logs.String(), c.warn)
		}
		if c.warn && !strings.Contains(logs.String(), c.dir) {
			t.Errorf("the warning does not name the state directory: %q", logs.String())
		}
	}
}
