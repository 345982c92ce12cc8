package controller

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/runtime"
	"github.com/causeway/causeway/internal/source"
)

// pickyApplier refuses, as nginx does when a hash cannot be built, any
// configuration whose files mention one of the poison hosts, with a
// message that names no file.
type pickyApplier struct {
	poison []string
	tests  int
	live   render.Files
}

func (a *pickyApplier) check(files render.Files) error {
	for _, f := range files {
		for _, p := range a.poison {
			if bytes.Contains(f, []byte(p)) {
				return &runtime.ConfigError{Output: "nginx: [emerg] could not build server_names_hash, you should increase server_names_hash_bucket_size: 256"}
			}
		}
	}
	return nil
}

func (a *pickyApplier) Apply(_ context.Context, files render.Files, _ string) (runtime.ApplyResult, error) {
	if err := a.check(files); err != nil {
		return runtime.ApplyResult{}, err
	}
	a.live = files
	return runtime.ApplyResult{Reloaded: true}, nil
}

func (a *pickyApplier) Test(_ context.Context, files render.Files) error {
	a.tests++
	return a.check(files)
}

func hostIngress(name, host string, age int) *networkingv1.Ingress {
	pt := networkingv1.PathTypePrefix
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(time.Unix(int64(age), 0))},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("causeway"), Rules: []networkingv1.IngressRule{{Host: host,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}},
	}
}

func TestBisectFindsTheIngressNginxRefusesWithoutNamingIt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		total    int
		poison   []int // indexes of the Ingresses nginx refuses
		maxTests int
	}{
		{"one of one", 1, []int{0}, 1},
		{"first of 64", 64, []int{0}, 7},
		{"last of 64", 64, []int{63}, 7},
		{"middle of 1000", 1000, []int{517}, 11},
		{"two of 100: both found, one per round", 100, []int{3, 77}, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := &source.Snapshot{IngressClasses: []*networkingv1.IngressClass{{
				ObjectMeta: metav1.ObjectMeta{Name: "causeway"}, Spec: networkingv1.IngressClassSpec{Controller: "causeway.io/ingress-controller"}}}}
			app := &pickyApplier{}
			var want []string
			for i := range tc.total {
				host := fmt.Sprintf("h%04d.test", i)
				snap.Ingresses = append(snap.Ingresses, hostIngress(fmt.Sprintf("i%04d", i), host, i))
				if slices.Contains(tc.poison, i) {
					app.poison = append(app.poison, `"`+host+`"`)
					want = append(want, fmt.Sprintf("Ingress/ns/i%04d", i))
				}
			}
			var logs strings.Builder
			c := New(Options{
				Source: &staticSource{snap: snap}, Applier: app, Metrics: metrics.New(),
				Log:    slog.New(slog.NewTextHandler(io.MultiWriter(&logs), nil)),
				Model:  build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"}},
				Render: render.Params{StateDir: layout.Dir("/var/lib/causeway"), HTTPPort: 80, HTTPSPort: 443},
			})
			if err := c.Sync(context.Background(), time.Now()); err != nil {
				t.Fatalf("sync: %v\n%s", err, logs.String())
			}
			var excluded []string
			for k := range c.badObject {
				excluded = append(excluded, k)
			}
			slices.Sort(excluded)
			if !slices.Equal(excluded, want) {
				t.Fatalf("excluded %v, want %v", excluded, want)
			}
			if app.tests > tc.maxTests {
				t.Errorf("%d nginx tests, want at most %d", app.tests, tc.maxTests)
			}
			if app.live == nil || !c.Ready() {
				t.Fatal("the rest must be live and the controller ready")
			}
			for _, w := range want {
				if !strings.Contains(logs.String(), w) {
					t.Errorf("log does not name %s", w)
				}
			}
		})
	}
}

