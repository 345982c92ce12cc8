package writequeue

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// call is one write the queue made.
type call struct {
	key    string
	target int
	at     time.Time
}

// recorder is a Write that records its calls; each call first takes from
// gate, when set, and returns the next of fail's errors, if any.
type recorder struct {
	mu    sync.Mutex
	calls []call
	fail  []error
	gate  chan struct{}
	// started is sent each call's key before it takes from gate.
	started chan string
}

func (r *recorder) write(ctx context.Context, key string, target int) error {
	if r.started != nil {
		r.started <- key
	}
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{key: key, target: target, at: time.Now()})
	if len(r.fail) > 0 {
		err := r.fail[0]
		r.fail = r.fail[1:]
		return err
	}
	return nil
}

func (r *recorder) got() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.calls...)
}

// start runs q until the test ends, and returns the function that stops
// it early and waits for Run to return.
func start[T any](t *testing.T, q *Queue[T]) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { q.Run(ctx); close(done) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// settle waits until no target is pending.
func settle[T any](t *testing.T, q *Queue[T]) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for q.Pending() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d targets still pending", q.Pending())
		}
		time.Sleep(time.Millisecond)
	}
}

// next waits for r's next write to start and returns its key.
func (r *recorder) next(t *testing.T) string {
	t.Helper()
	select {
	case k := <-r.started:
		return k
	case <-time.After(5 * time.Second):
		t.Fatal("no write started")
		return ""
	}
}

// waitCalls waits until r has made n calls.
func waitCalls(t *testing.T, r *recorder, n int) []call {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := r.got()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes, want %d: %v", len(got), n, got)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestQueueWritesEachTarget(t *testing.T) {
	r := &recorder{}
	q := New(Options{Workers: 2}, r.write)
	start(t, q)
	q.Set(map[string]int{"a": 1, "b": 2})
	settle(t, q)
	got := r.got()
	if len(got) != 2 {
		t.Fatalf("writes = %v, want a and b once each", got)
	}
	for _, c := range got {
		if want := map[string]int{"a": 1, "b": 2}[c.key]; c.target != want {
			t.Errorf("%s written with %d, want %d", c.key, c.target, want)
		}
	}
}

// TestQueueDropsItsMapWhenDrained: once every target is written the queue
// holds a new, empty map rather than the one a burst grew (Go never
// shrinks a map).
func TestQueueDropsItsMapWhenDrained(t *testing.T) {
	r := &recorder{}
	q := New(Options{Workers: 2}, r.write)
	burst := map[string]int{}
	for i := range 1000 {
		burst[fmt.Sprint(i)] = i
	}
	q.Set(burst)
	q.mu.Lock()
	grown := reflect.ValueOf(q.targets).UnsafePointer()
	q.mu.Unlock()
	start(t, q)
	settle(t, q)
	waitCalls(t, r, 1000)
	q.mu.Lock()
	defer q.mu.Unlock()
	if reflect.ValueOf(q.targets).UnsafePointer() == grown {
		t.Error("the map the burst grew is still held, empty")
	}
}

// A key planned again while it is being written is written once more,
// with the newest target only, and the first write's end does not drop
// that newer target.
func TestQueueDedupesAndWritesTheNewest(t *testing.T) {
	r := &recorder{gate: make(chan struct{}), started: make(chan string, 10)}
	q := New(Options{Workers: 4}, r.write)
	start(t, q)
	q.Set(map[string]int{"a": 1})
	r.next(t) // a, target 1, is being written
	for target := 2; target <= 5; target++ {
		q.Set(map[string]int{"a": target})
	}
	if n := q.Pending(); n != 1 {
		t.Errorf("pending = %d, want 1", n)
	}
	r.gate <- struct{}{} // target 1 written
	r.next(t)
	r.gate <- struct{}{} // the newest
	settle(t, q)
	got := r.got()
	if len(got) != 2 || got[0].target != 1 || got[1].target != 5 {
		t.Errorf("writes = %v, want targets 1 then 5", got)
	}
	select {
	case k := <-r.started:
		t.Errorf("a further write of %s", k)
	case <-time.After(50 * time.Millisecond):
	}
}

