package status

import (
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/causeway/causeway/internal/writequeue"
)

// newQueue is the leader's write queue as every status writer uses it:
// what names the objects in log lines ("ingress", "object").
func newQueue[T any](workers int, isLeader func() bool, log *slog.Logger, what string, write writequeue.Write[T]) *writequeue.Queue[T] {
	return writequeue.New(writequeue.Options{
		Workers:   workers,
		BaseDelay: 200 * time.Millisecond, MaxDelay: 30 * time.Second,
		IsLeader: isLeader,
		OnRetry:  logRetry(log, what),
	}, write)
}

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
