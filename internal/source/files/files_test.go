package files

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/source"
)

const multi = `# a comment-only document
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: a}
  spec: {ports: [{port: 80}]}
- apiVersion: v1
  kind: Service
  metadata: {name: b, namespace: other}
  spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Secret
metadata: {name: s}
type: kubernetes.io/tls
stringData: {tls.crt: CRT, tls.key: KEY}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ignored}
---
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {version: v2}, annotations: {big: dropped}}
spec: {containers: [{name: app, image: app}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: i}
spec: {defaultBackend: {service: {name: a, port: {number: 80}}}}
`

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "nested", "deeper"), 0o755)
	os.WriteFile(filepath.Join(dir, "nested", "deeper", "m.yaml"), []byte(multi), 0o644)
	os.WriteFile(filepath.Join(dir, "broken.yml"), []byte("kind: [oops"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a manifest"), 0o644)
	os.MkdirAll(filepath.Join(dir, ".hidden"), 0o755)
	os.WriteFile(filepath.Join(dir, ".hidden", "x.yaml"), []byte(multi), 0o644)

	snap, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Services) != 2 || snap.Services[0].Namespace != "default" || snap.Services[1].Namespace != "other" {
		t.Fatalf("services %+v: want a List expanded with the default namespace applied", snap.Services)
	}
	if len(snap.Secrets) != 1 || string(snap.Secrets[0].Data["tls.crt"]) != "CRT" {
		t.Fatalf("secret stringData must merge into data: %+v", snap.Secrets)
	}
	if len(snap.Pods) != 1 || snap.Pods[0].Namespace != "default" || snap.Pods[0].Labels["version"] != "v2" ||
		snap.Pods[0].Annotations != nil || len(snap.Pods[0].Spec.Containers) != 0 {
		t.Fatalf("pods %+v: want the namespace, name and labels only", snap.Pods)
	}
	if len(snap.Ingresses) != 1 || snap.Ingresses[0].Namespace != "default" {
		t.Fatalf("ingresses %+v", snap.Ingresses)
	}
	// The broken file, and the Ingress without a creationTimestamp.
	if len(snap.Problems) != 2 || snap.Problems[0].Where != filepath.Join(dir, "broken.yml") {
		t.Fatalf("problems %+v: want broken.yml first", snap.Problems)
	}
}

// Ordering between Ingresses goes by creationTimestamp, which manifests
// rarely carry; the source says how those are ranked instead, once per
// Ingress.
func TestIngressWithoutTimestampIsAProblem(t *testing.T) {
	const manifests = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: stamped, namespace: web, creationTimestamp: "2026-01-02T03:04:05Z"}
spec: {defaultBackend: {service: {name: a, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: bare, namespace: web}
spec: {defaultBackend: {service: {name: a, port: {number: 80}}}}
---
apiVersion: v1
kind: Service
metadata: {name: a, namespace: web}
spec: {ports: [{port: 80}]}
`
	dir := t.TempDir()
	file := filepath.Join(dir, "m.yaml")
	os.WriteFile(file, []byte(manifests), 0o644)
	snap, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Ingresses) != 2 || len(snap.Problems) != 1 {
		t.Fatalf("problems %+v: want one, for the Ingress without a timestamp", snap.Problems)
	}
	p := snap.Problems[0]
	for _, want := range []string{"Ingress web/bare", "no metadata.creationTimestamp", "settled by namespace/name, the greater first"} {
		if p.Where != file || !strings.Contains(p.Message, want) {
			t.Fatalf("problem %+v: want it in %s, saying %q", p, file, want)
		}
	}
}

func TestRunPicksUpChanges(t *testing.T) {
	dir := t.TempDir()
	s := New(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	waitSignal(t, s)
	if !s.HasSynced() || len(s.Snapshot().Services) != 0 {
		t.Fatal("empty directory must sync with no objects")
	}
	// A new sub-directory and a file in it are both picked up.
	sub := filepath.Join(dir, "team")
	os.MkdirAll(sub, 0o755)
	waitSignal(t, s)
	os.WriteFile(filepath.Join(sub, "svc.yaml"), []byte(multi), 0o644)
	deadline := time.Now().Add(5 * time.Second)
	for len(s.Snapshot().Services) != 2 {
		if time.Now().After(deadline) {
			t.Fatal("change in a new sub-directory not picked up")
		}
		waitSignal(t, s)
	}
}

func waitSignal(t *testing.T, s *Source) {
	t.Helper()
	select {
	case <-s.Changed():
	case <-time.After(5 * time.Second):
		t.Fatal("no change signal")
	}
}

// NGINX Ingress Controller's kinds decode with the source's own scheme,
// land in their own snapshot fields, and get the default namespace like
// the built-in kinds.
func TestNICResources(t *testing.T) {
	const vs = `apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: vs}
spec: {host: shop.example.com}
`
	count := func(s *source.Snapshot) [5]int {
		return [5]int{len(s.VirtualServers), len(s.VirtualServerRoutes), len(s.Policies), len(s.TransportServers), len(s.GlobalConfigurations)}
	}
	namespaces := func(s *source.Snapshot) []string {
		var out []string
		for _, o := range s.VirtualServers {
			out = append(out, o.Namespace)
		}
		for _, o := range s.VirtualServerRoutes {
			out = append(out, o.Namespace)
		}
		for _, o := range s.Policies {
			out = append(out, o.Namespace)
		}
		for _, o := range s.TransportServers {
			out = append(out, o.Namespace)
		}
		for _, o := range s.GlobalConfigurations {
			out = append(out, o.Namespace)
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		manifest   string
		want       [5]int // VirtualServers, VirtualServerRoutes, Policies, TransportServers, GlobalConfigurations
		namespaces []string
		problem    string // in the one Problem expected, if any
	}{
		{name: "VirtualServer", manifest: vs, want: [5]int{1, 0, 0, 0, 0}, namespaces: []string{"default"}},
		{name: "VirtualServerRoute", manifest: `apiVersion: k8s.nginx.org/v1
kind: VirtualServerRoute
metadata: {name: vsr, namespace: team}
spec: {host: shop.example.com}
`, want: [5]int{0, 1, 0, 0, 0}, namespaces: []string{"team"}},
		{name: "Policy", manifest: `apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: allow}
