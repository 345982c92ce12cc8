package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/runtime"
	"github.com/causeway/causeway/internal/source"
)

// hostsTables are the hosts tables nginx took, by PUT /v1/hosts or in a
// full state; refuse, when set, refuses every non-empty one.
type hostsTables struct {
	tables [][]balancer.Host
	refuse error
}

func (h *hostsTables) tablesOf() *hostsTables { return h }

func (h *hostsTables) ReplaceHosts(_ context.Context, hosts []balancer.Host) error {
	if h.refuse != nil {
		return h.refuse
	}
	h.tables = append(h.tables, hosts)
	return nil
}

// replaceEncoded is ReplaceEncoded through full, recording the table a
// full state carries.
func (h *hostsTables) replaceEncoded(full func() error, body []byte) error {
	var st balancer.State
	if err := json.Unmarshal(body, &st); err != nil {
		return err
	}
	if h.refuse != nil && len(st.Hosts) > 0 {
		return h.refuse
	}
	if err := full(); err != nil {
		return err
	}
	h.tables = append(h.tables, st.Hosts)
	return nil
}

// hostsPusher pushes full states only; patchingHostsPusher patches too.
type hostsPusher struct {
	fakePusher
	hostsTables
}

func (p *hostsPusher) ReplaceEncoded(ctx context.Context, gen int64, body []byte) error {
	return p.replaceEncoded(func() error { return p.fakePusher.ReplaceEncoded(ctx, gen, body) }, body)
}

type patchingHostsPusher struct {
	patchingPusher
	hostsTables
}

func (p *patchingHostsPusher) ReplaceEncoded(ctx context.Context, gen int64, body []byte) error {
	return p.replaceEncoded(func() error { return p.fakePusher.ReplaceEncoded(ctx, gen, body) }, body)
}

// versionApplier reloads when the version changes, as the runtime does
// when the files do.
type versionApplier struct{ versions []string }

func (a *versionApplier) Apply(_ context.Context, _ render.Files, version string) (runtime.ApplyResult, error) {
	changed := len(a.versions) == 0 || a.versions[len(a.versions)-1] != version
	a.versions = append(a.versions, version)
	return runtime.ApplyResult{Reloaded: changed}, nil
}

func (a *versionApplier) reloads() int {
	n := 0
	for i, v := range a.versions {
		if i == 0 || a.versions[i-1] != v {
			n++
		}
	}
	return n
}

// lastTable is the names of the last table pushed, comma-separated, or
// none when none was.
func lastTable(tables [][]balancer.Host, none string) string {
	if len(tables) == 0 {
		return none
	}
	var names []string
	for _, h := range tables[len(tables)-1] {
		names = append(names, h.Name)
	}
	return strings.Join(names, ",")
}

// hostsSnapshot has an Ingress per host, each routing / and /api to a
// Service named after the host's first label, all of one shape.
func hostsSnapshot(hosts ...string) *source.Snapshot {
	snap := &source.Snapshot{}
	cls := "causeway"
	snap.IngressClasses = []*networkingv1.IngressClass{{ObjectMeta: metav1.ObjectMeta{Name: cls},
		Spec: networkingv1.IngressClassSpec{Controller: "causeway.io/ingress-controller"}}}
	pt := networkingv1.PathTypePrefix
	for _, h := range hosts {
		name, _, _ := strings.Cut(h, ".")
		snap.Services = append(snap.Services, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
		backend := networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}}}
		snap.Ingresses = append(snap.Ingresses, &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-ing-" + name)},
			Spec: networkingv1.IngressSpec{IngressClassName: &cls, Rules: []networkingv1.IngressRule{{Host: h,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
					{Path: "/", PathType: &pt, Backend: backend}, {Path: "/api", PathType: &pt, Backend: backend}}}}}}},
		})
	}
	return snap
}

// TestSyncLeavesNewHostsToTheTable: a new host of a shared shape is pushed
// in the hosts table without a reload, and in the state file; removed, it
// leaves the table; a table nginx refuses goes into the files at the next
// sync.
func TestSyncLeavesNewHostsToTheTable(t *testing.T) {
	for name, p := range map[string]interface {
		Pusher
		tablesOf() *hostsTables
	}{"full states": &hostsPusher{}, "patches": &patchingHostsPusher{}} {
		t.Run(name, func(t *testing.T) { testSyncHosts(t, p, p.tablesOf()) })
	}
}

