package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/source"
)

// endpointSource is staticSource telling EndpointSlice changes apart.
type endpointSource struct {
	staticSource
	changed map[string]bool
}

func (s *endpointSource) EndpointsChanged() <-chan struct{} { return nil }

func (s *endpointSource) TakeEndpointChanges() map[string]bool {
	out := s.changed
	s.changed = map[string]bool{}
	return out
}

func (s *endpointSource) ServiceEndpoints(ns, name string) (*corev1.Service, []*discoveryv1.EndpointSlice) {
	var svc *corev1.Service
	for _, x := range s.snap.Services {
		if x.Namespace == ns && x.Name == name {
			svc = x
		}
	}
	var out []*discoveryv1.EndpointSlice
	for _, es := range s.snap.EndpointSlices {
		if es.Namespace == ns && es.Labels[discoveryv1.LabelServiceName] == name {
			out = append(out, es)
		}
	}
	return svc, out
}

// patchingPusher is fakePusher with patches, on a base generation as the
// Lua side applies them.
type patchingPusher struct {
	fakePusher
	patches []string // the keys of each patch
	refuse  error
}

func (p *patchingPusher) Patch(_ context.Context, base, gen int64, backends []balancer.Backend, del []string) error {
	if p.refuse != nil {
		return p.refuse
	}
	if base != p.gen {
		return &balancer.APIError{StatusCode: 409, Message: "not the base"}
	}
	next := map[string]balancer.Backend{}
	for _, b := range p.accepted {
		next[b.Key] = b
	}
	for _, b := range backends {
		next[b.Key] = b
	}
	for _, k := range del {
		delete(next, k)
	}
	p.accepted = p.accepted[:0:0]
	for _, b := range next {
		p.accepted = append(p.accepted, b)
	}
	slices.SortFunc(p.accepted, func(a, b balancer.Backend) int { return strings.Compare(a.Key, b.Key) })
	p.gen = gen
	entry := keysOf(backends)
	if len(del) > 0 {
		entry += " -" + strings.Join(del, ",-")
	}
	p.patches = append(p.patches, entry)
	return nil
}

// A push after the first is a patch of what changed, added and removed,
// on the generation pushed last; a full state when most changed, or when
// nginx refuses the patch. After a reload nginx holds the state file, and
// the push patches from it.
func TestDynamicPushPatches(t *testing.T) {
	dir := t.TempDir()
	p := &patchingPusher{}
	d := &dynamicChannel{pusher: p, stateFile: dir + "/state.json"}
	// st is backends k0..k9 with n endpoints each but for the changes.
	st := func(n int, change map[string]int) []balancer.Backend {
		var out []balancer.Backend
		for i := range 10 {
			key := fmt.Sprintf("ns/k%d/80", i)
			m, ok := change[key]
			switch {
			case !ok:
				m = n
			case m < 0:
				continue // removed
			}
			out = append(out, balancer.Backend{Key: key, Endpoints: payloadEndpoints(endpoints(m))})
		}
		return out
	}
	push := func(bs []balancer.Backend) {
		t.Helper()
		if _, err := d.push(t.Context(), bs, false, &SyncResult{}); err != nil {
			t.Fatal(err)
		}
	}
	push(st(1, map[string]int{"ns/k9/80": -1}))
	if p.pushes != 1 || len(p.patches) != 0 {
		t.Fatalf("first push: %d full, patches %v; want one full state", p.pushes, p.patches)
	}
	push(st(1, map[string]int{"ns/k0/80": 2, "ns/k1/80": -1}))
	if p.pushes != 1 || strings.Join(p.patches, ";") != "ns/k0/80,ns/k9/80 -ns/k1/80" {
		t.Fatalf("second push: %d full, patches %q", p.pushes, p.patches)
	}
	if len(p.accepted) != 9 || p.accepted[0].Key != "ns/k0/80" || len(p.accepted[0].Endpoints) != 2 || p.accepted[1].Key != "ns/k2/80" {
		t.Fatalf("nginx has %+v", p.accepted)
	}
	if !d.fileStale {
		t.Fatal("a patch left the state file current")
	}
	// Most changed: a full state.
	push(st(3, nil))
	if p.pushes != 2 {
		t.Fatalf("a push changing every backend was not a full state (%d full, patches %v)", p.pushes, p.patches)
	}
	// Refused (someone else's state): a full state.
	p.gen = 1
	push(st(3, map[string]int{"ns/k0/80": 4}))
	if p.pushes != 3 || len(p.accepted) != 10 || len(p.accepted[0].Endpoints) != 4 {
		t.Fatalf("over a foreign state: %d full, nginx has %+v", p.pushes, p.accepted)
	}
	// A reload loads the prepared file (the new backends and the old):
	// the push after it removes the old by a patch.
	want := st(3, map[string]int{"ns/k0/80": 4, "ns/k5/80": -1})
	if err := d.prepare(want); err != nil {
		t.Fatal(err)
	}
	p.accepted, p.gen = append([]balancer.Backend(nil), d.fileBackends...), d.fileGen // what the reload did
	slices.SortFunc(p.accepted, func(a, b balancer.Backend) int { return strings.Compare(a.Key, b.Key) })
	d.reloaded()
	patches := len(p.patches)
	push(want)
	if p.pushes != 3 || len(p.patches) != patches+1 || p.patches[patches] != " -ns/k5/80" {
		t.Fatalf("after the reload: %d full, patches %q", p.pushes, p.patches[patches:])
	}
}

