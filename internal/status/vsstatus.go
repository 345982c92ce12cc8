package status

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/status/address"
)

// VirtualServerResource is the resource whose status subresource the
// VirtualServerWriter patches.
var VirtualServerResource = nicv1.SchemeGroupVersion.WithResource("virtualservers")

// Reasons NIC writes into a VirtualServer's status (and its Events).
const (
	ReasonAddedOrUpdated            = "AddedOrUpdated"
	ReasonAddedOrUpdatedWithWarning = "AddedOrUpdatedWithWarning"
	ReasonVirtualServerRejected     = "Rejected"
)

// EndpointPorts is what externalEndpoints[].ports shows: the ports nginx
// serves HTTP and HTTPS on, in NIC's format.
const EndpointPorts = "[80,443]"

// maxStatusMessage bounds status.message; a VirtualServer with many
// problems would otherwise carry all of them in every read of it.
const maxStatusMessage = 1024

// VirtualServerWriterOptions configure a VirtualServerWriter.
type VirtualServerWriterOptions struct {
	Client dynamic.Interface
	// Addresses are the published addresses, shown as externalEndpoints;
	// nil publishes none (the state is written all the same).
	Addresses address.Source
	// IsLeader gates every write.
	IsLeader func() bool
	Log      *slog.Logger
	// Workers is how many writes may be in flight. Zero means 2.
	Workers int
	// OnWrite, when set, is told the outcome of every write (for metrics).
	OnWrite func(err error)
}

// VirtualServerWriter keeps the status of every VirtualServer of ours as
// NGINX Ingress Controller writes it: state, reason, message and
// externalEndpoints. After a failed apply, statuses are left as they are.
// VirtualServers of other classes are never touched.
//
// Like the Ingress Writer it writes only what differs from the snapshot,
// through a rate-limited work queue, with the snapshot's resourceVersion as
// the precondition: a conflict is retried once a newer snapshot decides,
// and an object gone meanwhile is dropped.
type VirtualServerWriter struct {
	opts  VirtualServerWriterOptions
	queue workqueue.TypedRateLimitingInterface[string]

	mu      sync.Mutex
	last    *Outcome
	targets map[string]vsTarget
	seq     uint64
	// written remembers our last write to each VirtualServer until
	// snapshots catch up with it (see Writer.written).
	written map[string]vsWritten
}

type vsWritten struct {
	uid           types.UID
	before, after string
	status        nicv1.VirtualServerStatus
}

type vsTarget struct {
	vs   *nicv1.VirtualServer
	rv   string
	want nicv1.VirtualServerStatus
	seq  uint64
}

// NewVirtualServerWriter returns a VirtualServerWriter; Run starts its
// workers.
func NewVirtualServerWriter(opts VirtualServerWriterOptions) *VirtualServerWriter {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	return &VirtualServerWriter{
		opts: opts,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{}),
		targets: map[string]vsTarget{},
		written: map[string]vsWritten{},
	}
}

// Observe takes a sync's Outcome; it never blocks on the API.
func (w *VirtualServerWriter) Observe(o Outcome) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = &o
	w.planLocked()
}

// Resync re-plans from the latest Outcome; call it when this replica starts
// leading or the published addresses change.
func (w *VirtualServerWriter) Resync() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.planLocked()
}

func (w *VirtualServerWriter) planLocked() {
	if w.last == nil || !w.opts.IsLeader() {
		return
	}
	o := *w.last
	if !o.Applied {
		// nginx still serves what it served; so does the status. Targets
		// planned from an earlier, applied Outcome stay: they describe it.
		return
	}
	var endpoints []nicv1.ExternalEndpoint
	if w.opts.Addresses != nil {
		addrs, known := w.opts.Addresses.Addresses()
		if !known {
			return // do not write endpoints we cannot yet know
		}
		for _, a := range addrs {
			endpoints = append(endpoints, nicv1.ExternalEndpoint{IP: a.IP, Hostname: a.Hostname, Ports: EndpointPorts})
		}
	}
	targets := make(map[string]vsTarget, len(w.targets))
	present := make(map[types.UID]bool, len(o.VirtualServers))
	for _, v := range o.VirtualServers {
		vs := v.VirtualServer
		present[vs.UID] = true
		have, rv := vs.Status, vs.ResourceVersion
		if wr, ok := w.written[v.Key()]; ok {
			if wr.uid == vs.UID && rv == wr.before {
				have, rv = wr.status, wr.after // the snapshot predates our write
			} else {
				delete(w.written, v.Key())
			}
		}
		want := WantVirtualServerStatus(v, endpoints)
		if sameVirtualServerStatus(have, want) {
			continue
		}
		w.seq++
		targets[v.Key()] = vsTarget{vs: vs, rv: rv, want: want, seq: w.seq}
		w.queue.Add(v.Key())
	}
	for key, wr := range w.written {
		if !present[wr.uid] {
			delete(w.written, key)
		}
	}
	w.targets = targets
}

