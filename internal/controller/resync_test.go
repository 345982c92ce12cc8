package controller

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/render"
)

// TestResyncSyncsUnchanged: a request on Options.Resync runs a sync and
// hands its outcome to OnSync although nothing changed, at once (the
// quiet period is an hour here); a request made before a sync starts is
// answered by it (a replica leads before its first sync, at a start). The status writers keep no Outcome
// between syncs, so a replica that begins leading plans from this one.
func TestResyncSyncsUnchanged(t *testing.T) {
	dir := layout.Dir(t.TempDir())
	if err := os.MkdirAll(dir.Path(layout.RunDir), 0o700); err != nil {
		t.Fatal(err)
	}
	snap := snapshot(2)
	resync := make(chan struct{}, 1)
	resync <- struct{}{} // before the first sync, which answers it
	results := make(chan SyncResult, 4)
	c := New(Options{Source: &staticSource{snap: snap}, Applier: nopApplier{},
		Model: build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"}},
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: metrics.New(),
		Render: render.Params{StateDir: dir, HTTPPort: 80, HTTPSPort: 443},
		Quiet:  time.Hour, MaxDelay: time.Hour, Resync: resync,
		OnSync: func(res SyncResult) { results <- res }})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	next := func(what string) SyncResult {
		t.Helper()
		select {
		case res := <-results:
			return res
		case <-time.After(10 * time.Second):
			t.Fatalf("no sync %s within 10 s", what)
			return SyncResult{}
		}
	}
	if res := next("at the start"); res.Err != nil {
		t.Fatalf("first sync: %v", res.Err)
	}
	select {
	case <-results:
		t.Fatal("a second sync for the request the first one answered")
	case <-time.After(100 * time.Millisecond):
	}
	resync <- struct{}{}
	res := next("after the request")
	if res.Err != nil || res.Snapshot != snap || len(res.Model.Servers) == 0 {
		t.Errorf("resync: err %v, same snapshot %v, %d servers; want the current state applied",
			res.Err, res.Snapshot == snap, len(res.Model.Servers))
	}
}
