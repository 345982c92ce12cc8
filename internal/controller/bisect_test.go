package controller

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
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