// When nginx refuses even without any changed Ingress, nothing is
// excluded and the controller is not ready.
func TestBisectBlamesNobodyWhenTheBaseIsRefused(t *testing.T) {
	snap := &source.Snapshot{Ingresses: []*networkingv1.Ingress{hostIngress("a", "a.test", 1)}}
	app := &pickyApplier{poison: []string{"server_names_hash"}} // every nginx.conf has it
	c := New(Options{Source: &staticSource{snap: snap}, Applier: app, Metrics: metrics.New(), Log: slog.New(slog.DiscardHandler),
		Model:  build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway", WatchWithoutClass: true}},
		Render: render.Params{StateDir: layout.Dir("/var/lib/causeway"), HTTPPort: 80, HTTPSPort: 443}})
	if err := c.Sync(context.Background(), time.Now()); err == nil {
		t.Fatal("sync must fail")
	}
	if len(c.badObject) != 0 {
		t.Fatalf("excluded %v", c.badObject)
	}
	if c.Ready() {
		t.Fatal("ready with no live configuration")
	}
}

// A ConfigMap value nginx refuses (a cipher name OpenSSL does not know)
// names no file and no Ingress: the ConfigMap is left out, its defaults
// serve, and the Ingresses go live; a changed ConfigMap is tried again.
func TestRefusedConfigMapFallsBackToDefaults(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config", UID: "uid-cm"},
		Data: map[string]string{"ssl-ciphers": "NOSUCHCIPHER"}}
	snap := &source.Snapshot{Ingresses: []*networkingv1.Ingress{hostIngress("a", "a.test", 1)}, ConfigMaps: []*corev1.ConfigMap{cm}}
	app := &pickyApplier{poison: []string{"NOSUCHCIPHER"}}
	var logs strings.Builder
	src := &staticSource{snap: snap}
	c := New(Options{Source: src, Applier: app, Metrics: metrics.New(), Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Model: build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway",
			WatchWithoutClass: true}, ConfigMap: "causeway/config"},
		Render: render.Params{StateDir: layout.Dir("/var/lib/causeway"), HTTPPort: 80, HTTPSPort: 443}})
	if err := c.Sync(context.Background(), time.Now()); err != nil {
		t.Fatalf("sync: %v\n%s", err, logs.String())
	}
	if _, ok := c.badObject["ConfigMap/causeway/config"]; !ok || !c.Ready() || app.live == nil {
		t.Fatalf("excluded %v, ready %v: want the ConfigMap left out and the rest live\n%s", c.badObject, c.Ready(), logs.String())
	}
	if !strings.Contains(logs.String(), "defaults are used") {
		t.Errorf("the log must say the ConfigMap's defaults are used:\n%s", logs.String())
	}
	cm.Data = map[string]string{"ssl-ciphers": "ECDHE-RSA-AES128-GCM-SHA256"}
	if err := c.Sync(context.Background(), time.Now()); err != nil {
		t.Fatalf("sync after the fix: %v", err)
	}
	if len(c.badObject) != 0 || !bytes.Contains(app.live["nginx.conf"], []byte("ECDHE-RSA-AES128-GCM-SHA256")) {
		t.Fatalf("a fixed ConfigMap must be used again: excluded %v", c.badObject)
	}
}

// A VirtualServer nginx refuses without naming a file is found the same
// way, among changed Ingresses.
func TestBisectFindsAVirtualServer(t *testing.T) {
	snap := &source.Snapshot{IngressClasses: []*networkingv1.IngressClass{{
		ObjectMeta: metav1.ObjectMeta{Name: "causeway"}, Spec: networkingv1.IngressClassSpec{Controller: "causeway.io/ingress-controller"}}}}
	for i := range 20 {
		snap.Ingresses = append(snap.Ingresses, hostIngress(fmt.Sprintf("i%04d", i), fmt.Sprintf("h%04d.test", i), i))
	}
	snap.VirtualServers = []*nicv1.VirtualServer{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cafe", UID: "uid-cafe", CreationTimestamp: metav1.NewTime(time.Unix(5, 0))},
		Spec: nicv1.VirtualServerSpec{Host: "cafe.test", IngressClass: "causeway",
			Upstreams: []nicv1.Upstream{{Name: "web", Service: "web", Port: 80}},
			Routes:    []nicv1.Route{{Path: "/", Action: &nicv1.Action{Pass: "web"}}}},
	}}
	app := &pickyApplier{poison: []string{`"cafe.test"`}}
	var logs strings.Builder
	c := New(Options{
		Source: &staticSource{snap: snap}, Applier: app, Metrics: metrics.New(),
		Log:    slog.New(slog.NewTextHandler(&logs, nil)),
		Model:  build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"}},
		Render: render.Params{StateDir: layout.Dir("/var/lib/causeway"), HTTPPort: 80, HTTPSPort: 443},
	})
	if err := c.Sync(context.Background(), time.Now()); err != nil {
		t.Fatalf("sync: %v\n%s", err, logs.String())
	}
	if _, ok := c.badObject["VirtualServer/ns/cafe"]; !ok || len(c.badObject) != 1 {
		t.Fatalf("excluded %v, want the VirtualServer only\n%s", c.badObject, logs.String())
	}
	if app.live == nil || !c.Ready() {
		t.Fatal("the rest must be live and the controller ready")
	}
}

