package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/runtime"
	"github.com/causeway/causeway/internal/source"
)

// fakePusher records pushes and answers like the Lua side would: refuse
// decides, per pushed state, the error (nil accepts it).
type fakePusher struct {
	pushes   int
	accepted []balancer.Backend
	gen      int64 // what GET /v1/generation answers
	refuse   func(backends []balancer.Backend) error
}

func (p *fakePusher) ReplaceEncoded(_ context.Context, gen int64, body []byte) error {
	p.pushes++
	var st balancer.State
	if err := json.Unmarshal(body, &st); err != nil {
		return err
	}
	if st.Generation != gen {
		return fmt.Errorf("generation %d in the body, %d in the call", st.Generation, gen)
	}
	if p.refuse != nil {
		if err := p.refuse(st.Backends); err != nil {
			return err
		}
	}
	p.accepted, p.gen = st.Backends, gen
	return nil
}

func (p *fakePusher) CertificatesChanged(context.Context) error { return nil }

func (p *fakePusher) Generation(context.Context) (int64, error) { return p.gen, nil }

func keysOf(bs []balancer.Backend) string {
	var k []string
	for _, b := range bs {
		k = append(k, b.Key)
	}
	return strings.Join(k, ",")
}

func endpoints(n int) []model.Endpoint {
	eps := make([]model.Endpoint, n)
	for i := range eps {
		eps[i] = model.Endpoint{Address: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), Port: 8080}
	}
	return eps
}

// testModel has one backend per Service name with n endpoints, each
// routed to by an Ingress of the same name.
func testModel(services map[string]int) *SyncResult {
	m := &model.Model{}
	snap := &source.Snapshot{}
	srv := &model.Server{Host: "x.test"}
	for _, name := range []string{"a", "big", "c"} {
		n, ok := services[name]
		if !ok {
			continue
		}
		key := "ns/" + name + "/80"
		m.Backends = append(m.Backends, &model.Backend{Key: key, Namespace: "ns", Service: name, Port: "80", Endpoints: endpoints(n)})
		srv.Locations = append(srv.Locations, &model.Location{Match: model.Match{Type: model.Prefix, Path: "/" + name}, Action: model.ProxyTo(key),
			Source: model.ObjectRef{Kind: "Ingress", Namespace: "ns", Name: name, UID: "uid-ing-" + name}})
		snap.Services = append(snap.Services, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}})
	}
	m.Servers = []*model.Server{srv}
	return &SyncResult{Model: m, Snapshot: snap}
}

func problemsOf(res *SyncResult) string {
	var out []string
	for _, p := range res.Problems {
		out = append(out, fmt.Sprintf("%s %s/%s(%s) %s", p.Object.Kind, p.Object.Namespace, p.Object.Name, p.Object.UID, p.Reason))
	}
	return strings.Join(out, "; ")
}

// TestDynamicChannelWritesOnlyChanges checks the state file always holds
// what a (re)starting nginx needs: the union before a reload, the pushed
// state after, and no rewrite or push when nothing changed.
func TestDynamicChannelWritesOnlyChanges(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state.json")
	p := &fakePusher{}
	d := &dynamicChannel{pusher: p, stateFile: file}
	a := []balancer.Backend{{Key: "ns/a/80"}}
	ab := []balancer.Backend{{Key: "ns/a/80"}, {Key: "ns/b/80"}}
	keys := func() string {
		data, _ := os.ReadFile(file)
		return string(data)
	}
	ctx := context.Background()
	if err := d.prepare(ab); err != nil {
		t.Fatal(err)
	}
	d.push(ctx, ab, false, nil)
	before, _ := os.Stat(file)
	// Unchanged: neither a file write nor a push.
	time.Sleep(10 * time.Millisecond)
	d.prepare(ab)
	if pushed, _ := d.push(ctx, ab, false, nil); pushed || p.pushes != 1 {
		t.Fatalf("an unchanged state was pushed again")
	}
	if after, _ := os.Stat(file); !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("an unchanged state file was rewritten")
	}
	// Removing b: before the reload the file keeps b for old workers;
	// after the push it holds exactly a.
	d.prepare(a)
	if !strings.Contains(keys(), "ns/b/80") {
		t.Fatal("prepare must keep previously pushed backends")
	}
	d.push(ctx, a, false, nil)
	if strings.Contains(keys(), "ns/b/80") {
		t.Fatal("after the push the file must hold the new state only")
	}
	// The next prepare of the same state must not be skipped wrongly: the
	// file already holds it, so skipping is right, and it still lacks b.
	d.prepare(a)
	if strings.Contains(keys(), "ns/b/80") {
		t.Fatal("state file regressed")
	}
}

