package status

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/status/gatewayapi"
)

const otherController gwv1.GatewayController = "example.net/gateway-controller"

// gatewayObjects are a GatewayClass of ours, a Gateway of it and an
// HTTPRoute attached to it whose status holds another controller's entry.
func gatewayObjects() (*gwv1.GatewayClass, *gwv1.Gateway, *gwv1.HTTPRoute) {
	m := func(ns, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1", Generation: 1}
	}
	gc := &gwv1.GatewayClass{ObjectMeta: m("", "causeway"), Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}}
	gw := &gwv1.Gateway{ObjectMeta: m("web", "gw"), Spec: gwv1.GatewaySpec{GatewayClassName: "causeway",
		Listeners: []gwv1.Listener{{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType}}}}
	r := &gwv1.HTTPRoute{ObjectMeta: m("web", "route"), Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{
		ParentRefs: []gwv1.ParentReference{{Name: "gw"}, {Name: "theirs"}}}}}
	r.Status.Parents = []gwv1.RouteParentStatus{theirEntry("theirs")}
	return gc, gw, r
}

func theirEntry(name string) gwv1.RouteParentStatus {
	return gwv1.RouteParentStatus{ParentRef: gwv1.ParentReference{Name: gwv1.ObjectName(name)}, ControllerName: otherController,
		Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted", LastTransitionTime: metav1.Now()}}}
}

// gatewayOutcome is an applied sync's Outcome of the objects, resolved as
// the build does.
func gatewayOutcome(t *testing.T, gc *gwv1.GatewayClass, gw *gwv1.Gateway, r *gwv1.HTTPRoute) Outcome {
	t.Helper()
	res, problems := gateway.Resolve([]*gwv1.GatewayClass{gc}, []*gwv1.Gateway{gw}, nil, []gateway.Route{gateway.HTTPRouteOf(r)}, nil,
		func(string, string) []string { return []string{"192.0.2.1"} }, gateway.Inputs{Now: metav1.Now()})
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	snap := &source.Snapshot{GatewayClasses: []*gwv1.GatewayClass{gc}, Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: []*gwv1.HTTPRoute{r}}
	return Outcome{Applied: true, GatewayAPI: gatewayapi.Input{Snapshot: snap, Resolution: res, Problems: problems}}
}

type gatewayHarness struct {
	w       *GatewayWriter
	client  *gwfake.Clientset
	leading atomic.Bool

	mu     sync.Mutex
	writes map[string]int // by "kind result"
	// conflicts fails that many status updates with a conflict.
	conflicts atomic.Int32
	// onConflict runs before a conflict is answered (another writer).
	onConflict func()
}

func newGatewayHarness(t *testing.T, objs ...gatewayapi.Object) *gatewayHarness {
	h := &gatewayHarness{writes: map[string]int{}}
	h.leading.Store(true)
	h.client = gwfake.NewSimpleClientset()
	// By resource: v1beta1's kinds are aliases of v1's, so the tracker
	// cannot tell the version from the type.
	for _, o := range objs {
		gvr := gwv1.SchemeGroupVersion.WithResource(resources[kindOf(o)])
		if err := h.client.Tracker().Create(gvr, o, o.GetNamespace()); err != nil {
			t.Fatal(err)
		}
	}
	// The API server bumps resourceVersion on every write and refuses a
	// stale one; the fake tracker does neither.
	h.client.PrependReactor("update", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		ua := action.(k8stesting.UpdateAction)
		if ua.GetSubresource() != "status" {
			return true, nil, apierrors.NewBadRequest("want an update of the status subresource")
		}
		obj := ua.GetObject().(gatewayapi.Object)
		if h.conflicts.Add(-1) >= 0 {
			if h.onConflict != nil {
				h.onConflict()
			}
			return true, nil, apierrors.NewConflict(ua.GetResource().GroupResource(), obj.GetName(), nil)
		}
		stored, err := h.client.Tracker().Get(ua.GetResource(), obj.GetNamespace(), obj.GetName())
		if err != nil {
			return true, nil, err
		}
		if rv := stored.(gatewayapi.Object).GetResourceVersion(); rv != obj.GetResourceVersion() {
			return true, nil, apierrors.NewConflict(ua.GetResource().GroupResource(), obj.GetName(), nil)
		}
		n, _ := strconv.Atoi(obj.GetResourceVersion())
		obj.SetResourceVersion(strconv.Itoa(n + 1))
		return false, nil, nil
	})
	h.w = NewGatewayWriter(GatewayWriterOptions{Client: h.client, IsLeader: h.leading.Load,
		Log: slog.New(slog.NewTextHandler(testWriter{t}, nil)),
		OnWrite: func(kind string, err error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			result := "success"
			switch {
			case apierrors.IsConflict(err):
				result = "conflict"
			case err != nil:
				result = "failure"
			}
			h.writes[kind+" "+result]++
			if err != nil {
				t.Logf("%s write: %v", kind, err)
			}
		}})
	h.w.get = func(ctx context.Context, kind string, obj gatewayapi.Object) (gatewayapi.Object, error) {
		return h.client.GatewayV1().HTTPRoutes(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	}
	runWriter(t, h.w.Run)
	return h
}

func kindOf(o gatewayapi.Object) string {
	switch o.(type) {
	case *gwv1.GatewayClass:
		return gatewayapi.KindGatewayClass
	case *gwv1.Gateway:
		return gatewayapi.KindGateway
	case *gwv1.ListenerSet:
		return gatewayapi.KindListenerSet
	case *gwv1.BackendTLSPolicy:
		return gatewayapi.KindBackendTLSPolicy
	}
	return gatewayapi.KindHTTPRoute
}

func (h *gatewayHarness) settle(t *testing.T) { t.Helper(); settleWrites(t, h.w.Pending) }

func (h *gatewayHarness) counts() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for k, v := range h.writes {
		out[k] = v
	}
	return out
}