func testSyncHosts(t *testing.T, pusher Pusher, p *hostsTables) {
	dir := layout.Dir(t.TempDir())
	if err := os.MkdirAll(dir.Path(layout.RunDir), 0o700); err != nil {
		t.Fatal(err)
	}
	src := &staticSource{snap: hostsSnapshot("a.test", "b.test")}
	apply := &versionApplier{}
	c := New(Options{Source: src, Applier: apply,
		Model: build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"}, LuaAvailable: true},
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: metrics.New(),
		Render:  render.Params{StateDir: dir, HTTPPort: 80, HTTPSPort: 443, Dynamic: &render.Dynamic{}},
		Dynamic: pusher})
	sync := func(step string, hosts ...string) error {
		t.Helper()
		src.snap = hostsSnapshot(hosts...)
		return c.Sync(context.Background(), time.Now())
	}
	table := func() string { return lastTable(p.tables, "(none pushed)") }
	fileTable := func() string {
		body, err := os.ReadFile(dir.DynamicState())
		if err != nil {
			t.Fatal(err)
		}
		var st balancer.State
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, h := range st.Hosts {
			names = append(names, h.Name)
		}
		return strings.Join(names, ",")
	}

	if err := sync("start", "a.test", "b.test"); err != nil {
		t.Fatal(err)
	}
	if err := sync("c added", "a.test", "b.test", "c.test"); err != nil {
		t.Fatal(err)
	}
	if apply.reloads() != 1 || table() != "c.test" || fileTable() != "c.test" {
		t.Fatalf("c added: %d reloads, table %s, state file %s; want 1, c.test, c.test", apply.reloads(), table(), fileTable())
	}
	// The shared servers' maps are merged (render/hostmaps.go): the
	// variable is named after their family, not the shape.
	got := p.tables[len(p.tables)-1][0]
	routes := 0
	for name, value := range got.Vars {
		if strings.HasPrefix(name, "causeway_route_") {
			routes++
			if !strings.HasSuffix(name, "_1") || value != "default/c/80" {
				t.Errorf("c's entry: $%s = %q, want $causeway_route_<id>_1 = default/c/80", name, value)
			}
		}
	}
	if routes != 1 {
		t.Errorf("c's entry: %+v, want one route variable", got)
	}
	if err := sync("c removed", "a.test", "b.test"); err != nil {
		t.Fatal(err)
	}
	if apply.reloads() != 1 || table() != "" || fileTable() != "" {
		t.Fatalf("c removed: %d reloads, table %q, state file %q", apply.reloads(), table(), fileTable())
	}

	// nginx refuses the table: the retry reloads with d in the files.
	p.refuse = &balancer.APIError{StatusCode: 507, Message: "shared dict causeway_state cannot hold the hosts table"}
	if err := sync("d refused", "a.test", "b.test", "d.test"); err == nil {
		t.Fatal("a refused table is no error")
	}
	p.refuse = nil
	if err := sync("d retried", "a.test", "b.test", "d.test"); err != nil {
		t.Fatal(err)
	}
	if apply.reloads() != 2 || table() != "" || fileTable() != "" {
		t.Fatalf("d retried: %d reloads, table %q, state file %q; want d in the files", apply.reloads(), table(), fileTable())
	}
	// d is in the files now: e, the next host, goes to the table again.
	if err := sync("e added", "a.test", "b.test", "d.test", "e.test"); err != nil {
		t.Fatal(err)
	}
	if apply.reloads() != 2 || table() != "e.test" {
		t.Fatalf("e added: %d reloads, table %q", apply.reloads(), table())
	}

	// A reload writes e into the files; its old workers still know e by
	// the table only, so e stays there until the next reload.
	steps := []struct {
		hosts   []string
		reloads int
		table   string
	}{
		{[]string{"b.test", "d.test", "e.test"}, 3, "e.test"},                  // a removed: reloads, e folded
		{[]string{"b.test", "d.test", "e.test", "f.test"}, 3, "e.test,f.test"}, // f by the table, e kept (sorted)
		{[]string{"d.test", "e.test", "f.test"}, 4, "f.test"},                  // b removed: f folded, e gone
	}
	for i, st := range steps {
		if err := sync(fmt.Sprint("step ", i), st.hosts...); err != nil {
			t.Fatal(err)
		}
		if apply.reloads() != st.reloads || table() != st.table || fileTable() != st.table {
			t.Fatalf("step %d (%v): %d reloads, table %q, state file %q; want %d, %q", i, st.hosts, apply.reloads(), table(), fileTable(), st.reloads, st.table)
		}
	}
}