// A state nginx serves but the controller did not push (a foreign PUT,
// whatever its generation) is replaced at the next sync, even though the
// controller's own state did not change.
func TestDynamicChannelReplacesForeignState(t *testing.T) {
	p := &fakePusher{}
	d := &dynamicChannel{pusher: p, stateFile: filepath.Join(t.TempDir(), "state.json")}
	a := []balancer.Backend{{Key: "ns/a/80"}}
	ctx := context.Background()
	if pushed, err := d.push(ctx, a, false, nil); !pushed || err != nil {
		t.Fatalf("first push: %v %v", pushed, err)
	}
	if pushed, _ := d.push(ctx, a, false, nil); pushed {
		t.Fatal("nginx serves what was pushed: nothing to do")
	}
	p.gen, p.accepted = balancer.MaxGeneration, nil // someone else's state
	if pushed, err := d.push(ctx, a, false, nil); !pushed || err != nil || keysOf(p.accepted) != "ns/a/80" {
		t.Fatalf("foreign state not replaced: pushed %v, %v, nginx has %q", pushed, err, keysOf(p.accepted))
	}
	if p.gen == balancer.MaxGeneration || p.gen != d.pushedGen {
		t.Fatalf("generation %d after the resync, want the controller's %d", p.gen, d.pushedGen)
	}
}

// A Service over a limit of the Lua side is left out before the push and
// reported on the Service and on its Ingress; every other backend is
// pushed, and its later changes too.
func TestDynamicBackendsLeaveOutOverLimit(t *testing.T) {
	p := &fakePusher{refuse: func(bs []balancer.Backend) error {
		for i, b := range bs {
			if len(b.Endpoints) > balancer.MaxEndpoints {
				return &balancer.APIError{StatusCode: 400, Message: fmt.Sprintf("backends[%d].endpoints: must have at most %d items", i, balancer.MaxEndpoints)}
			}
		}
		return nil
	}}
	c := &Controller{dyn: &dynamicChannel{pusher: p, stateFile: filepath.Join(t.TempDir(), "state.json")}}
	ctx := context.Background()
	for i, n := range []int{1, 2, 3} {
		res := testModel(map[string]int{"a": n, "big": balancer.MaxEndpoints + 1, "c": 1})
		backends := c.dynamicBackends(res)
		if got := keysOf(backends); got != "ns/a/80,ns/c/80" {
			t.Fatalf("sync %d: backends %q, want the big one left out", i, got)
		}
		want := "Service ns/big(uid-big) EndpointsOverLimit; Ingress ns/big(uid-ing-big) EndpointsOverLimit"
		if got := problemsOf(res); got != want {
			t.Fatalf("sync %d: problems %q, want %q", i, got, want)
		}
		if !strings.Contains(res.Problems[0].Message, "10001 endpoints, more than the limit of 10000") {
			t.Errorf("message %q does not say why", res.Problems[0].Message)
		}
		if pushed, err := c.dyn.push(ctx, backends, false, res); !pushed || err != nil {
			t.Fatalf("sync %d: pushed %v, %v", i, pushed, err)
		}
		if len(p.accepted) != 2 || len(p.accepted[0].Endpoints) != n {
			t.Fatalf("sync %d: nginx has %+v", i, p.accepted)
		}
	}
	if p.pushes != 3 {
		t.Errorf("%d pushes for 3 changes; a refused push was sent", p.pushes)
	}
	// Back at the limit, it is pushed.
	res := testModel(map[string]int{"a": 1, "big": balancer.MaxEndpoints, "c": 1})
	if got := keysOf(c.dynamicBackends(res)); got != "ns/a/80,ns/big/80,ns/c/80" || len(res.Problems) != 0 {
		t.Fatalf("at the limit: %q, problems %q", got, problemsOf(res))
	}
}