spec: {accessControl: {allow: [10.0.0.0/8]}}
`, want: [5]int{0, 0, 1, 0, 0}, namespaces: []string{"default"}},
		{name: "TransportServer", manifest: `apiVersion: k8s.nginx.org/v1
kind: TransportServer
metadata: {name: ts}
spec: {listener: {name: dns-udp, protocol: UDP}}
`, want: [5]int{0, 0, 0, 1, 0}, namespaces: []string{"default"}},
		{name: "GlobalConfiguration", manifest: `apiVersion: k8s.nginx.org/v1
kind: GlobalConfiguration
metadata: {name: gc}
spec: {listeners: [{name: dns-udp, port: 5353, protocol: UDP}]}
`, want: [5]int{0, 0, 0, 0, 1}, namespaces: []string{"default"}},
		{name: "List", manifest: `apiVersion: v1
kind: List
items:
- apiVersion: k8s.nginx.org/v1
  kind: VirtualServer
  metadata: {name: a}
  spec: {host: a.example.com}
- apiVersion: k8s.nginx.org/v1
  kind: Policy
  metadata: {name: p, namespace: team}
  spec: {rateLimit: {rate: 10r/s, key: "${binary_remote_addr}", zoneSize: 10M}}
- apiVersion: k8s.nginx.org/v1
  kind: GlobalConfiguration
  metadata: {name: gc, namespace: causeway-system}
  spec: {}
`, want: [5]int{1, 0, 1, 0, 1}, namespaces: []string{"default", "team", "causeway-system"}},
		{name: "unknown version", manifest: `apiVersion: k8s.nginx.org/v1alpha1
kind: TransportServer
metadata: {name: old}
spec: {}
---
` + vs, want: [5]int{1, 0, 0, 0, 0}, namespaces: []string{"default"}, problem: "document 1"},
		{name: "unknown version in a List", manifest: `apiVersion: v1
kind: List
items:
- apiVersion: k8s.nginx.org/v1alpha1
  kind: GlobalConfiguration
  metadata: {name: old}
`, problem: "document 1 item 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "nic.yaml")
			if err := os.WriteFile(file, []byte(tc.manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			snap, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := count(snap); got != tc.want {
				t.Errorf("counts %v, want %v", got, tc.want)
			}
			if got := namespaces(snap); !slices.Equal(got, tc.namespaces) {
				t.Errorf("namespaces %q, want %q", got, tc.namespaces)
			}
			switch {
			case tc.problem == "" && len(snap.Problems) != 0:
				t.Errorf("problems %+v, want none", snap.Problems)
			case tc.problem != "" && (len(snap.Problems) != 1 || snap.Problems[0].Where != file ||
				!strings.Contains(snap.Problems[0].Message, tc.problem) || !strings.Contains(snap.Problems[0].Message, "v1alpha1")):
				t.Errorf("problems %+v, want one in %s naming %q and the version", snap.Problems, file, tc.problem)
			}
		})
	}
	// The decoded objects are whole, not just filed by kind.
	objs, _ := Parse([]byte(vs), "vs.yaml")
	if v, ok := objs[0].(*nicv1.VirtualServer); !ok || v.Spec.Host != "shop.example.com" {
		t.Fatalf("decoded %#v, want the VirtualServer's host", objs[0])
	}
}
