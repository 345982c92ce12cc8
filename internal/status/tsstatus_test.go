package status

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

func mkTS(name string, st nicv1.TransportServerStatus) *nicv1.TransportServer {
	return &nicv1.TransportServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "7"},
		Status:     st,
	}
}

// tsPatchRecorder captures TransportServer status patches.
type tsPatchRecorder struct {
	mu        sync.Mutex
	patches   map[string][]nicv1.TransportServerStatus
	raw       map[string][]string
	conflicts atomic.Int32
	notFound  atomic.Int32
}

func (p *tsPatchRecorder) react(action k8stesting.Action) (bool, runtime.Object, error) {
	pa := action.(k8stesting.PatchAction)
	if pa.GetSubresource() != "status" || pa.GetPatchType() != types.MergePatchType ||
		pa.GetResource() != TransportServerResource {
		return true, nil, apierrors.NewBadRequest("want a merge patch of transportservers/status")
	}
	if p.conflicts.Add(-1) >= 0 {
		return true, nil, apierrors.NewConflict(TransportServerResource.GroupResource(), pa.GetName(), nil)
	}
	if p.notFound.Add(-1) >= 0 {
		return true, nil, apierrors.NewNotFound(TransportServerResource.GroupResource(), pa.GetName())
	}
	var body struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Status nicv1.TransportServerStatus `json:"status"`
	}
	if err := json.Unmarshal(pa.GetPatch(), &body); err != nil || body.Metadata.ResourceVersion == "" {
		return true, nil, apierrors.NewBadRequest("patch without a resourceVersion precondition")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.patches[pa.GetName()] = append(p.patches[pa.GetName()], body.Status)
	p.raw[pa.GetName()] = append(p.raw[pa.GetName()], string(pa.GetPatch()))
	rv, _ := strconv.Atoi(body.Metadata.ResourceVersion)
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("k8s.nginx.org/v1")
	u.SetKind("TransportServer")
	u.SetName(pa.GetName())
	u.SetResourceVersion(strconv.Itoa(rv + 1))
	return true, u, nil
}

func (p *tsPatchRecorder) get() map[string][]nicv1.TransportServerStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string][]nicv1.TransportServerStatus{}
	for k, v := range p.patches {
		out[k] = append([]nicv1.TransportServerStatus(nil), v...)
	}
	return out
}

type tsHarness struct {
	w       *TransportServerWriter
	rec     *tsPatchRecorder
	leading atomic.Bool
}

