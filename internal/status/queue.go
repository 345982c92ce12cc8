package status

import (
	"context"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
)

// writeQueue is the work queue every status writer drains: keys of
// objects whose status is to be written, retried with backoff on failure.
// A conflict (the object changed since the snapshot) is retried quietly:
// by then a newer snapshot usually decides.
type writeQueue struct {
	queue   workqueue.TypedRateLimitingInterface[string]
	workers int
	log     *slog.Logger
	// what names the objects in log lines ("ingress", "virtualserver").
	what string
}

func newWriteQueue(workers int, log *slog.Logger, what string) writeQueue {
	return writeQueue{
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{}),
		workers: workers,
		log:     log,
		what:    what,
	}
}

func (q writeQueue) add(key string) { q.queue.Add(key) }

// run calls write for each key until ctx is done.
func (q writeQueue) run(ctx context.Context, write func(ctx context.Context, key string) error) {
	var wg sync.WaitGroup
	for range q.workers {
		wg.Go(func() {
			for q.next(ctx, write) {
			}
		})
	}
	<-ctx.Done()
	q.queue.ShutDown()
	wg.Wait()
}

func (q writeQueue) next(ctx context.Context, write func(ctx context.Context, key string) error) bool {
	key, shutdown := q.queue.Get()
	if shutdown {
		return false
	}
	defer q.queue.Done(key)
	if err := write(ctx, key); err != nil {
		if ctx.Err() != nil {
			return false
		}
		if apierrors.IsConflict(err) {
			q.log.Debug("object changed while its status was written; retrying", q.what, key)
		} else {
			q.log.Warn("status not written; retrying", q.what, key, "err", err)
		}
		q.queue.AddRateLimited(key)
		return true
	}
	q.queue.Forget(key)
	return true
}
