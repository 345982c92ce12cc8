package status

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
)

// TransportServerResource is the resource whose status subresource the
// TransportServerWriter patches.
var TransportServerResource = nicv1.SchemeGroupVersion.WithResource("transportservers")

// TransportServerWriterOptions configure a TransportServerWriter.
type TransportServerWriterOptions struct {
	Client dynamic.Interface
	// IsLeader gates every write.
	IsLeader func() bool
	Log      *slog.Logger
	// Workers is how many writes may be in flight. Zero means 2.
	Workers int
	// OnWrite, when set, is told the outcome of every write (for metrics).
	OnWrite func(err error)
}

// TransportServerWriter keeps the status of every TransportServer of ours
// as NGINX Ingress Controller writes it: state, reason and message (a
// TransportServer's status has no externalEndpoints, so, unlike the
// VirtualServerWriter, it never waits for the published addresses). It
// follows the VirtualServerWriter's rules: leader only, only what differs
// from the snapshot, a rate-limited work queue, merge patches of the status
// subresource conditional on the snapshot's resourceVersion, nothing after
// a failed apply, and TransportServers of other classes never touched.
type TransportServerWriter struct {
	opts  TransportServerWriterOptions
	queue workqueue.TypedRateLimitingInterface[string]

	mu      sync.Mutex
	last    *Outcome
	targets map[string]tsTarget
	seq     uint64
	// written remembers our last write to each TransportServer until
	// snapshots catch up with it (see Writer.written).
	written map[string]tsWritten
}

type tsWritten struct {
	uid           types.UID
	before, after string
	status        nicv1.TransportServerStatus
}

type tsTarget struct {
	ts   *nicv1.TransportServer
	rv   string
	want nicv1.TransportServerStatus
	seq  uint64
}

// NewTransportServerWriter returns a TransportServerWriter; Run starts its
// workers.
func NewTransportServerWriter(opts TransportServerWriterOptions) *TransportServerWriter {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	return &TransportServerWriter{
		opts: opts,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{}),
		targets: map[string]tsTarget{},
		written: map[string]tsWritten{},
	}
}

// Observe takes a sync's Outcome; it never blocks on the API.
func (w *TransportServerWriter) Observe(o Outcome) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = &o
	w.planLocked()
}

// Resync re-plans from the latest Outcome; call it when this replica starts
// leading.
func (w *TransportServerWriter) Resync() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.planLocked()
}

func (w *TransportServerWriter) planLocked() {
	if w.last == nil || !w.opts.IsLeader() {
		return
	}
	o := *w.last
	if !o.Applied {
		// nginx still serves what it served; so does the status.
		return
	}
	targets := make(map[string]tsTarget, len(w.targets))
	present := make(map[types.UID]bool, len(o.TransportServers))
	for _, v := range o.TransportServers {
		ts := v.TransportServer
		present[ts.UID] = true
		have, rv := ts.Status, ts.ResourceVersion
		if wr, ok := w.written[v.Key()]; ok {
			if wr.uid == ts.UID && rv == wr.before {
				have, rv = wr.status, wr.after // the snapshot predates our write
			} else {
				delete(w.written, v.Key())
			}
		}
		want := WantTransportServerStatus(v)
		if have == want {
			continue
		}
		w.seq++
		targets[v.Key()] = tsTarget{ts: ts, rv: rv, want: want, seq: w.seq}
		w.queue.Add(v.Key())
	}
	for key, wr := range w.written {
		if !present[wr.uid] {
			delete(w.written, key)
		}
	}
	w.targets = targets
}