// A key queued and then left out of a newer plan is not written.
func TestQueueDropsKeysAPlanLeavesOut(t *testing.T) {
	r := &recorder{gate: make(chan struct{}), started: make(chan string, 10)}
	q := New(Options{}, r.write) // one worker: b waits behind a
	start(t, q)
	q.Set(map[string]int{"a": 1})
	r.next(t)
	q.Set(map[string]int{"a": 1, "b": 2})
	q.Set(map[string]int{"a": 1})
	r.gate <- struct{}{}
	if k := r.next(t); k != "a" {
		t.Fatalf("then %s was written, want only a again", k)
	}
	r.gate <- struct{}{}
	settle(t, q)
	for _, c := range r.got() {
		if c.key == "b" {
			t.Errorf("b was written after a plan left it out")
		}
	}
}

// A failed write is retried with a delay that doubles at each failure,
// the failure told to OnRetry; a success resets the backoff.
func TestQueueRetriesWithBackoff(t *testing.T) {
	const base = 20 * time.Millisecond
	boom := errors.New("boom")
	r := &recorder{fail: []error{boom, boom, boom}}
	var retries atomic.Int32
	q := New(Options{BaseDelay: base, MaxDelay: time.Minute, OnRetry: func(key string, err error) {
		if key != "a" || !errors.Is(err, boom) {
			t.Errorf("OnRetry(%q, %v)", key, err)
		}
		retries.Add(1)
	}}, r.write)
	start(t, q)
	q.Set(map[string]int{"a": 1})
	got := waitCalls(t, r, 4)
	settle(t, q)
	for i := 1; i < len(got); i++ {
		if gap, min := got[i].at.Sub(got[i-1].at), base<<(i-1); gap < min {
			t.Errorf("retry %d after %v, want at least %v", i, gap, min)
		}
	}
	if n := retries.Load(); n != 3 {
		t.Errorf("OnRetry told %d times, want 3", n)
	}
	// After the success, the next failure waits the base delay again.
	r.mu.Lock()
	r.fail = []error{boom}
	r.mu.Unlock()
	q.Set(map[string]int{"a": 2})
	got = waitCalls(t, r, 6)
	if gap := got[5].at.Sub(got[4].at); gap > base<<3 {
		t.Errorf("the first retry after a success waited %v: the backoff was not reset", gap)
	}
	settle(t, q)
}

// A follower writes nothing and keeps its targets for the next plan;
// leadership lost during a write that fails stops its retries.
func TestQueueWritesOnlyWhileLeading(t *testing.T) {
	var leading atomic.Bool
	r := &recorder{gate: make(chan struct{}), started: make(chan string, 10), fail: []error{errors.New("lost")}}
	q := New(Options{BaseDelay: time.Millisecond, IsLeader: leading.Load}, r.write)
	start(t, q)

	q.Set(map[string]int{"a": 1})
	time.Sleep(50 * time.Millisecond)
	if got := r.got(); len(got) != 0 || len(r.started) != 0 {
		t.Fatalf("a follower wrote %v", got)
	}
	if n := q.Pending(); n != 1 {
		t.Errorf("pending = %d, want the target kept", n)
	}

	leading.Store(true)
	q.Set(map[string]int{"a": 2})
	r.next(t)
	leading.Store(false) // lost while the write is in flight, which fails
	r.gate <- struct{}{}
	time.Sleep(50 * time.Millisecond) // many retry delays
	select {
	case <-r.started:
		t.Fatal("a write was retried after leadership was lost")
	default:
	}
	if n := q.Pending(); n != 1 {
		t.Errorf("pending = %d, want the target kept", n)
	}

	leading.Store(true)
	q.Set(map[string]int{"a": 3}) // the plan made on becoming leader again
	r.next(t)
	r.gate <- struct{}{}
	settle(t, q)
	if got := r.got(); len(got) != 2 || got[1].target != 3 {
		t.Errorf("writes = %v, want targets 2 (failed) and 3", got)
	}
}

// Run returns once its context is done, after the write in flight, which
// is not retried nor told to OnRetry; keys still queued are not written.
func TestQueueStops(t *testing.T) {
	r := &recorder{gate: make(chan struct{}), started: make(chan string, 10)}
	q := New(Options{OnRetry: func(key string, err error) { t.Errorf("OnRetry(%q, %v) after stop", key, err) }}, r.write)
	stop := start(t, q)
	q.Set(map[string]int{"a": 1, "b": 2})
	r.next(t)
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was done")
	}
	if got := r.got(); len(got) != 0 {
		t.Errorf("writes = %v, want none", got)
	}
	if len(r.started) != 0 {
		t.Error("a queued key was written after the stop")
	}
}
