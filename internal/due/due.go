// Package due runs keyed background work when it falls due, a bounded
// number at a time: the loop shared by the ExternalName resolver and the
// OCSP stapler, which each keep a map of entries under their own lock,
// each entry due again at a time its last result decided.
package due

import (
	"context"
	"iter"
	"sync"
	"time"
)

// Task is the schedule of one entry; embed it. Its fields are read and
// written with the owner's lock held.
type Task struct {
	// Next is when the work is due; the zero time means now.
	Next time.Time
	busy bool
}

// Finish records that the entry's work ended and when it is due again.
func (t *Task) Finish(next time.Time) { t.busy, t.Next = false, next }

// Loop starts the work of due tasks.
type Loop[K comparable] struct {
	// Lock is the owner's lock, held while Tasks and Begin run.
	Lock sync.Locker
	// Tasks lists the entries.
	Tasks func() iter.Seq2[K, *Task]
	// Begin returns the work of a due entry (its task is then busy until
	// Finish), which runs without the lock and should end by calling
	// Finish with the lock held.
	Begin func(K) func()
	// Parallel bounds the work in flight.
	Parallel int
	// Wake receives when the owner changed the entries or their times.
	Wake <-chan struct{}
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Run starts due work until ctx is done, then waits for the work in
// flight.
func (l Loop[K]) Run(ctx context.Context) {
	now := l.Now
	if now == nil {
		now = time.Now
	}
	sem := make(chan struct{}, max(l.Parallel, 1))
	ended := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if next := l.startDue(now(), sem, ended, &wg); !next.IsZero() {
			timer.Reset(max(next.Sub(now()), time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return
		case <-l.Wake:
		case <-ended:
		case <-timer.C:
		}
	}
}

// startDue starts the work that is due, as far as sem allows, and returns
// when the next task not yet due is.
func (l Loop[K]) startDue(now time.Time, sem, ended chan struct{}, wg *sync.WaitGroup) time.Time {
	l.Lock.Lock()
	defer l.Lock.Unlock()
	var next time.Time
	for key, t := range l.Tasks() {
		if t.busy {
			continue
		}
		if t.Next.After(now) {
			if next.IsZero() || t.Next.Before(next) {
				next = t.Next
			}
			continue
		}
		select {
		case sem <- struct{}{}:
		default:
			continue // work ending wakes the loop
		}
		t.busy = true
		work := l.Begin(key)
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
			<-sem
			Signal(ended)
		}()
	}
	return next
}

// Signal sends on a channel of capacity one without blocking: signals
// sent while one is pending collapse into it.
func Signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// ErrText is err's text, "" for nil: for comparing the errors of two
// results.
func ErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// In lists the tasks of the entries of m, for Loop.Tasks: task gives an
// entry's embedded Task. m must be the owner's map itself, never replaced.
func In[K comparable, E any](m map[K]E, task func(E) *Task) func() iter.Seq2[K, *Task] {
	return func() iter.Seq2[K, *Task] {
		return func(yield func(K, *Task) bool) {
			for k, e := range m {
				if !yield(k, task(e)) {
					return
				}
			}
		}
	}
}

// Keep makes m hold exactly the entries of items, keyed by key: an item
// whose key m lacks gets newEntry(item), the entries of keys no item has are
// dropped. It reports whether any was added (new entries are due now).
func Keep[K comparable, E, I any](m map[K]E, items []I, key func(I) K, newEntry func(I) E) (added bool) {
	want := make(map[K]bool, len(items))
	for _, it := range items {
		k := key(it)
		want[k] = true
		if _, ok := m[k]; !ok {
			m[k] = newEntry(it)
			added = true
		}
	}
	for k := range m {
		if !want[k] {
			delete(m, k)
		}
	}
	return added
}