func TestSyncEndpoints(t *testing.T) {
	for _, tc := range []struct {
		name string
		// change edits the snapshot and names the Services it changed.
		change func(*source.Snapshot) []string
		refuse error
		// patch is the keys patched, "" for none; full that a full sync
		// is asked for instead.
		patch string
		full  bool
	}{
		{name: "an endpoint more", change: func(s *source.Snapshot) []string {
			s.EndpointSlices[0].Endpoints = append(s.EndpointSlices[0].Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.3.9.9"}})
			return []string{"default/web"}
		}, patch: "default/web/80"},
		{name: "a Service no backend uses", change: func(*source.Snapshot) []string { return []string{"default/unused"} }},
		{name: "a slice rewritten alike", change: func(*source.Snapshot) []string { return []string{"default/web"} }},
		{name: "a Service left out of the state (over the limit)", change: func(*source.Snapshot) []string { return []string{"default/big"} }, full: true},
		{name: "an address the build reports", change: func(s *source.Snapshot) []string {
			s.EndpointSlices[0].Endpoints[0].Addresses = []string{"not-an-address"}
			return []string{"default/web"}
		}, full: true},
		{name: "the Service turned ExternalName", change: func(s *source.Snapshot) []string {
			s.Services[0].Spec.Type = corev1.ServiceTypeExternalName
			return []string{"default/web"}
		}, full: true},
		{name: "nginx refuses the patch", change: func(s *source.Snapshot) []string {
			s.EndpointSlices[0].Endpoints = s.EndpointSlices[0].Endpoints[:1]
			return []string{"default/web"}
		}, refuse: &balancer.APIError{StatusCode: 507, Message: "full"}, full: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := layout.Dir(t.TempDir())
			if err := os.MkdirAll(dir.Path(layout.RunDir), 0o700); err != nil {
				t.Fatal(err)
			}
			src := &endpointSource{staticSource: staticSource{snap: snapshot(2)}}
			p := &patchingPusher{}
			c := New(Options{Source: src, Applier: nopApplier{},
				Model: build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"}},
				Log:   slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: metrics.New(),
				Render:  render.Params{StateDir: dir, HTTPPort: 80, HTTPSPort: 443, Dynamic: &render.Dynamic{}},
				Dynamic: p})
			src.changed = map[string]bool{"default/web": true}
			if c.SyncEndpoints(t.Context(), time.Now()) {
				t.Fatal("before any full sync went live, the incremental path took a change")
			}
			if err := c.Sync(t.Context(), time.Now()); err != nil {
				t.Fatal(err)
			}
			pushes := p.pushes
			p.refuse = tc.refuse
			src.snap = snapshot(2)
			for _, k := range tc.change(src.snap) {
				src.changed[k] = true
			}
			if got := c.SyncEndpoints(t.Context(), time.Now()); got == tc.full {
				t.Fatalf("SyncEndpoints = %v, want %v", got, !tc.full)
			}
			if got := strings.Join(p.patches, ";"); got != tc.patch {
				t.Fatalf("patches %q, want %q", got, tc.patch)
			}
			if p.pushes != pushes {
				t.Fatalf("%d full pushes by the incremental path", p.pushes-pushes)
			}
			if tc.full {
				// The full sync that follows brings nginx to the build's
				// state, whatever the patch did.
				if err := c.Sync(t.Context(), time.Now()); err != nil && tc.refuse == nil {
					t.Fatal(err)
				}
				return
			}
			// What nginx has is what a full sync would push: it pushes
			// nothing more.
			if err := c.Sync(t.Context(), time.Now()); err != nil {
				t.Fatal(err)
			}
			if p.pushes != pushes {
				t.Fatalf("the full sync after the patch pushed again: the patch left nginx other than the build")
			}
			// The state file follows once flushed.
			c.flushStateFile()
			data, err := os.ReadFile(dir.DynamicState())
			if err != nil {
				t.Fatal(err)
			}
			var st balancer.State
			if err := json.Unmarshal(data, &st); err != nil {
				t.Fatal(err)
			}
			if st.Generation != p.gen || keysOf(st.Backends) != keysOf(p.accepted) || len(st.Backends[0].Endpoints) != len(p.accepted[0].Endpoints) {
				t.Fatalf("state file generation %d with %+v; nginx has generation %d with %+v", st.Generation, st.Backends, p.gen, p.accepted)
			}
		})
	}
}

