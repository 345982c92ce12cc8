package status

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/status/address"
)

var published = address.Static{{IP: "192.0.2.1"}, {Hostname: "lb.example.com"}}

func mkIngress(name string, status ...networkingv1.IngressLoadBalancerIngress) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "7"},
		Status:     networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: status}},
	}
}

// patchRecorder captures status patches and can refuse the first ones.
type patchRecorder struct {
	mu        sync.Mutex
	patches   map[string][]string // Ingress name -> the status lists written, as JSON
	conflicts atomic.Int32        // refuse this many patches with a conflict first
}

func (p *patchRecorder) react(action k8stesting.Action) (bool, runtime.Object, error) {
	pa := action.(k8stesting.PatchAction)
	if pa.GetSubresource() != "status" || pa.GetPatchType() != types.MergePatchType {
		return true, nil, apierrors.NewBadRequest("want a merge patch of status")
	}
	if p.conflicts.Add(-1) >= 0 {
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "ingresses"}, pa.GetName(), nil)
	}
	var body struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Status struct {
			LoadBalancer struct {
				Ingress json.RawMessage `json:"ingress"`
			} `json:"loadBalancer"`
		} `json:"status"`
	}
	if err := json.Unmarshal(pa.GetPatch(), &body); err != nil || body.Metadata.ResourceVersion == "" {
		return true, nil, apierrors.NewBadRequest("patch without a resourceVersion precondition")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.patches[pa.GetName()] = append(p.patches[pa.GetName()], string(body.Status.LoadBalancer.Ingress))
	rv, _ := strconv.Atoi(body.Metadata.ResourceVersion)
	return true, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.Itoa(rv + 1)}}, nil
}

func (p *patchRecorder) get() map[string][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string][]string{}
	for k, v := range p.patches {
		out[k] = append([]string(nil), v...)
	}
	return out
}

type harness struct {
	w       *Writer
	rec     *patchRecorder
	leading atomic.Bool
}

func newHarness(t *testing.T, src address.Source) *harness {
	h := &harness{rec: &patchRecorder{patches: map[string][]string{}}}
	h.leading.Store(true)
	client := fake.NewClientset()
	client.PrependReactor("patch", "ingresses", h.rec.react)
	h.w = NewWriter(WriterOptions{Client: client, Addresses: src, IsLeader: h.leading.Load,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	runWriter(t, h.w.Run)
	return h
}

// runWriter runs a writer until the test ends.
func runWriter(t *testing.T, run func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// settleWrites waits until no write is pending.
func settleWrites(t *testing.T, pending func() int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for pending() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes still pending", pending())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *harness) settle(t *testing.T) { t.Helper(); settleWrites(t, h.w.Pending) }

const (
	wrote   = `[{"ip":"192.0.2.1"},{"hostname":"lb.example.com"}]`
	cleared = `null`
)

// TestWriterPlan is the status specification, one row per rule.
func TestWriterPlan(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Outcome
		want map[string][]string
	}{
		{"a live Ingress of ours gets the addresses",
			Outcome{Applied: true, Ingresses: []Verdict{{Ingress: mkIngress("a"), Ours: true}}},
			map[string][]string{"a": {wrote}}},
		{"nothing is written when the status already says so, in any order",
			Outcome{Applied: true, Ingresses: []Verdict{{Ingress: mkIngress("a", published[1], published[0]), Ours: true}}},
			nil},
		{"stale addresses are replaced",
			Outcome{Applied: true, Ingresses: []Verdict{{Ingress: mkIngress("a", networkingv1.IngressLoadBalancerIngress{IP: "192.0.2.99"}), Ours: true}}},
			map[string][]string{"a": {wrote}}},
		{"a degraded Ingress is live and gets the addresses",
			Outcome{Applied: true, Ingresses: []Verdict{{Ingress: mkIngress("a"), Ours: true,
				Problems: []model.Problem{{Reason: model.ReasonMissingService}}}}},
			map[string][]string{"a": {wrote}}},
		{"a rejected Ingress of ours is cleared",
			Outcome{Applied: true, Ingresses: []Verdict{{Ingress: mkIngress("a", published...), Ours: true, Rejected: true}}},
			map[string][]string{"a": {cleared}}},
		{"after a failed apply, Ingresses of ours are left alone",
			Outcome{ApplyError: "boom", Ingresses: []Verdict{{Ingress: mkIngress("a"), Ours: true}, {Ingress: mkIngress("b", published...), Ours: true, Rejected: true}}},
			nil},
		{"an Ingress no longer ours showing our addresses is cleared",
			Outcome{Applied: true, Ingresses: []Verdict{{Ingress: mkIngress("a", published...)}}},
			map[string][]string{"a": {cleared}}},
		{"another controller's addresses are left alone",
			Outcome{Applied: true, Ingresses: []Verdict{{Ingress: mkIngress("a", networkingv1.IngressLoadBalancerIngress{IP: "198.51.100.1"})}}},
			nil},
		{"another controller's Ingress without status is left alone",
			Outcome{Applied: true, Ingresses: []Verdict{{Ingress: mkIngress("a")}}},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, published)
			h.w.Observe(tc.o)
			h.settle(t)
			if got := h.rec.get(); !equalPatches(got, tc.want) {
				t.Errorf("patches = %v, want %v", got, tc.want)
			}
		})
	}
}

func equalPatches(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w := b[k]
		if len(v) != len(w) {
			return false
		}
		for i := range v {
			if v[i] != w[i] {
				return false
			}
		}
	}
	return true
}