func (h *gatewayHarness) route(t *testing.T) *gwv1.HTTPRoute {
	t.Helper()
	r, err := h.client.GatewayV1().HTTPRoutes("web").Get(context.Background(), "route", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// controllers lists a route's status.parents as "controller/parent".
func controllers(r *gwv1.HTTPRoute) []string {
	var out []string
	for _, p := range r.Status.Parents {
		out = append(out, string(p.ControllerName)+"/"+string(p.ParentRef.Name))
	}
	return out
}

// TestGatewayWriter: the leader writes the GatewayClass's, the Gateway's
// and the route's status once, keeping the route's entry of another
// controller; a snapshot that predates the writes or shows them writes
// nothing more.
func TestGatewayWriter(t *testing.T) {
	gc, gw, r := gatewayObjects()
	h := newGatewayHarness(t, gc.DeepCopy(), gw.DeepCopy(), r.DeepCopy())
	h.w.Observe(gatewayOutcome(t, gc, gw, r))
	h.settle(t)
	want := map[string]int{"GatewayClass success": 1, "Gateway success": 1, "HTTPRoute success": 1}
	if got := h.counts(); !equalCounts(got, want) {
		t.Fatalf("writes %v, want %v", got, want)
	}
	route := h.route(t)
	if got := controllers(route); len(got) != 2 || got[0] != string(otherController)+"/theirs" || got[1] != string(gateway.ControllerName)+"/gw" {
		t.Fatalf("route parents %v: want theirs kept, ours added", got)
	}
	stored, _ := h.client.GatewayV1().GatewayClasses().Get(context.Background(), "causeway", metav1.GetOptions{})
	if len(stored.Status.Conditions) != 1 || stored.Status.Conditions[0].Status != "True" {
		t.Fatalf("GatewayClass status %+v", stored.Status)
	}

	// A sync whose snapshot predates the writes: nothing to write.
	h.w.Observe(gatewayOutcome(t, gc, gw, r))
	h.settle(t)
	// Nor when it shows them.
	gw2, _ := h.client.GatewayV1().Gateways("web").Get(context.Background(), "gw", metav1.GetOptions{})
	h.w.Observe(gatewayOutcome(t, stored, gw2, route))
	h.settle(t)
	if got := h.counts(); !equalCounts(got, want) {
		t.Fatalf("writes %v after unchanged syncs, want still %v", got, want)
	}
}

// TestGatewayWriterLeaderOnly: a follower writes nothing; on becoming
// leader, the Outcome of the next sync is written.
func TestGatewayWriterLeaderOnly(t *testing.T) {
	gc, gw, r := gatewayObjects()
	h := newGatewayHarness(t, gc.DeepCopy(), gw.DeepCopy(), r.DeepCopy())
	h.leading.Store(false)
	o := gatewayOutcome(t, gc, gw, r)
	h.w.Observe(o)
	time.Sleep(50 * time.Millisecond)
	if got := h.counts(); len(got) != 0 {
		t.Fatalf("a follower wrote %v", got)
	}
	h.leading.Store(true)
	h.w.Observe(o) // the sync becoming leader asks for
	h.settle(t)
	if got := h.counts(); got["HTTPRoute success"] != 1 || got["Gateway success"] != 1 || got["GatewayClass success"] != 1 {
		t.Fatalf("writes after becoming leader %v", got)
	}
}

// TestGatewayWriterNotApplied: a sync whose configuration did not go live
// writes nothing.
func TestGatewayWriterNotApplied(t *testing.T) {
	gc, gw, r := gatewayObjects()
	h := newGatewayHarness(t, gc.DeepCopy(), gw.DeepCopy(), r.DeepCopy())
	o := gatewayOutcome(t, gc, gw, r)
	o.Applied = false
	h.w.Observe(o)
	time.Sleep(50 * time.Millisecond)
	if got := h.counts(); len(got) != 0 {
		t.Fatalf("wrote %v after a failed apply", got)
	}
}

// TestGatewayWriterConflict: another controller writes its entry of the
// route between our snapshot and our write: the conflict reads the route
// again and writes ours beside both of theirs.
func TestGatewayWriterConflict(t *testing.T) {
	gc, gw, r := gatewayObjects()
	h := newGatewayHarness(t, r.DeepCopy())
	h.conflicts.Store(1)
	h.onConflict = func() {
		// In a reactor, only the tracker may be used: the fake holds its
		// lock.
		obj, err := h.client.Tracker().Get(gwv1.SchemeGroupVersion.WithResource("httproutes"), "web", "route")
		if err != nil {
			t.Error(err)
			return
		}
		fresh := obj.(*gwv1.HTTPRoute).DeepCopy()
		fresh.Status.Parents = append(fresh.Status.Parents, theirEntry("later"))
		fresh.ResourceVersion = "2"
		if err := h.client.Tracker().Update(gwv1.SchemeGroupVersion.WithResource("httproutes"), fresh, "web"); err != nil {
			t.Error(err)
		}
	}
	o := gatewayOutcome(t, gc, gw, r)
	o.GatewayAPI.Snapshot.GatewayClasses, o.GatewayAPI.Snapshot.Gateways = nil, nil // only the route is written here
	h.w.Observe(o)
	h.settle(t)
	if got := h.counts(); got["HTTPRoute conflict"] != 1 || got["HTTPRoute success"] != 1 {
		t.Fatalf("writes %v: want a conflict, then a success", got)
	}
	got := controllers(h.route(t))
	want := []string{string(otherController) + "/theirs", string(otherController) + "/later", string(gateway.ControllerName) + "/gw"}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("route parents %v, want %v", got, want)
	}
}

// TestGatewayWriterGone: an object deleted before its write is dropped,
// not retried.
func TestGatewayWriterGone(t *testing.T) {
	gc, gw, r := gatewayObjects()
	h := newGatewayHarness(t)
	o := gatewayOutcome(t, gc, gw, r)
	h.w.Observe(o)
	h.settle(t)
	if got := h.counts(); got["HTTPRoute failure"] != 1 || got["HTTPRoute success"] != 0 {
		t.Fatalf("writes %v: want one failed write (NotFound) per object, no retry", got)
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// testWriter logs into t.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