// TestChangedObjects: bisection suspects what is new or changed since the
// last live snapshot, told from what the controller marked of it (not
// the snapshot, which would keep every old object alive), a row per rule.
func TestChangedObjects(t *testing.T) {
	ing := func(name, uid string, gen int64, ann map[string]string, host string) *networkingv1.Ingress {
		return &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid), Generation: gen, Annotations: ann},
			Spec:       networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: host}}},
		}
	}
	ann := map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/"}
	vs := func(uid string, gen int64, host string) *nicv1.VirtualServer {
		return &nicv1.VirtualServer{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vs", UID: types.UID(uid), Generation: gen},
			Spec: nicv1.VirtualServerSpec{Host: host}}
	}
	base := ing("a", "u1", 3, ann, "a.test")
	files := ing("f", "", 0, nil, "f.test") // the files source's: no UID, no generation
	before := &source.Snapshot{Ingresses: []*networkingv1.Ingress{base, files}, VirtualServers: []*nicv1.VirtualServer{vs("v1", 2, "v.test")}}
	cases := []struct {
		name string
		now  *source.Snapshot
		bad  string
		want []string
	}{
		{"nothing changed", before, "", nil},
		{"a status write: a new object, same generation, equal annotations in another map",
			&source.Snapshot{Ingresses: []*networkingv1.Ingress{ing("a", "u1", 3, maps.Clone(ann), "a.test"), files}}, "", nil},
		{"a new generation", &source.Snapshot{Ingresses: []*networkingv1.Ingress{ing("a", "u1", 4, ann, "b.test")}}, "", []string{"Ingress/ns/a"}},
		{"changed annotations", &source.Snapshot{Ingresses: []*networkingv1.Ingress{ing("a", "u1", 3, map[string]string{"x": "y"}, "a.test")}},
			"", []string{"Ingress/ns/a"}},
		{"deleted and created again", &source.Snapshot{Ingresses: []*networkingv1.Ingress{ing("a", "u2", 1, ann, "a.test")}}, "", []string{"Ingress/ns/a"}},
		{"new", &source.Snapshot{Ingresses: []*networkingv1.Ingress{base, ing("n", "u9", 1, nil, "n.test")}}, "", []string{"Ingress/ns/n"}},
		{"without a generation, read again unchanged", &source.Snapshot{Ingresses: []*networkingv1.Ingress{ing("f", "", 0, nil, "f.test")}}, "", nil},
		{"without a generation, changed", &source.Snapshot{Ingresses: []*networkingv1.Ingress{ing("f", "", 0, nil, "g.test")}}, "", []string{"Ingress/ns/f"}},
		{"a VirtualServer's new generation", &source.Snapshot{VirtualServers: []*nicv1.VirtualServer{vs("v1", 3, "w.test")}}, "", []string{"VirtualServer/ns/vs"}},
		{"an excluded object is no suspect", &source.Snapshot{Ingresses: []*networkingv1.Ingress{ing("n", "u9", 1, nil, "n.test")}}, "Ingress/ns/n", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Controller{badObject: map[string]exclusion{}, lastLive: markLive(before)}
			if tc.bad != "" {
				c.badObject[tc.bad] = exclusion{}
			}
			if got := c.changedObjects(tc.now); !slices.Equal(got, tc.want) {
				t.Errorf("changed = %v, want %v", got, tc.want)
			}
		})
	}
	c := &Controller{}
	if got := c.changedObjects(before); !slices.Equal(got, []string{"Ingress/ns/a", "Ingress/ns/f", "VirtualServer/ns/vs"}) {
		t.Errorf("before any live snapshot: %v, want every object", got)
	}
}
