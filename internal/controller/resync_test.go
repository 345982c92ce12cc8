package controller

import (
	"context"
	"testing"
	"time"
)

// TestResyncSyncsUnchanged: a request on Options.Resync runs a sync and
// hands its outcome to OnSync although nothing changed, at once (the
// quiet period is an hour here); a request made before a sync starts is
// answered by it (a replica leads before its first sync, at a start).
// The status writers keep no Outcome between syncs, so a replica that
// begins leading plans from this one.
func TestResyncSyncsUnchanged(t *testing.T) {
	snap := snapshot(2)
	resync := make(chan struct{}, 1)
	resync <- struct{}{} // before the first sync, which answers it
	results := make(chan SyncResult, 4)
	opts := testOptions(t, &staticSource{snap: snap})
	opts.Quiet, opts.MaxDelay, opts.Resync = time.Hour, time.Hour, resync
	opts.OnSync = func(res SyncResult) { results <- res }
	c := New(opts)
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