// A backend nginx refuses although Go validation passed (the two drifted)
// is left out and reported; the rest goes live in the same sync, and the
// refused backend costs no refused push while it stays the same.
func TestDynamicPushLeavesOutRefusedBackend(t *testing.T) {
	p := &fakePusher{refuse: func(bs []balancer.Backend) error {
		for i, b := range bs {
			if b.Key == "ns/big/80" {
				return &balancer.APIError{StatusCode: 400, Message: fmt.Sprintf("backends[%d].endpoints[0].zone: must be 1 to 128", i)}
			}
		}
		return nil
	}}
	c := &Controller{dyn: &dynamicChannel{pusher: p, stateFile: filepath.Join(t.TempDir(), "state.json")}}
	ctx := context.Background()
	sync := func(n int) *SyncResult {
		t.Helper()
		res := testModel(map[string]int{"a": n, "big": 2, "c": 1})
		if _, err := c.dyn.push(ctx, c.dynamicBackends(res), false, res); err != nil {
			t.Fatalf("push: %v", err)
		}
		if keysOf(p.accepted) != "ns/a/80,ns/c/80" || len(p.accepted[0].Endpoints) != n {
			t.Fatalf("nginx has %+v", p.accepted)
		}
		if got, want := problemsOf(res), "Service ns/big(uid-big) InvalidBackend; Ingress ns/big(uid-ing-big) InvalidBackend"; got != want {
			t.Fatalf("problems %q, want %q", got, want)
		}
		return res
	}
	res := sync(1)
	if !strings.Contains(res.Problems[0].Message, "nginx refused it: backend.endpoints[0].zone") {
		t.Errorf("message %q does not carry nginx's", res.Problems[0].Message)
	}
	if p.pushes != 2 {
		t.Fatalf("%d pushes, want the refused one and the one without the offender", p.pushes)
	}
	sync(1) // unchanged: no push at all
	sync(2) // a's change: one push, not refused
	if p.pushes != 3 {
		t.Fatalf("%d pushes, want 3", p.pushes)
	}
}

// When the state does not fit (507), the largest backend is left out so
// the others go live.
func TestDynamicPushTooLargeLeavesOutLargest(t *testing.T) {
	p := &fakePusher{refuse: func(bs []balancer.Backend) error {
		n := 0
		for _, b := range bs {
			n += len(b.Endpoints)
		}
		if n > 100 {
			return &balancer.APIError{StatusCode: 507, Message: "shared dict causeway_state cannot hold the new state"}
		}
		return nil
	}}
	c := &Controller{dyn: &dynamicChannel{pusher: p, stateFile: filepath.Join(t.TempDir(), "state.json")}}
	res := testModel(map[string]int{"a": 10, "big": 500, "c": 10})
	if _, err := c.dyn.push(context.Background(), c.dynamicBackends(res), false, res); err != nil {
		t.Fatal(err)
	}
	if keysOf(p.accepted) != "ns/a/80,ns/c/80" {
		t.Fatalf("nginx has %q", keysOf(p.accepted))
	}
	if got, want := problemsOf(res), "Service ns/big(uid-big) StateTooLarge; Ingress ns/big(uid-ing-big) StateTooLarge"; got != want {
		t.Fatalf("problems %q, want %q", got, want)
	}
}

// A push refused as a whole, with no backend to blame, is not sent again
// until the state changes or nginx restarts: it never loops.
func TestDynamicPushRefusedIsNotRepeated(t *testing.T) {
	refusal := &balancer.APIError{StatusCode: 400, Message: "backends: must be an array"}
	p := &fakePusher{refuse: func([]balancer.Backend) error { return refusal }}
	file := filepath.Join(t.TempDir(), "state.json")
	d := &dynamicChannel{pusher: p, stateFile: file}
	ctx := context.Background()
	a := []balancer.Backend{{Key: "ns/a/80"}}
	for range 3 {
		if _, err := d.push(ctx, a, false, nil); !errors.Is(err, refusal) {
			t.Fatalf("got %v, want the refusal", err)
		}
	}
	if p.pushes != 1 {
		t.Fatalf("the same refused state was sent %d times", p.pushes)
	}
	d.push(ctx, a, true, nil) // nginx restarted
	d.push(ctx, []balancer.Backend{{Key: "ns/b/80"}}, false, nil)
	if p.pushes != 3 {
		t.Fatalf("%d pushes, want one more after a restart and one for a new state", p.pushes)
	}
	// Once accepted, a refused push puts the accepted state back in the
	// state file, so a restarted nginx starts from what it accepted.
	p.refuse = nil
	if _, err := d.push(ctx, a, false, nil); err != nil {
		t.Fatal(err)
	}
	p.refuse = func([]balancer.Backend) error { return refusal }
	d.push(ctx, []balancer.Backend{{Key: "ns/b/80"}}, false, nil)
	data, _ := os.ReadFile(file)
	if !strings.Contains(string(data), `"ns/a/80"`) || strings.Contains(string(data), `"ns/b/80"`) {
		t.Fatalf("state file after a refusal: %s", data)
	}
}

