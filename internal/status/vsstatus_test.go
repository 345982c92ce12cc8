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
	"unicode/utf8"

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
	"github.com/causeway/causeway/internal/status/address"
)

func mkVS(name string, st nicv1.VirtualServerStatus) *nicv1.VirtualServer {
	return &nicv1.VirtualServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "7"},
		Status:     st,
	}
}

// vsPatchRecorder captures VirtualServer status patches.
type vsPatchRecorder struct {
	mu        sync.Mutex
	patches   map[string][]nicv1.VirtualServerStatus
	raw       map[string][]string
	conflicts atomic.Int32
	notFound  atomic.Int32
}

func (p *vsPatchRecorder) react(action k8stesting.Action) (bool, runtime.Object, error) {
	pa := action.(k8stesting.PatchAction)
	if pa.GetSubresource() != "status" || pa.GetPatchType() != types.MergePatchType ||
		pa.GetResource() != VirtualServerResource {
		return true, nil, apierrors.NewBadRequest("want a merge patch of virtualservers/status")
	}
	if p.conflicts.Add(-1) >= 0 {
		return true, nil, apierrors.NewConflict(VirtualServerResource.GroupResource(), pa.GetName(), nil)
	}
	if p.notFound.Add(-1) >= 0 {
		return true, nil, apierrors.NewNotFound(VirtualServerResource.GroupResource(), pa.GetName())
	}
	var body struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Status nicv1.VirtualServerStatus `json:"status"`
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
	u.SetKind("VirtualServer")
	u.SetName(pa.GetName())
	u.SetResourceVersion(strconv.Itoa(rv + 1))
	return true, u, nil
}

func (p *vsPatchRecorder) get() map[string][]nicv1.VirtualServerStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string][]nicv1.VirtualServerStatus{}
	for k, v := range p.patches {
		out[k] = append([]nicv1.VirtualServerStatus(nil), v...)
	}
	return out
}

type vsHarness struct {
	w       *VirtualServerWriter
	rec     *vsPatchRecorder
	leading atomic.Bool
}