// Stream Services, those the build reported dropped addresses of, and
// those with a backend left out of the state take a full sync.
func TestIndexEndpointsFull(t *testing.T) {
	res := testModel(map[string]int{"a": 1, "big": 1, "c": 1})
	c := &Controller{dyn: &dynamicChannel{last: backendsOf(res.Model)[1:]}} // ns/a/80 left out
	problems := []model.Problem{{Object: model.ObjectRef{Kind: "Service", Namespace: "ns", Name: "c"}, Reason: model.ReasonDroppedEndpoints}}
	c.indexEndpoints(res.Model, problems, map[string]bool{"ns/big": true, "ns/stream-only": true})
	for svc, want := range map[string]bool{"ns/a": true, "ns/big": true, "ns/c": true, "ns/stream-only": true} {
		if c.epIndex.full[svc] != want {
			t.Errorf("%s: full %v, want %v", svc, c.epIndex.full[svc], want)
		}
	}
	c.indexEndpoints(res.Model, nil, nil)
	if len(c.epIndex.full) != 1 || len(c.epIndex.backends["ns/c"]) != 1 || len(c.epIndex.backends["ns/big"]) != 1 {
		t.Errorf("index %+v, want only ns/a (left out) to take a full sync", c.epIndex)
	}
}

// chanEndpointSource signals its changes on a channel, as the kube source.
type chanEndpointSource struct {
	endpointSource
	mu sync.Mutex
	ch chan struct{}
}

func (s *chanEndpointSource) EndpointsChanged() <-chan struct{} { return s.ch }

func (s *chanEndpointSource) TakeEndpointChanges() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endpointSource.TakeEndpointChanges()
}

func (s *chanEndpointSource) Snapshot() *source.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}

func (s *chanEndpointSource) ServiceEndpoints(ns, name string) (*corev1.Service, []*discoveryv1.EndpointSlice) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endpointSource.ServiceEndpoints(ns, name)
}

// Run applies an EndpointSlice change at once, not after the quiet period
// that coalesces the changes taking a build (set to an hour here), and
// without a sync.
func TestRunPatchesEndpointsAtOnce(t *testing.T) {
	dir := layout.Dir(t.TempDir())
	if err := os.MkdirAll(dir.Path(layout.RunDir), 0o700); err != nil {
		t.Fatal(err)
	}
	src := &chanEndpointSource{endpointSource: endpointSource{staticSource: staticSource{snap: snapshot(2)}, changed: map[string]bool{}},
		ch: make(chan struct{}, 1)}
	p := &lockedPusher{}
	var syncs atomic.Int32
	c := New(Options{Source: src, Applier: nopApplier{},
		Model: build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"}},
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: metrics.New(),
		Render:  render.Params{StateDir: dir, HTTPPort: 80, HTTPSPort: 443, Dynamic: &render.Dynamic{}},
		Dynamic: p, Quiet: time.Hour, MaxDelay: time.Hour, OnSync: func(SyncResult) { syncs.Add(1) }})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for syncs.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no first sync")
		}
		time.Sleep(5 * time.Millisecond)
	}
	src.mu.Lock()
	next := snapshot(3)
	src.snap = next
	src.changed["default/web"] = true
	src.mu.Unlock()
	src.ch <- struct{}{}
	for p.patched() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the endpoint change was not patched within 10 s (the quiet period is an hour)")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := syncs.Load(); n != 1 {
		t.Fatalf("%d syncs; want the first only", n)
	}
}

// lockedPusher is patchingPusher safe for a Run in another goroutine.
type lockedPusher struct {
	mu sync.Mutex
	p  patchingPusher
}

func (l *lockedPusher) ReplaceEncoded(ctx context.Context, gen int64, body []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.p.ReplaceEncoded(ctx, gen, body)
}

func (l *lockedPusher) CertificatesChanged(context.Context) error { return nil }

func (l *lockedPusher) Generation(ctx context.Context) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.p.gen, nil
}

func (l *lockedPusher) Patch(ctx context.Context, base, gen int64, backends []balancer.Backend, del []string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.p.Patch(ctx, base, gen, backends, del)
}

func (l *lockedPusher) patched() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.p.patches)
}