// WantVirtualServerStatus is the status NIC would write for a VirtualServer
// with verdict v while endpoints are published:
//
//   - Valid, AddedOrUpdated: no problems;
//   - Warning, AddedOrUpdatedWithWarning: problems, but still served;
//   - Invalid, Rejected: left out of the configuration.
//
// NIC keeps externalEndpoints on an Invalid VirtualServer too (it sets
// them on every status write), and so does this.
func WantVirtualServerStatus(v VirtualServerVerdict, endpoints []nicv1.ExternalEndpoint) nicv1.VirtualServerStatus {
	key := v.Key()
	msgs := make([]string, 0, len(v.Problems))
	for _, p := range v.Problems {
		msgs = append(msgs, p.Message)
	}
	s := nicv1.VirtualServerStatus{ExternalEndpoints: endpoints}
	switch {
	case v.Rejected:
		s.State, s.Reason = nicv1.StateInvalid, ReasonVirtualServerRejected
		s.Message = "VirtualServer " + key + " was rejected with error: " + strings.Join(msgs, "; ")
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

func sameVirtualServerStatus(a, b nicv1.VirtualServerStatus) bool {
	if a.State != b.State || a.Reason != b.Reason || a.Message != b.Message ||
		len(a.ExternalEndpoints) != len(b.ExternalEndpoints) {
		return false
	}
	for i := range a.ExternalEndpoints {
		if a.ExternalEndpoints[i] != b.ExternalEndpoints[i] {
			return false
		}
	}
	return true
}

// truncateMessage cuts s to at most limit bytes, on a rune boundary, and
// marks the cut with "...".
func truncateMessage(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// Run writes until ctx is done.
func (w *VirtualServerWriter) Run(ctx context.Context) {
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

func (w *VirtualServerWriter) next(ctx context.Context) bool {
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
			w.opts.Log.Debug("VirtualServer changed while its status was written; retrying", "virtualserver", key)
		} else {
			w.opts.Log.Warn("VirtualServer status not written; retrying", "virtualserver", key, "err", err)
		}
		w.queue.AddRateLimited(key)
		return true
	}
	w.queue.Forget(key)
	return true
}

func (w *VirtualServerWriter) write(ctx context.Context, key string) error {
	w.mu.Lock()
	t, ok := w.targets[key]
	w.mu.Unlock()
	if !ok || !w.opts.IsLeader() {
		return nil
	}
	patch, err := virtualServerStatusPatch(t.rv, t.want)
	if err != nil {
		return err
	}
	// A merge patch of the status subresource: nothing but status changes,
	// and the resourceVersion makes it conditional on the snapshot.
	updated, err := w.opts.Client.Resource(VirtualServerResource).Namespace(t.vs.Namespace).Patch(ctx, t.vs.Name,
		types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}, "status")
	if w.opts.OnWrite != nil {
		w.opts.OnWrite(err)
	}
	switch {
	case apierrors.IsNotFound(err):
		w.forget(key, t)
		return nil
	case err != nil:
		return fmt.Errorf("patch VirtualServer status: %w", err)
	}
	w.mu.Lock()
	if updated != nil && updated.GetResourceVersion() != "" {
		w.written[key] = vsWritten{uid: t.vs.UID, before: t.rv, after: updated.GetResourceVersion(), status: t.want}
	}
	w.mu.Unlock()
	w.forget(key, t)
	w.opts.Log.Debug("VirtualServer status written", "virtualserver", key, "state", t.want.State)
	return nil
}

func (w *VirtualServerWriter) forget(key string, t vsTarget) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if cur, ok := w.targets[key]; ok && cur.seq == t.seq {
		delete(w.targets, key)
	}
}

// Pending is the number of writes still to do (for tests).
func (w *VirtualServerWriter) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.targets)
}

func virtualServerStatusPatch(resourceVersion string, want nicv1.VirtualServerStatus) ([]byte, error) {
	// Every field is spelled out, an empty one as null, so that the merge
	// patch removes what the wanted status lacks.
	field := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	var endpoints any
	if len(want.ExternalEndpoints) > 0 {
		endpoints = want.ExternalEndpoints
	}
	p := map[string]any{
		"metadata": map[string]any{"resourceVersion": resourceVersion},
		"status": map[string]any{
			"state":             field(want.State),
			"reason":            field(want.Reason),
			"message":           field(want.Message),
			"externalEndpoints": endpoints,
		},
	}
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode VirtualServer status patch: %w", err)
	}
	return data, nil
}