func TestWriterClearsAnotherClassOnlyOnce(t *testing.T) {
	h := newHarness(t, published)
	theirs := Outcome{Applied: true, Ingresses: []Verdict{{Ingress: mkIngress("a", published...)}}}
	h.w.Observe(theirs)
	h.settle(t)
	// Another controller publishing the same address writes it back: we
	// must not fight it.
	h.w.Observe(theirs)
	h.settle(t)
	if got := h.rec.get()["a"]; len(got) != 1 {
		t.Errorf("cleared %d times, want once", len(got))
	}
}

func TestWriterOnlyLeaderWrites(t *testing.T) {
	h := newHarness(t, published)
	h.leading.Store(false)
	o := Outcome{Applied: true, Ingresses: []Verdict{{Ingress: mkIngress("a"), Ours: true}}}
	h.w.Observe(o)
	h.settle(t)
	if got := h.rec.get(); len(got) != 0 {
		t.Fatalf("a follower wrote %v", got)
	}
	// Becoming leader asks for a sync (kubeReporter.resync), whose
	// Outcome is observed like any other.
	h.leading.Store(true)
	h.w.Observe(o)
	h.settle(t)
	if got := h.rec.get()["a"]; len(got) != 1 || got[0] != wrote {
		t.Errorf("after taking over: %v, want one write", got)
	}
}

// unknown is an address source that has not synced yet.
type unknown struct{}

func (unknown) Addresses() ([]networkingv1.IngressLoadBalancerIngress, bool) { return nil, false }

func TestWriterWaitsForAddresses(t *testing.T) {
	h := newHarness(t, unknown{})
	h.w.Observe(Outcome{Applied: true, Ingresses: []Verdict{{Ingress: mkIngress("a", published...), Ours: true, Rejected: true}}})
	h.settle(t)
	if got := h.rec.get(); len(got) != 0 {
		t.Errorf("wrote %v before the addresses were known", got)
	}
}

func TestWriterRetriesConflicts(t *testing.T) {
	h := newHarness(t, published)
	h.rec.conflicts.Store(2)
	h.w.Observe(Outcome{Applied: true, Ingresses: []Verdict{{Ingress: mkIngress("a"), Ours: true}}})
	h.settle(t)
	if got := h.rec.get()["a"]; len(got) != 1 {
		t.Errorf("after two conflicts: %v, want one write", got)
	}
}

func TestNewOutcome(t *testing.T) {
	classOpts := class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"}
	ours, theirs := mkIngress("ours"), mkIngress("theirs")
	ours.Spec.IngressClassName = ptr("causeway")
	theirs.Spec.IngressClassName = ptr("other")
	problems := []model.Problem{
		{Object: model.ObjectRef{Kind: "Ingress", Namespace: "ns", Name: "ours", UID: "uid-ours"}, Reason: model.ReasonInvalid, Rejected: true},
		{Object: model.ObjectRef{Kind: "Ingress", Namespace: "ns", Name: "ours", UID: "an-older-one"}, Reason: model.ReasonCollision},
		{Object: model.ObjectRef{Kind: "Service", Namespace: "ns", Name: "ours", UID: "uid-svc"}, Reason: model.ReasonInvalid},
		{Object: model.ObjectRef{Kind: "ConfigMap", Namespace: "ns", Name: "gone"}, Reason: model.ReasonInvalidConfig},
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ours", UID: "uid-svc"}}
	o := NewOutcome(&source.Snapshot{Ingresses: []*networkingv1.Ingress{ours, theirs}, Services: []*corev1.Service{svc}}, problems, nil, classOpts)
	if !o.Applied || len(o.Ingresses) != 2 {
		t.Fatalf("outcome = %+v", o)
	}
	v := o.Ingresses[0]
	if !v.Ours || !v.Rejected || len(v.Problems) != 1 || v.Live(o) {
		t.Errorf("ours: %+v", v)
	}
	if w := o.Ingresses[1]; w.Ours || len(w.Problems) != 0 {
		t.Errorf("theirs: %+v", w)
	}
	// Other objects' problems travel with the object they name, for
	// Events; a problem whose object the snapshot lacks stays in the log.
	if len(o.Others) != 1 || o.Others[0].Object != svc || len(o.Others[0].Problems) != 1 || o.Others[0].Problems[0].Reason != model.ReasonInvalid {
		t.Errorf("others: %+v", o.Others)
	}
}

func ptr[T any](v T) *T { return &v }

// TestWriterIgnoresStaleSnapshots checks that a snapshot taken before our
// write landed does not trigger the same write again (it would only
// conflict), while a newer change does.
func TestWriterIgnoresStaleSnapshots(t *testing.T) {
	h := newHarness(t, published)
	stale := Outcome{Applied: true, Ingresses: []Verdict{{Ingress: mkIngress("a"), Ours: true}}} // resourceVersion 7
	h.w.Observe(stale)
	h.settle(t)
	h.w.Observe(stale)
	h.settle(t)
	if got := h.rec.get()["a"]; len(got) != 1 {
		t.Fatalf("writes after a stale snapshot: %v, want 1", got)
	}
	// Someone else changed the status after our write (resourceVersion 9):
	// that is news, and it is corrected.
	changed := mkIngress("a", networkingv1.IngressLoadBalancerIngress{IP: "198.51.100.7"})
	changed.ResourceVersion = "9"
	h.w.Observe(Outcome{Applied: true, Ingresses: []Verdict{{Ingress: changed, Ours: true}}})
	h.settle(t)
	if got := h.rec.get()["a"]; len(got) != 2 {
		t.Errorf("writes after an outside change: %v, want 2", got)
	}
}
