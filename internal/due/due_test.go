package due

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type entry struct {
	Task
	runs int
}

// TestLoop: due entries run at once, at most Parallel at a time, every
// one of them even when more are due than may run; an entry runs again at
// the time its work set; one not due waits.
func TestLoop(t *testing.T) {
	var mu sync.Mutex
	entries := map[int]*entry{}
	for i := range 10 {
		entries[i] = &entry{}
	}
	entries[10] = &entry{Task: Task{Next: time.Now().Add(time.Hour)}}
	var inFlight, most atomic.Int32
	done := make(chan int, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Loop[int]{Lock: &mu, Parallel: 3, Wake: make(chan struct{}),
		Tasks: In(entries, func(e *entry) *Task { return &e.Task }),
		Begin: func(k int) func() {
			return func() {
				n := inFlight.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(5 * time.Millisecond)
				inFlight.Add(-1)
				mu.Lock()
				e := entries[k]
				e.runs++
				next := time.Now().Add(time.Hour)
				if e.runs == 1 && k == 0 {
					next = time.Now().Add(20 * time.Millisecond) // once more, soon
				}
				e.Finish(next)
				mu.Unlock()
				done <- k
			}
		},
	}.Run(ctx)
	seen := map[int]int{}
	for range 11 {
		select {
		case k := <-done:
			seen[k]++
		case <-time.After(5 * time.Second):
			t.Fatalf("only %v ran", seen)
		}
	}
	if seen[0] != 2 || len(seen) != 10 || seen[10] != 0 {
		t.Fatalf("runs %v; want each of 0-9 once, 0 twice, 10 (not due) never", seen)
	}
	if m := most.Load(); m > 3 {
		t.Fatalf("%d ran at once; Parallel is 3", m)
	}
}

// TestKeep: new keys get entries, kept ones keep theirs, the rest go.
func TestKeep(t *testing.T) {
	old := &entry{runs: 7}
	m := map[string]*entry{"a": old, "b": {}}
	added := Keep(m, []string{"a", "c"}, func(s string) string { return s }, func(string) *entry { return &entry{} })
	if !added || len(m) != 2 || m["a"] != old || m["c"] == nil || m["b"] != nil {
		t.Fatalf("added %v, %v", added, m)
	}
	if Keep(m, []string{"a", "c"}, func(s string) string { return s }, func(string) *entry { return &entry{} }) {
		t.Fatal("nothing new, yet added")
	}
}
