package status

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/causeway/causeway/internal/status/address"
	"github.com/causeway/causeway/internal/writequeue"
)

// FieldManager names the controller in managedFields of what it writes.
const FieldManager = "causeway"

// WriterOptions configure a Writer.
type WriterOptions struct {
	Client    kubernetes.Interface
	Addresses address.Source
	// IsLeader gates every write.
	IsLeader func() bool
	Log      *slog.Logger
	// Workers is how many writes may be in flight; the client's rate limit
	// bounds them further. Zero means 4.
	Workers int
	// OnWrite, when set, is told the outcome of every write (for metrics).
	OnWrite func(err error)
}

// Writer keeps status.loadBalancer.ingress of every Ingress in line with
// the latest Outcome:
//
//   - a live Ingress of ours shows the published addresses;
//   - an Ingress of ours that was rejected as a whole shows none;
//   - an Ingress that is no longer ours and still shows exactly our
//     addresses is cleared, once per replica (so two controllers that
//     publish the same address cannot fight over it);
//   - after a failed apply, Ingresses of ours are left as they are.
//
// It writes only what differs from what the snapshot shows, through a
// rate-limited work queue: a write's own echo from the informer finds
// nothing to do, so the writer cannot loop. A conflict (the object changed
// since the snapshot) is retried with backoff once a newer snapshot has
// arrived.
type Writer struct {
	*statusQueue[target] // keys are "namespace/name"

	opts WriterOptions
	// cleared is guarded by mu, which is held while planning.
	cleared map[types.UID]bool
	// written holds our writes until snapshots catch up with them.
	written writequeue.Written[[]networkingv1.IngressLoadBalancerIngress]
}

// target is one write to do.
type target struct {
	// uid is the Ingress's, whose namespace and name are the key: not
	// the object, which a queue of 10,000 writes would keep alive after
	// the informer replaced it.
	uid   types.UID
	rv    string // the resourceVersion known, the write's precondition
	want  []networkingv1.IngressLoadBalancerIngress
	clear bool // clearing an Ingress that is no longer ours
}

// NewWriter returns a Writer; Run starts its workers.
func NewWriter(opts WriterOptions) *Writer {
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	w := &Writer{opts: opts, cleared: map[types.UID]bool{}}
	w.statusQueue = newStatusQueue(opts.Workers, opts.IsLeader, opts.Log, "ingress", w.plan, w.write)
	return w
}

// plan computes the writes o asks for. w.mu is held.
func (w *Writer) plan(o Outcome) (map[string]target, bool) {
	addrs, known := w.opts.Addresses.Addresses()
	if !known {
		return nil, false // never clear what we cannot yet compare
	}
	targets := make(map[string]target)
	present := make(map[types.UID]bool, len(o.Ingresses))
	for _, v := range o.Ingresses {
		ing := v.Ingress
		present[ing.UID] = true
		have, rv := w.written.Current(v.Key(), ing.UID, ing.ResourceVersion, ing.Status.LoadBalancer.Ingress)
		var t target
		switch {
		case v.Ours && !o.Applied:
			continue // nginx still serves what it served; so does the status
		case v.Ours:
			delete(w.cleared, ing.UID)
			if v.Live(o) {
				t.want = addrs
			}
		case len(have) > 0 && len(addrs) > 0 && address.Equal(have, addrs) && !w.cleared[ing.UID]:
			t.clear = true
		default:
			continue
		}
		if address.Equal(have, t.want) {
			continue
		}
		t.uid, t.rv = ing.UID, rv
		targets[v.Key()] = t
	}
	for uid := range w.cleared {
		if !present[uid] {
			delete(w.cleared, uid)
		}
	}
	w.written.Keep(present)
	return targets, true
}

// write applies t, the target for key.
func (w *Writer) write(ctx context.Context, key string, t target) error {
	patch, err := statusPatch(t.rv, t.want)
	if err != nil {
		return err
	}
	// A merge patch touches nothing but status. An update would also
	// write metadata from our trimmed cache and drop, for example,
	// kubectl's last-applied annotation. The resourceVersion in the patch
	// makes it conditional, so a decision taken on a stale snapshot (the
	// class just changed, say) fails with a conflict instead of winning.
	namespace, name, _ := strings.Cut(key, "/")
	updated, err := w.opts.Client.NetworkingV1().Ingresses(namespace).Patch(ctx, name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager}, "status")
	if w.opts.OnWrite != nil {
		w.opts.OnWrite(err)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("patch status: %w", err)
	}
	w.mu.Lock()
	if t.clear {
		w.cleared[t.uid] = true
	}
	if updated != nil {
		w.written.Record(key, t.uid, t.rv, updated.ResourceVersion, t.want)
	}
	w.mu.Unlock()
	w.opts.Log.Debug("Ingress status written", "ingress", key, "addresses", describe(t.want))
	return nil
}

func statusPatch(resourceVersion string, want []networkingv1.IngressLoadBalancerIngress) ([]byte, error) {
	type loadBalancer struct {
		// A nil list encodes as null, which a merge patch reads as "remove".
		Ingress []networkingv1.IngressLoadBalancerIngress `json:"ingress"`
	}
	p := map[string]any{
		"metadata": map[string]any{"resourceVersion": resourceVersion},
		"status":   map[string]any{"loadBalancer": loadBalancer{Ingress: want}},
	}
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode status patch: %w", err)
	}
	return data, nil
}

func describe(addrs []networkingv1.IngressLoadBalancerIngress) []string {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		if a.IP != "" {
			out = append(out, a.IP)
		} else {
			out = append(out, a.Hostname)
		}
	}
	return out
}
