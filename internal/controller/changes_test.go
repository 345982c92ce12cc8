package controller

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/runtime"
	"github.com/causeway/causeway/internal/source"
)

// withService is snap with one more Service, default/name.
func withService(snap *source.Snapshot, name string) *source.Snapshot {
	out := *snap
	out.Services = append(out.Services[:len(out.Services):len(out.Services)], &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
	return &out
}

// TestServiceChangesCallForASync: a row per rule of sourceChanged. A
// change of Services that the last build neither found nor missed calls
// for no sync; any other change does, and a change of Ingresses is tried
// on the hosts table first, such Services beside it not counting.
func TestServiceChangesCallForASync(t *testing.T) {
	src := &changingSource{staticSource: staticSource{snap: hostsSnapshot("a.test", "b.test")}}
	missing := hostsSnapshot("a.test", "b.test", "m.test")
	missing.Services = missing.Services[:2] // Ingress m names Service m, which is not there
	src.snap = missing
	opts := testOptions(t, src)
	opts.Model.LuaAvailable, opts.Render.Dynamic, opts.Dynamic = true, &render.Dynamic{}, &patchingHostsPusher{}
	c := New(opts)
	ctx := context.Background()
	ahead := func() float64 {
		return testutil.ToFloat64(opts.Metrics.DynamicUpdates.WithLabelValues("hosts_ahead", "success"))
	}
	set := func(keys ...string) map[string]bool {
		m := map[string]bool{}
		for _, k := range keys {
			m[k] = true
		}
		return m
	}

	src.services = set("default/unused")
	if !c.sourceChanged(ctx) {
		t.Fatal("before any build: a Service change called for no sync")
	}
	if err := c.Sync(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if want := set("default/a", "default/b", "default/m"); !maps.Equal(c.services, want) {
		t.Fatalf("the build looked for %v; want %v", c.services, want)
	}
	for _, tc := range []struct {
		name              string
		ingresses, svcs   []string
		other, want, push bool
	}{
		{name: "a Service no object names", svcs: []string{"default/unused"}},
		{name: "Services no object names", svcs: []string{"default/unused", "other/a"}},
		{name: "a Service a backend uses", svcs: []string{"default/unused", "default/a"}, want: true},
		{name: "the missing Service an Ingress names", svcs: []string{"default/m"}, want: true},
		{name: "an unused Service and another kind", svcs: []string{"default/unused"}, other: true, want: true},
		{name: "nothing told apart", want: true},
		{name: "an unused Service and an Ingress of a new table host", ingresses: []string{"default/c"},
			svcs: []string{"default/unused"}, want: true, push: true},
		{name: "a used Service and an Ingress", ingresses: []string{"default/c"}, svcs: []string{"default/a"}, want: true},
	} {
		src.snap = withService(missing, "unused")
		if tc.ingresses != nil {
			src.snap = withService(hostsSnapshot("a.test", "b.test", "c.test"), "unused")
		}
		src.changed, src.services, src.other = set(tc.ingresses...), set(tc.svcs...), tc.other
		n, skipped := ahead(), testutil.ToFloat64(opts.Metrics.ChangesWithoutSync)
		if got := c.sourceChanged(ctx); got != tc.want {
			t.Errorf("%s: sync called for %v, want %v", tc.name, got, tc.want)
		}
		if counted := testutil.ToFloat64(opts.Metrics.ChangesWithoutSync) > skipped; counted == tc.want {
			t.Errorf("%s: counted without a sync %v, want %v", tc.name, counted, !tc.want)
		}
		if pushed := ahead() > n; pushed != tc.push {
			t.Errorf("%s: hosts pushed ahead %v, want %v", tc.name, pushed, tc.push)
		}
		src.snap = missing
		if err := c.Sync(ctx, time.Now()); err != nil { // back to the start
			t.Fatal(err)
		}
	}
}

// signalSource is a ChangeSource whose changes a test makes while the
// controller runs, counting the snapshots taken.
type signalSource struct {
	mu        sync.Mutex
	snap      *source.Snapshot
	pending   source.Changes
	snapshots int
	ch        chan struct{}
	taken     chan struct{}
}

func (s *signalSource) Run(ctx context.Context) error { <-ctx.Done(); return nil }
func (s *signalSource) HasSynced() bool               { return true }
func (s *signalSource) Changed() <-chan struct{}      { return s.ch }

func (s *signalSource) Snapshot() *source.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snapshots++
	return s.snap
}

func (s *signalSource) TakeChanges() source.Changes {
	s.mu.Lock()
	out := s.pending
	s.pending = source.Changes{}
	s.mu.Unlock()
	select {
	case s.taken <- struct{}{}:
	default:
	}
	return out
}

// change makes snap current with the Services keys changed, and signals.
func (s *signalSource) change(snap *source.Snapshot, keys ...string) {
	s.mu.Lock()
	s.snap = snap
	for _, k := range keys {
		if s.pending.Services == nil {
			s.pending.Services = map[string]bool{}
		}
		s.pending.Services[k] = true
	}
	s.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

func (s *signalSource) taking() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshots
}

// signalApplier tells each Apply.
type signalApplier chan struct{}

func (a signalApplier) Apply(context.Context, render.Files, string) (runtime.ApplyResult, error) {
	a <- struct{}{}
	return runtime.ApplyResult{}, nil
}

// TestUnusedServiceTakesNoSync: in the running loop, a Service that no
// object names comes and goes without a sync; one that an Ingress names
// takes one.
func TestUnusedServiceTakesNoSync(t *testing.T) {
	base := hostsSnapshot("a.test", "b.test")
	src := &signalSource{snap: base, ch: make(chan struct{}, 1), taken: make(chan struct{}, 1)}
	applied := make(signalApplier, 8)
	opts := testOptions(t, src)
	opts.Applier, opts.Quiet, opts.MaxDelay = applied, time.Millisecond, 10*time.Millisecond
	c := New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s", what)
		}
	}
	wait(applied, "first sync")

	// A sync started by the change would take a snapshot within the
	// 300 ms after the change was taken (Quiet is 1 ms).
	src.change(withService(base, "unused"), "default/unused")
	wait(src.taken, "change taken")
	time.Sleep(300 * time.Millisecond)
	src.change(base, "default/unused")
	wait(src.taken, "change taken")
	time.Sleep(300 * time.Millisecond)
	if n := src.taking(); n != 1 {
		t.Fatalf("%d snapshots after a Service no object names came and went; want the first sync's alone", n)
	}
	src.change(withService(base, "unused"), "default/a")
	wait(applied, "sync after a change of a Service an Ingress names")
	if n := src.taking(); n != 2 {
		t.Fatalf("%d snapshots; want 2", n)
	}
}