// WantTransportServerStatus is the status NIC would write for a
// TransportServer with verdict v:
//
//   - Valid, AddedOrUpdated: no problems;
//   - Warning, AddedOrUpdatedWithWarning: problems, but still served;
//   - Invalid, Rejected: left out of the configuration (NIC's "rejected"
//     TransportServer, one that lost its listener to another included).
func WantTransportServerStatus(v TransportServerVerdict) nicv1.TransportServerStatus {
	key := v.Key()
	msgs := make([]string, 0, len(v.Problems))
	for _, p := range v.Problems {
		msgs = append(msgs, p.Message)
	}
	var s nicv1.TransportServerStatus
	switch {
	case v.Rejected:
		s.State, s.Reason = nicv1.StateInvalid, ReasonVirtualServerRejected
		s.Message = "TransportServer " + key + " was rejected with error: " + strings.Join(msgs, "; ")
	case len(msgs) > 0:
		s.State, s.Reason = nicv1.StateWarning, ReasonAddedOrUpdatedWithWarning
		s.Message = "Configuration for " + key + " was added or updated with warning(s): " + strings.Join(msgs, "; ")
	default:
		s.State, s.Reason = nicv1.StateValid, ReasonAddedOrUpdated
		s.Message = "Configuration for " + key + " was added or updated"
	}
	s.Message = truncateMessage(s.Message, maxStatusMessage)
	return s
}

// Run writes until ctx is done.
func (w *TransportServerWriter) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range w.opts.Workers {
		wg.Go(func() {
			for w.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	w.queue.ShutDown()
	wg.Wait()
}

func (w *TransportServerWriter) next(ctx context.Context) bool {
	key, shutdown := w.queue.Get()
	if shutdown {
		return false
	}
	defer w.queue.Done(key)
	if err := w.write(ctx, key); err != nil {
		if ctx.Err() != nil {
			return false
		}
		if apierrors.IsConflict(err) {
			w.opts.Log.Debug("TransportServer changed while its status was written; retrying", "transportserver", key)
		} else {
			w.opts.Log.Warn("TransportServer status not written; retrying", "transportserver", key, "err", err)
		}
		w.queue.AddRateLimited(key)
		return true
	}
	w.queue.Forget(key)
	return true
}

func (w *TransportServerWriter) write(ctx context.Context, key string) error {
	w.mu.Lock()
	t, ok := w.targets[key]
	w.mu.Unlock()
	if !ok || !w.opts.IsLeader() {
		return nil
	}
	patch, err := transportServerStatusPatch(t.rv, t.want)
	if err != nil {
		return err
	}
	updated, err := w.opts.Client.Resource(TransportServerResource).Namespace(t.ts.Namespace).Patch(ctx, t.ts.Name,
		types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}, "status")
	if w.opts.OnWrite != nil {
		w.opts.OnWrite(err)
	}
	switch {
	case apierrors.IsNotFound(err):
		w.forget(key, t)
		return nil
	case err != nil:
		return fmt.Errorf("patch TransportServer status: %w", err)
	}
	w.mu.Lock()
	if updated != nil && updated.GetResourceVersion() != "" {
		w.written[key] = tsWritten{uid: t.ts.UID, before: t.rv, after: updated.GetResourceVersion(), status: t.want}
	}
	w.mu.Unlock()
	w.forget(key, t)
	w.opts.Log.Debug("TransportServer status written", "transportserver", key, "state", t.want.State)
	return nil
}

func (w *TransportServerWriter) forget(key string, t tsTarget) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if cur, ok := w.targets[key]; ok && cur.seq == t.seq {
		delete(w.targets, key)
	}
}

// Pending is the number of writes still to do (for tests).
func (w *TransportServerWriter) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.targets)
}

func transportServerStatusPatch(resourceVersion string, want nicv1.TransportServerStatus) ([]byte, error) {
	// Every field is spelled out, an empty one as null, so that the merge
	// patch removes what the wanted status lacks.
	field := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	p := map[string]any{
		"metadata": map[string]any{"resourceVersion": resourceVersion},
		"status": map[string]any{
			"state":   field(want.State),
			"reason":  field(want.Reason),
			"message": field(want.Message),
		},
	}
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode TransportServer status patch: %w", err)
	}
	return data, nil
}