// Through Sync: a Service over the endpoint limit ends up in
// SyncResult.Problems (logged, and seen by OnSync for Events), another
// Service's endpoint change is pushed, and the sync succeeds.
func TestSyncReportsServiceOverLimit(t *testing.T) {
	dir := layout.Dir(t.TempDir())
	if err := os.MkdirAll(dir.Path(layout.RunDir), 0o700); err != nil {
		t.Fatal(err)
	}
	src := &staticSource{snap: snapshot(3)}
	p := &fakePusher{}
	var results []SyncResult
	c := New(Options{Source: src, Applier: nopApplier{},
		Model: build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"}},
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: metrics.New(),
		Render:  render.Params{StateDir: dir, HTTPPort: 80, HTTPSPort: 443, Dynamic: &render.Dynamic{}},
		Dynamic: p, OnSync: func(r SyncResult) { results = append(results, r) }})
	for i, web := range []int{1, 2} {
		src.snap = snapshot(web)
		if err := c.Sync(context.Background(), time.Now()); err != nil {
			t.Fatalf("sync %d: %v", i, err)
		}
		res := results[len(results)-1]
		var found bool
		for _, pr := range res.Problems {
			if pr.Reason == ReasonEndpointsOverLimit && pr.Object.Kind == "Service" && pr.Object.Namespace == "default" && pr.Object.Name == "big" {
				found = true
			}
		}
		if !found {
			t.Fatalf("sync %d: no EndpointsOverLimit problem on Service default/big in %v", i, res.Problems)
		}
		if keysOf(p.accepted) != "default/web/80" || len(p.accepted[0].Endpoints) != web {
			t.Fatalf("sync %d: nginx has %+v", i, p.accepted)
		}
	}
}

type staticSource struct{ snap *source.Snapshot }

func (s *staticSource) Run(ctx context.Context) error { <-ctx.Done(); return nil }
func (s *staticSource) HasSynced() bool               { return true }
func (s *staticSource) Changed() <-chan struct{}      { return nil }
func (s *staticSource) Snapshot() *source.Snapshot    { return s.snap }

type nopApplier struct{}

func (nopApplier) Apply(context.Context, render.Files, string) (runtime.ApplyResult, error) {
	return runtime.ApplyResult{}, nil
}

// snapshot has Service web with n endpoints and Service big with one more
// than the limit, spread over EndpointSlices of 1,000, each behind an
// Ingress.
func snapshot(n int) *source.Snapshot {
	snap := &source.Snapshot{}
	class := "causeway"
	snap.IngressClasses = []*networkingv1.IngressClass{{ObjectMeta: metav1.ObjectMeta{Name: class},
		Spec: networkingv1.IngressClassSpec{Controller: "causeway.io/ingress-controller"}}}
	for _, svc := range []struct {
		name string
		n    int
	}{{"web", n}, {"big", balancer.MaxEndpoints + 1}} {
		snap.Services = append(snap.Services, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: svc.name, UID: types.UID("uid-" + svc.name)},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
		for s := 0; s*1000 < svc.n; s++ {
			es := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s-%d", svc.name, s),
				Labels: map[string]string{discoveryv1.LabelServiceName: svc.name}},
				AddressType: discoveryv1.AddressTypeIPv4,
				Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(8080)), Protocol: ptr.To(corev1.ProtocolTCP)}}}
			for i := s * 1000; i < min(svc.n, (s+1)*1000); i++ {
				es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.%d.%d.%d", len(svc.name), i>>8, i&255)}})
			}
			snap.EndpointSlices = append(snap.EndpointSlices, es)
		}
		pt := networkingv1.PathTypePrefix
		snap.Ingresses = append(snap.Ingresses, &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: svc.name, UID: types.UID("uid-ing-" + svc.name)},
			Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{Host: svc.name + ".test",
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: svc.name, Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}},
		})
	}
	return snap
}