func newTSHarness(t *testing.T) *tsHarness {
	h := &tsHarness{rec: &tsPatchRecorder{patches: map[string][]nicv1.TransportServerStatus{}, raw: map[string][]string{}}}
	h.leading.Store(true)
	client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	client.PrependReactor("patch", "transportservers", h.rec.react)
	h.w = NewTransportServerWriter(TransportServerWriterOptions{Client: client, IsLeader: h.leading.Load,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

func (h *tsHarness) settle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.w.Pending() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes still pending", h.w.Pending())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func validTSStatus(name string) nicv1.TransportServerStatus {
	return nicv1.TransportServerStatus{State: "Valid", Reason: "AddedOrUpdated",
		Message: "Configuration for ns/" + name + " was added or updated"}
}

func tsProblem(name, msg string, rejected bool) model.Problem {
	return model.Problem{Object: model.ObjectRef{Kind: "TransportServer", Namespace: "ns", Name: name},
		Reason: model.ReasonInvalid, Message: msg, Rejected: rejected}
}

// TestTransportServerWriterPlan is the status specification, one row per
// rule.
func TestTransportServerWriterPlan(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Outcome
		want map[string][]nicv1.TransportServerStatus
	}{
		{"a TransportServer without problems is Valid",
			Outcome{Applied: true, TransportServers: []TransportServerVerdict{{TransportServer: mkTS("a", nicv1.TransportServerStatus{})}}},
			map[string][]nicv1.TransportServerStatus{"a": {validTSStatus("a")}}},
		{"one with problems that is still served is Warning, the problems in the message",
			Outcome{Applied: true, TransportServers: []TransportServerVerdict{{TransportServer: mkTS("a", nicv1.TransportServerStatus{}),
				Problems: []model.Problem{tsProblem("a", "upstream \"u\": service s not found", false), tsProblem("a", "x ignored", false)}}}},
			map[string][]nicv1.TransportServerStatus{"a": {{State: "Warning", Reason: "AddedOrUpdatedWithWarning",
				Message: "Configuration for ns/a was added or updated with warning(s): upstream \"u\": service s not found; x ignored"}}}},
		{"a rejected one is Invalid",
			Outcome{Applied: true, TransportServers: []TransportServerVerdict{{TransportServer: mkTS("a", validTSStatus("a")), Rejected: true,
				Problems: []model.Problem{tsProblem("a", "listener \"tcp\" belongs to ns/b", true)}}}},
			map[string][]nicv1.TransportServerStatus{"a": {{State: "Invalid", Reason: "Rejected",
				Message: "TransportServer ns/a was rejected with error: listener \"tcp\" belongs to ns/b"}}}},
		{"nothing is written when the status already says so",
			Outcome{Applied: true, TransportServers: []TransportServerVerdict{{TransportServer: mkTS("a", validTSStatus("a"))}}},
			nil},
		{"after a failed apply statuses are left as they are",
			Outcome{Applied: false, ApplyError: "nginx -t failed", TransportServers: []TransportServerVerdict{
				{TransportServer: mkTS("a", nicv1.TransportServerStatus{})},
				{TransportServer: mkTS("b", validTSStatus("b")), Rejected: true, Problems: []model.Problem{tsProblem("b", "bad", true)}}}},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTSHarness(t)
			h.w.Observe(tc.o)
			h.settle(t)
			if got := h.rec.get(); !equalTSPatches(got, tc.want) {
				t.Errorf("patches:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func equalTSPatches(a, b map[string][]nicv1.TransportServerStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for k, as := range a {
		bs := b[k]
		if len(as) != len(bs) {
			return false
		}
		for i := range as {
			if as[i] != bs[i] {
				return false
			}
		}
	}
	return true
}

func TestTransportServerWriterPatchHasNoEndpoints(t *testing.T) {
	// A TransportServer's status has no externalEndpoints: the patch names
	// none, and removes a stale message field with null.
	h := newTSHarness(t)
	h.w.Observe(Outcome{Applied: true, TransportServers: []TransportServerVerdict{{TransportServer: mkTS("a", nicv1.TransportServerStatus{State: "Invalid"})}}})
	h.settle(t)
	raw := h.rec.raw["a"]
	if len(raw) != 1 || strings.Contains(raw[0], "externalEndpoints") || !strings.Contains(raw[0], `"state":"Valid"`) {
		t.Fatalf("patches %q, want one Valid without externalEndpoints", raw)
	}
}

func TestTransportServerWriterOnlyLeaderWrites(t *testing.T) {
	h := newTSHarness(t)
	h.leading.Store(false)
	h.w.Observe(Outcome{Applied: true, TransportServers: []TransportServerVerdict{{TransportServer: mkTS("a", nicv1.TransportServerStatus{})}}})
	h.settle(t)
	time.Sleep(20 * time.Millisecond)
	if got := h.rec.get(); len(got) != 0 {
		t.Fatalf("a follower wrote %v", got)
	}
	h.leading.Store(true)
	h.w.Resync()
	h.settle(t)
	if got := h.rec.get(); len(got["a"]) != 1 {
		t.Fatalf("the new leader wrote %v, want one write", got)
	}
}

func TestTransportServerWriterRetriesConflictsAndDropsGone(t *testing.T) {
	h := newTSHarness(t)
	h.rec.conflicts.Store(1)
	h.w.Observe(Outcome{Applied: true, TransportServers: []TransportServerVerdict{{TransportServer: mkTS("a", nicv1.TransportServerStatus{})}}})
	h.settle(t)
	if got := h.rec.get(); len(got["a"]) != 1 {
		t.Fatalf("after a conflict: %v, want one write", got)
	}

	h2 := newTSHarness(t)
	h2.rec.notFound.Store(1)
	h2.w.Observe(Outcome{Applied: true, TransportServers: []TransportServerVerdict{{TransportServer: mkTS("a", nicv1.TransportServerStatus{})}}})
	h2.settle(t)
	if got := h2.rec.get(); len(got) != 0 {
		t.Fatalf("a TransportServer gone meanwhile was written: %v", got)
	}
}

func TestTransportServerWriterIgnoresStaleSnapshots(t *testing.T) {
	h := newTSHarness(t)
	o := Outcome{Applied: true, TransportServers: []TransportServerVerdict{{TransportServer: mkTS("a", nicv1.TransportServerStatus{})}}}
	h.w.Observe(o)
	h.settle(t)
	h.w.Observe(o)
	h.settle(t)
	if got := h.rec.get(); len(got["a"]) != 1 {
		t.Fatalf("wrote %d times, want once", len(got["a"]))
	}
	echo := mkTS("a", validTSStatus("a"))
	echo.ResourceVersion = "8"
	h.w.Observe(Outcome{Applied: true, TransportServers: []TransportServerVerdict{{TransportServer: echo}}})
	h.settle(t)
	if got := h.rec.get(); len(got["a"]) != 1 {
		t.Fatalf("wrote %d times, want once", len(got["a"]))
	}
}

func TestNewOutcomeTransportServers(t *testing.T) {
	mine := mkTS("mine", nicv1.TransportServerStatus{})
	classless := mkTS("classless", nicv1.TransportServerStatus{})
	other := mkTS("other", nicv1.TransportServerStatus{})
	mine.Spec.IngressClass = "causeway"
	other.Spec.IngressClass = "nginx"
	gc := &nicv1.GlobalConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc"}}
	snap := &source.Snapshot{TransportServers: []*nicv1.TransportServer{mine, classless, other},
		GlobalConfigurations: []*nicv1.GlobalConfiguration{gc}}
	problems := []model.Problem{
		tsProblem("mine", "served anyway", false),
		tsProblem("classless", "refused", true),
		tsProblem("other", "not ours", true),
		{Object: model.ObjectRef{Kind: "TransportServer", Namespace: "ns", Name: "mine", UID: "an-older-one"}, Message: "stale", Rejected: true},
		{Object: model.ObjectRef{Kind: "VirtualServer", Namespace: "ns", Name: "mine"}, Message: "a VirtualServer", Rejected: true},
		{Object: model.ObjectRef{Kind: "GlobalConfiguration", Namespace: "ns", Name: "gc"}, Message: "listener left out"},
	}
	o := NewOutcome(snap, problems, nil, ingress.ClassOptions{ControllerName: "causeway.dev/ingress", IngressClass: "causeway"})
	if len(o.TransportServers) != 2 {
		t.Fatalf("verdicts %+v, want mine and classless", o.TransportServers)
	}
	if v := o.TransportServers[0]; v.Key() != "ns/mine" || v.Rejected || len(v.Problems) != 1 || v.Problems[0].Message != "served anyway" {
		t.Errorf("mine: %+v", v)
	}
	if v := o.TransportServers[1]; v.Key() != "ns/classless" || !v.Rejected || len(v.Problems) != 1 {
		t.Errorf("classless: %+v", v)
	}
	// TransportServer and GlobalConfiguration problems reach Events
	// through Others.
	kinds := map[string]bool{}
	for _, op := range o.Others {
		kinds[op.Ref.Kind] = true
	}
	if !kinds["TransportServer"] || !kinds["GlobalConfiguration"] {
		t.Errorf("Others %+v lack the TransportServer or GlobalConfiguration problems", o.Others)
	}
}
