package status

import (
	"context"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/causeway/causeway/internal/writequeue"
)

// statusQueue is what every status writer shares: it plans the writes
// each sync's Outcome asks for while this replica leads, and writes them
// through the leader's write queue. A writer adds what it writes: the
// plan, by key, and the write of one key.
//
// It keeps no Outcome between syncs. An Outcome holds the snapshot's
// objects, and the status writes themselves replace every one of them in
// the informers' caches: at 10,000 Ingresses, the last Outcome kept the
// versions before a burst of status writes alive next to the new ones
// until the next sync. A replica that begins leading, or whose published
// addresses change, asks the controller for a sync instead (the
// controller's Options.Resync), whose Outcome is planned like any other.
type statusQueue[T any] struct {
	queue    *writequeue.Queue[T]
	isLeader func() bool
	// plan returns the writes o asks for, or false to keep the last
	// plan's. It runs with mu held.
	plan func(o Outcome) (map[string]T, bool)

	mu sync.Mutex
}

// newStatusQueue returns a statusQueue with the backoff every status
// writer uses; what names its objects in log lines ("ingress", "object").
func newStatusQueue[T any](workers int, isLeader func() bool, log *slog.Logger, what string,
	plan func(Outcome) (map[string]T, bool), write writequeue.Write[T]) *statusQueue[T] {
	return &statusQueue[T]{
		queue: writequeue.New(writequeue.Options{
			Workers:   workers,
			BaseDelay: 200 * time.Millisecond, MaxDelay: 30 * time.Second,
			IsLeader: isLeader,
			OnRetry:  logRetry(log, what),
		}, write),
		isLeader: isLeader,
		plan:     plan,
	}
}

// Observe plans the writes of a sync's Outcome while this replica leads.
// It is cheap and never blocks on the API, so it may be called from the
// controller's sync.
func (q *statusQueue[T]) Observe(o Outcome) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.isLeader() {
		return
	}
	if targets, ok := q.plan(o); ok {
		q.queue.Set(targets)
	}
}

// Run writes until ctx is done.
func (q *statusQueue[T]) Run(ctx context.Context) { q.queue.Run(ctx) }

// Pending is the number of writes still to do (for tests and benchmarks).
func (q *statusQueue[T]) Pending() int { return q.queue.Pending() }

// logRetry logs a status write that failed. A conflict (the object
// changed since the snapshot) is retried quietly: by then a newer
// snapshot usually decides.
func logRetry(log *slog.Logger, what string) func(key string, err error) {
	return func(key string, err error) {
		if apierrors.IsConflict(err) {
			log.Debug("object changed while its status was written; retrying", what, key)
		} else {
			log.Warn("status not written; retrying", what, key, "err", err)
		}
	}
}
