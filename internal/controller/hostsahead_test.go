package controller

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/source"
)

// changingSource is a staticSource that says what changed.
type changingSource struct {
	staticSource
	changed, services map[string]bool
	other             bool
}

func (s *changingSource) TakeChanges() source.Changes {
	ch := source.Changes{Ingresses: s.changed, Services: s.services, Other: s.other}
	s.changed, s.services, s.other = nil, nil, false
	return ch
}

// TestHostsAheadOfTheFullSync: a change of Ingresses alone that only
// adds, changes or removes table hosts is pushed before the full sync
// (the new backends patched in, the table replaced), and the full sync
// after it finds the same table and backends, so it pushes nothing and
// reloads nothing; a row per case it leaves to the full sync.
func TestHostsAheadOfTheFullSync(t *testing.T) {
	dir := layout.Dir(t.TempDir())
	if err := os.MkdirAll(dir.Path(layout.RunDir), 0o700); err != nil {
		t.Fatal(err)
	}
	src := &changingSource{staticSource: staticSource{snap: hostsSnapshot("a.test", "b.test")}}
	apply := &versionApplier{}
	p := &patchingHostsPusher{}
	m := metrics.New()
	c := New(Options{Source: src, Applier: apply,
		Model: build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"}, LuaAvailable: true},
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: m,
		Render:  render.Params{StateDir: dir, HTTPPort: 80, HTTPSPort: 443, Dynamic: &render.Dynamic{}},
		Dynamic: p})
	ctx := context.Background()
	if err := c.Sync(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	ahead := func() float64 {
		return testutil.ToFloat64(m.DynamicUpdates.WithLabelValues("hosts_ahead", "success"))
	}
	table := func() string { return lastTable(p.tables, "") }
	// step changes the snapshot to hosts, tells hostsAhead that the
	// Ingresses named changed, and runs it, then the full sync; it
	// checks what each pushed.
	step := func(name string, snap *source.Snapshot, changed []string, wantAhead bool, wantTable string) {
		t.Helper()
		src.snap, src.changed = snap, map[string]bool{}
		for _, k := range changed {
			src.changed["default/"+k] = true
		}
		tables, patches, pushes, n, reloads := len(p.tables), len(p.patches), p.pushes, ahead(), apply.reloads()
		if !c.sourceChanged(ctx) {
			t.Fatalf("%s: no full sync called for", name)
		}
		if got := ahead() > n; got != wantAhead {
			t.Fatalf("%s: pushed ahead %v, want %v", name, got, wantAhead)
		}
		if wantAhead {
			if len(p.tables) != tables+1 || table() != wantTable {
				t.Fatalf("%s: table %q after %d pushes, want %q after 1", name, table(), len(p.tables)-tables, wantTable)
			}
			tables, patches, pushes = len(p.tables), len(p.patches), p.pushes
		} else if len(p.tables) != tables || len(p.patches) != patches || p.pushes != pushes {
			t.Fatalf("%s: declined, but pushed", name)
		}
		if err := c.Sync(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		// It may remove the backends the change left unused, which
		// hostsAhead leaves to it.
		added := slices.ContainsFunc(p.patches[patches:], func(e string) bool { return !strings.HasPrefix(e, " -") })
		if wantAhead && (len(p.tables) != tables || added || p.pushes != pushes || apply.reloads() != reloads) {
			t.Fatalf("%s: the full sync after it pushed %d tables (now %q), patches %q, %d states and reloaded %d times; want at most removals",
				name, len(p.tables)-tables, table(), p.patches[patches:], p.pushes-pushes, apply.reloads()-reloads)
		}
	}

	step("c added", hostsSnapshot("a.test", "b.test", "c.test"), []string{"c"}, true, "c.test")
	if keysOf(p.accepted) != keysOf(c.dyn.last) || !strings.Contains(keysOf(p.accepted), "default/c/80") {
		t.Fatalf("backends: nginx has %s, the controller %s", keysOf(p.accepted), keysOf(c.dyn.last))
	}
	step("d added too", hostsSnapshot("a.test", "b.test", "c.test", "d.test"), []string{"d"}, true, "c.test,d.test")
	moved := hostsSnapshot("a.test", "b.test", "c.test", "d.test")
	moved.Ingresses[3].Spec.Rules[0].Host = "e.test"
	step("d's host changed", moved, []string{"d"}, true, "c.test,e.test")
	step("d removed", hostsSnapshot("a.test", "b.test", "c.test"), []string{"d"}, true, "c.test")
	step("c removed", hostsSnapshot("a.test", "b.test"), []string{"c"}, true, "")
	step("c added again", hostsSnapshot("a.test", "b.test", "c.test"), []string{"c"}, true, "c.test")
	second := hostsSnapshot("a.test", "b.test", "c.test", "k.test")
	second.Ingresses[3].Spec.Rules[0].Host = "c.test" // k: c's host, another path
	second.Ingresses[3].Spec.Rules[0].HTTP.Paths = second.Ingresses[3].Spec.Rules[0].HTTP.Paths[:1]
	second.Ingresses[3].Spec.Rules[0].HTTP.Paths[0].Path = "/k"
	step("a second Ingress of a table host", second, []string{"k"}, false, "")

	// nginx refuses the patch: nothing is pushed ahead, and the full
	// sync after it pushes the new host's backend and entry.
	failed := func() float64 {
		return testutil.ToFloat64(m.DynamicUpdates.WithLabelValues("hosts_ahead", "failure"))
	}
	src.snap, src.changed = hostsSnapshot("a.test", "b.test", "c.test", "l.test"), map[string]bool{"default/l": true}
	if err := c.Sync(ctx, time.Now()); err != nil { // k's change, left to it
		t.Fatal(err)
	}
	src.snap = hostsSnapshot("a.test", "b.test", "c.test", "l.test", "n.test")
	src.changed = map[string]bool{"default/n": true}
	p.patchingPusher.refuse = &balancer.APIError{StatusCode: 409, Message: "not the base"}
	tables, f := len(p.tables), failed()
	c.sourceChanged(ctx)
	if failed() != f+1 || len(p.tables) != tables {
		t.Fatalf("a refused patch: %v failures counted, %d tables pushed", failed()-f, len(p.tables)-tables)
	}
	p.patchingPusher.refuse = nil
	if err := c.Sync(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if table() != "n.test" || !strings.Contains(keysOf(p.accepted), "default/n/80") {
		t.Fatalf("after a refused patch the full sync left table %q, backends %s", table(), keysOf(p.accepted))
	}

	// Left to the full sync.
	step("another change too", hostsSnapshot("a.test", "b.test", "c.test", "f.test"), nil, false, "")
	src.other = true
	step("another change too", hostsSnapshot("a.test", "b.test", "c.test", "g.test"), []string{"g"}, false, "")
	withDefault := hostsSnapshot("a.test", "b.test", "c.test", "g.test", "h.test")
	withDefault.Ingresses[4].Spec.DefaultBackend = withDefault.Ingresses[4].Spec.Rules[0].HTTP.Paths[0].Backend.DeepCopy()
	step("a default backend", withDefault, []string{"h"}, false, "")
	noService := hostsSnapshot("a.test", "b.test", "c.test", "g.test", "h.test", "i.test")
	noService.Services = noService.Services[:5]
	step("a missing Service (a Problem)", noService, []string{"i"}, false, "")
	served := hostsSnapshot("a.test", "b.test", "c.test", "g.test", "h.test")
	served.Ingresses[0].Spec.Rules[0].HTTP.Paths[1].Backend.Service.Name = "b"
	step("a host of the files", served, []string{"a"}, false, "")
	noHost := hostsSnapshot("a.test", "b.test", "c.test", "g.test", "h.test", "j.test")
	noHost.Ingresses[5].Spec.Rules = append(noHost.Ingresses[5].Spec.Rules, networkingv1.IngressRule{IngressRuleValue: noHost.Ingresses[5].Spec.Rules[0].IngressRuleValue})
	step("a rule without a host", noHost, []string{"j"}, false, "")
}
