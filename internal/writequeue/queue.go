// Package writequeue is the leader's queue of writes to the Kubernetes
// API: the status of the objects the controller serves (package status)
// and the objects it creates for them (package owned). A user of the
// queue computes what it wants written, by key, and writes one key; the
// queue does the rest:
//
//   - a key is queued once however often it is planned, and a write
//     always takes the newest target planned for it;
//   - writes run on a few workers, and only while this replica leads;
//   - a failed write is retried with exponential backoff per key;
//   - a written target is dropped unless a newer plan replaced it
//     meanwhile;
//   - everything stops when the context of Run is done.
//
// Written adds what status writers need besides: the memory of their own
// writes until snapshots catch up with them.
package writequeue

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// Options configure a Queue.
type Options struct {
	// Workers is how many writes may be in flight. Zero means 1.
	Workers int
	// BaseDelay is the first retry's delay, doubled at each further
	// failure of the same key up to MaxDelay. Zero means 200ms and 30s.
	BaseDelay, MaxDelay time.Duration
	// IsLeader gates every write: a key taken while this replica does not
	// lead is not written, and its target stays until the next plan
	// (which the user makes on becoming leader). Nil means always.
	IsLeader func() bool
	// OnRetry, when set, is told of every failed write before its key is
	// retried (to log it). A write that fails because Run's context is
	// done is not retried, nor told.
	OnRetry func(key string, err error)
}

// Write writes target, the newest planned for key. Its error retries the
// key; nil drops the target (an object gone meanwhile is nil too).
type Write[T any] func(ctx context.Context, key string, target T) error

// Queue holds, by key, the targets still to write, and writes them.
type Queue[T any] struct {
	opts  Options
	write Write[T]
	queue workqueue.TypedRateLimitingInterface[string]

	mu      sync.Mutex
	targets map[string]target[T]
	seq     uint64 // numbers targets, so a finished write never drops a newer one
}

type target[T any] struct {
	t   T
	seq uint64
}

// New returns a Queue that writes with write; Run starts its workers.
func New[T any](opts Options, write Write[T]) *Queue[T] {
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	if opts.BaseDelay <= 0 {
		opts.BaseDelay = 200 * time.Millisecond
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = 30 * time.Second
	}
	if opts.IsLeader == nil {
		opts.IsLeader = func() bool { return true }
	}
	return &Queue[T]{
		opts:  opts,
		write: write,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](opts.BaseDelay, opts.MaxDelay),
			workqueue.TypedRateLimitingQueueConfig[string]{}),
		targets: map[string]target[T]{},
	}
}

// Set makes targets the writes to do, replacing every earlier plan, and
// queues each key. A key queued before and missing from targets finds
// nothing to write.
func (q *Queue[T]) Set(targets map[string]T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	next := make(map[string]target[T], len(targets))
	for key, t := range targets {
		q.seq++
		next[key] = target[T]{t: t, seq: q.seq}
		q.queue.Add(key)
	}
	q.targets = next
}

// Pending is the number of targets still to write (for tests and
// benchmarks).
func (q *Queue[T]) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.targets)
}

// Run writes until ctx is done, then waits for the writes in flight.
func (q *Queue[T]) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range q.opts.Workers {
		wg.Go(func() {
			for q.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	q.queue.ShutDown()
	wg.Wait()
}

// next writes one key; false stops the worker.
func (q *Queue[T]) next(ctx context.Context) bool {
	key, shutdown := q.queue.Get()
	if shutdown {
		return false
	}
	defer q.queue.Done(key)
	q.mu.Lock()
	t, ok := q.targets[key]
	q.mu.Unlock()
	if !ok || !q.opts.IsLeader() {
		q.queue.Forget(key)
		return true
	}
	if err := q.write(ctx, key, t.t); err != nil {
		if ctx.Err() != nil {
			return false
		}
		if q.opts.OnRetry != nil {
			q.opts.OnRetry(key, err)
		}
		q.queue.AddRateLimited(key)
		return true
	}
	q.queue.Forget(key)
	q.mu.Lock()
	if cur, ok := q.targets[key]; ok && cur.seq == t.seq {
		delete(q.targets, key)
		if len(q.targets) == 0 {
			// A map keeps the room of its largest size: after a burst
			// (10,000 statuses at a first start) that is ~1 MB for
			// nothing.
			q.targets = map[string]target[T]{}
		}
	}
	q.mu.Unlock()
	return true
}