func newVSHarness(t *testing.T, src address.Source) *vsHarness {
	h := &vsHarness{rec: &vsPatchRecorder{patches: map[string][]nicv1.VirtualServerStatus{}, raw: map[string][]string{}}}
	h.leading.Store(true)
	client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	client.PrependReactor("patch", "virtualservers", h.rec.react)
	h.w = NewVirtualServerWriter(VirtualServerWriterOptions{Client: client, Addresses: src, IsLeader: h.leading.Load,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

func (h *vsHarness) settle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.w.Pending() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes still pending", h.w.Pending())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var publishedEndpoints = []nicv1.ExternalEndpoint{
	{IP: "192.0.2.1", Ports: "[80,443]"},
	{Hostname: "lb.example.com", Ports: "[80,443]"},
}

func validStatus(name string) nicv1.VirtualServerStatus {
	return nicv1.VirtualServerStatus{State: "Valid", Reason: "AddedOrUpdated",
		Message: "Configuration for ns/" + name + " was added or updated", ExternalEndpoints: publishedEndpoints}
}

func vsProblem(name, msg string, rejected bool) model.Problem {
	return model.Problem{Object: model.ObjectRef{Kind: "VirtualServer", Namespace: "ns", Name: name},
		Reason: model.ReasonInvalid, Message: msg, Rejected: rejected}
}

// TestVirtualServerWriterPlan is the status specification, one row per rule.
func TestVirtualServerWriterPlan(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Outcome
		want map[string][]nicv1.VirtualServerStatus
	}{
		{"a VirtualServer without problems is Valid with the endpoints",
			Outcome{Applied: true, VirtualServers: []VirtualServerVerdict{{VirtualServer: mkVS("a", nicv1.VirtualServerStatus{})}}},
			map[string][]nicv1.VirtualServerStatus{"a": {validStatus("a")}}},
		{"one with problems that is still served is Warning, the problems in the message",
			Outcome{Applied: true, VirtualServers: []VirtualServerVerdict{{VirtualServer: mkVS("a", nicv1.VirtualServerStatus{}),
				Problems: []model.Problem{vsProblem("a", "spec.gunzip is not supported", false), vsProblem("a", "service s not found", false)}}}},
			map[string][]nicv1.VirtualServerStatus{"a": {{State: "Warning", Reason: "AddedOrUpdatedWithWarning",
				Message:           "Configuration for ns/a was added or updated with warning(s): spec.gunzip is not supported; service s not found",
				ExternalEndpoints: publishedEndpoints}}}},
		{"a rejected one is Invalid, and keeps the endpoints as NIC does",
			Outcome{Applied: true, VirtualServers: []VirtualServerVerdict{{VirtualServer: mkVS("a", validStatus("a")), Rejected: true,
				Problems: []model.Problem{vsProblem("a", "upstream x is not defined", true)}}}},
			map[string][]nicv1.VirtualServerStatus{"a": {{State: "Invalid", Reason: "Rejected",
				Message:           "VirtualServer ns/a was rejected with error: upstream x is not defined",
				ExternalEndpoints: publishedEndpoints}}}},
		{"nothing is written when the status already says so",
			Outcome{Applied: true, VirtualServers: []VirtualServerVerdict{{VirtualServer: mkVS("a", validStatus("a"))}}},
			nil},
		{"after a failed apply statuses are left as they are",
			Outcome{Applied: false, ApplyError: "nginx -t failed", VirtualServers: []VirtualServerVerdict{
				{VirtualServer: mkVS("a", nicv1.VirtualServerStatus{})},
				{VirtualServer: mkVS("b", validStatus("b")), Rejected: true, Problems: []model.Problem{vsProblem("b", "bad", true)}}}},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newVSHarness(t, published)
			h.w.Observe(tc.o)
			h.settle(t)
			if got := h.rec.get(); !equalVSPatches(got, tc.want) {
				t.Errorf("patches:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func equalVSPatches(a, b map[string][]nicv1.VirtualServerStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for k, as := range a {
		bs := b[k]
		if len(as) != len(bs) {
			return false
		}
		for i := range as {
			if !sameVirtualServerStatus(as[i], bs[i]) {
				return false
			}
		}
	}
	return true
}

func TestVirtualServerWriterWithoutAddresses(t *testing.T) {
	// With nothing published the state is written all the same, and stale
	// endpoints are removed (null in the merge patch).
	h := newVSHarness(t, nil)
	h.w.Observe(Outcome{Applied: true, VirtualServers: []VirtualServerVerdict{{VirtualServer: mkVS("a", validStatus("a"))}}})
	h.settle(t)
	raw := h.rec.raw["a"]
	if len(raw) != 1 || !strings.Contains(raw[0], `"externalEndpoints":null`) || !strings.Contains(raw[0], `"state":"Valid"`) {
		t.Fatalf("patches %q, want one Valid without endpoints", raw)
	}
}

func TestVirtualServerWriterOnlyLeaderWrites(t *testing.T) {
	h := newVSHarness(t, published)
	h.leading.Store(false)
	o := Outcome{Applied: true, VirtualServers: []VirtualServerVerdict{{VirtualServer: mkVS("a", nicv1.VirtualServerStatus{})}}}
	h.w.Observe(o)
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

func TestVirtualServerWriterWaitsForAddresses(t *testing.T) {
	h := newVSHarness(t, unknown{})
	h.w.Observe(Outcome{Applied: true, VirtualServers: []VirtualServerVerdict{{VirtualServer: mkVS("a", nicv1.VirtualServerStatus{})}}})
	h.settle(t)
	if got := h.rec.get(); len(got) != 0 {
		t.Fatalf("wrote %v before the addresses were known", got)
	}
}

func TestVirtualServerWriterRetriesConflictsAndDropsGone(t *testing.T) {
	h := newVSHarness(t, published)
	h.rec.conflicts.Store(1)
	h.w.Observe(Outcome{Applied: true, VirtualServers: []VirtualServerVerdict{{VirtualServer: mkVS("a", nicv1.VirtualServerStatus{})}}})
	h.settle(t)
	if got := h.rec.get(); len(got["a"]) != 1 {
		t.Fatalf("after a conflict: %v, want one write", got)
	}

	h2 := newVSHarness(t, published)
	h2.rec.notFound.Store(1)
	h2.w.Observe(Outcome{Applied: true, VirtualServers: []VirtualServerVerdict{{VirtualServer: mkVS("a", nicv1.VirtualServerStatus{})}}})
	h2.settle(t)
	if got := h2.rec.get(); len(got) != 0 {
		t.Fatalf("a VirtualServer gone meanwhile was written: %v", got)
	}
}

func TestVirtualServerWriterIgnoresStaleSnapshots(t *testing.T) {
	// A snapshot taken before our write landed still shows the old status;
	// it must not cause a second write.
	h := newVSHarness(t, published)
	o := Outcome{Applied: true, VirtualServers: []VirtualServerVerdict{{VirtualServer: mkVS("a", nicv1.VirtualServerStatus{})}}}
	h.w.Observe(o)
	h.settle(t)
	h.w.Observe(o)
	h.settle(t)
	if got := h.rec.get(); len(got["a"]) != 1 {
		t.Fatalf("wrote %d times, want once", len(got["a"]))
	}
	// The echo of our write (resourceVersion 8) finds nothing to do either.
	echo := mkVS("a", validStatus("a"))
	echo.ResourceVersion = "8"
	h.w.Observe(Outcome{Applied: true, VirtualServers: []VirtualServerVerdict{{VirtualServer: echo}}})
	h.settle(t)
	if got := h.rec.get(); len(got["a"]) != 1 {
		t.Fatalf("wrote %d times, want once", len(got["a"]))
	}
}

func TestWantVirtualServerStatusBoundsMessage(t *testing.T) {
	v := VirtualServerVerdict{VirtualServer: mkVS("a", nicv1.VirtualServerStatus{}),
		Problems: []model.Problem{vsProblem("a", strings.Repeat("é", 2000), false)}}
	got := WantVirtualServerStatus(v, nil).Message
	if len(got) > maxStatusMessage || !strings.HasSuffix(got, "...") || !utf8.ValidString(got) {
		t.Fatalf("message of %d bytes, valid UTF-8 %v: %q...", len(got), utf8.ValidString(got), got[:40])
	}
}

func TestNewOutcomeVirtualServers(t *testing.T) {
	mine := mkVS("mine", nicv1.VirtualServerStatus{})
	classless := mkVS("classless", nicv1.VirtualServerStatus{})
	other := mkVS("other", nicv1.VirtualServerStatus{})
	mine.Spec.IngressClass = "causeway"
	other.Spec.IngressClass = "nginx"
	snap := &source.Snapshot{VirtualServers: []*nicv1.VirtualServer{mine, classless, other}}
	problems := []model.Problem{
		vsProblem("mine", "served anyway", false),
		vsProblem("classless", "refused", true),
		vsProblem("other", "not ours", true),
		{Object: model.ObjectRef{Kind: "VirtualServer", Namespace: "ns", Name: "mine", UID: "an-older-one"}, Message: "stale", Rejected: true},
		{Object: model.ObjectRef{Kind: "Ingress", Namespace: "ns", Name: "mine"}, Message: "an Ingress", Rejected: true},
	}
	o := NewOutcome(snap, problems, nil, ingress.ClassOptions{ControllerName: "causeway.dev/ingress", IngressClass: "causeway"})
	if len(o.VirtualServers) != 2 {
		t.Fatalf("verdicts %+v, want mine and classless", o.VirtualServers)
	}
	if v := o.VirtualServers[0]; v.Key() != "ns/mine" || v.Rejected || len(v.Problems) != 1 || v.Problems[0].Message != "served anyway" {
		t.Errorf("mine: %+v", v)
	}
	if v := o.VirtualServers[1]; v.Key() != "ns/classless" || !v.Rejected || len(v.Problems) != 1 {
		t.Errorf("classless: %+v", v)
	}
	// VirtualServer problems still reach Events through Others.
	if len(o.Others) == 0 {
		t.Errorf("Others lost the VirtualServer problems")
	}
}
