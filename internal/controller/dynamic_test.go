package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/balancer"
)

type recordingPusher struct{ pushes int }

func (p *recordingPusher) ReplaceEncoded(context.Context, int64, []byte) error {
	p.pushes++
	return nil
}
func (p *recordingPusher) CertificatesChanged(context.Context) error { return nil }

// TestDynamicChannelWritesOnlyChanges checks the state file always holds
// what a (re)starting nginx needs: the union before a reload, the pushed
// state after, and no rewrite or push when nothing changed.
func TestDynamicChannelWritesOnlyChanges(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state.json")
	p := &recordingPusher{}
	d := &dynamicChannel{pusher: p, stateFile: file}
	a := []balancer.Backend{{Key: "ns/a/80"}}
	ab := []balancer.Backend{{Key: "ns/a/80"}, {Key: "ns/b/80"}}
	keys := func() string {
		data, _ := os.ReadFile(file)
		return string(data)
	}
	ctx := context.Background()
	if err := d.prepare(ab); err != nil {
		t.Fatal(err)
	}
	d.push(ctx, ab, false)
	before, _ := os.Stat(file)
	// Unchanged: neither a file write nor a push.
	time.Sleep(10 * time.Millisecond)
	d.prepare(ab)
	if pushed, _ := d.push(ctx, ab, false); pushed || p.pushes != 1 {
		t.Fatalf("an unchanged state was pushed again")
	}
	if after, _ := os.Stat(file); !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("an unchanged state file was rewritten")
	}
	// Removing b: before the reload the file keeps b for old workers;
	// after the push it holds exactly a.
	d.prepare(a)
	if !strings.Contains(keys(), "ns/b/80") {
		t.Fatal("prepare must keep previously pushed backends")
	}
	d.push(ctx, a, false)
	if strings.Contains(keys(), "ns/b/80") {
		t.Fatal("after the push the file must hold the new state only")
	}
	// The next prepare of the same state must not be skipped wrongly: the
	// file already holds it, so skipping is right, and it still lacks b.
	d.prepare(a)
	if strings.Contains(keys(), "ns/b/80") {
		t.Fatal("state file regressed")
	}
}
