package writequeue

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Written remembers a status writer's last write to each object until
// snapshots catch up with it: a snapshot taken before the write landed
// still shows the old status, and deciding on it would write the same
// status again, on a resourceVersion that can only conflict. S is the
// status as the writer compares it.
type Written[S any] struct {
	mu sync.Mutex
	m  map[string]written[S]
}

type written[S any] struct {
	uid           types.UID
	before, after string // resourceVersions around the write
	status        S
}

// Record notes that status was written to key's object uid at
// resourceVersion before, which the write made after. Without after (a
// response that did not say) nothing is remembered.
func (w *Written[S]) Record(key string, uid types.UID, before, after string, status S) {
	if after == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]written[S]{}
	}
	w.m[key] = written[S]{uid: uid, before: before, after: after, status: status}
}

// Current returns the status of key's object uid and the resourceVersion
// to write on: have and rv as a snapshot shows them, or our last write
// when the snapshot predates it. A snapshot that caught up with the
// write, or an object changed or replaced since, ends the memory of it.
func (w *Written[S]) Current(key string, uid types.UID, rv string, have S) (S, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wr, ok := w.m[key]
	switch {
	case !ok:
	case wr.uid == uid && rv == wr.before:
		return wr.status, wr.after
	default:
		w.forget(key)
	}
	return have, rv
}

// Keep forgets the writes to objects whose UID present does not hold:
// objects gone from the snapshot.
func (w *Written[S]) Keep(present map[types.UID]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, wr := range w.m {
		if !present[wr.uid] {
			w.forget(key)
		}
	}
}

// forget ends the memory of key's write; w.mu is held. The last one
// forgotten drops the map, which keeps the room of its largest size
// (after the burst of a first start at 10,000 objects, ~1 MB).
func (w *Written[S]) forget(key string) {
	delete(w.m, key)
	if len(w.m) == 0 {
		w.m = nil
	}
}
