package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/source"
)

// crowd is a snapshot with hosts Ingresses of one shape each, plus perHost
// Ingresses that all add a path to one more host.
func crowd(hosts, perHost int) *source.Snapshot {
	class := "causeway"
	snap := &source.Snapshot{IngressClasses: []*networkingv1.IngressClass{{
		ObjectMeta: metav1.ObjectMeta{Name: class},
		Spec:       networkingv1.IngressClassSpec{Controller: goldenOpts.Class.ControllerName},
	}}}
	prefix := networkingv1.PathTypePrefix
	add := func(name, host, path string) {
		ns := "team-with-a-rather-long-namespace-name"
		snap.Services = append(snap.Services, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		})
		snap.Ingresses = append(snap.Ingresses, &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
			Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: path, PathType: &prefix,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}}},
				}}}},
			}}},
		})
	}
	for i := range hosts {
		add(fmt.Sprintf("app-%05d", i), fmt.Sprintf("app-%05d.a-long-cluster-domain.example.com", i), "/")
	}
	for i := range perHost {
		add(fmt.Sprintf("part-%05d", i), "crowded.example.com", fmt.Sprintf("/part-%05d", i))
	}
	return snap
}

// TestLinesFitNginxBuffer: nginx reads its configuration through a 4 KiB
// buffer and refuses any token longer than that, comments included. No
// rendered line may come near it, however many hosts share a server or
// Ingresses share a host.
func TestLinesFitNginxBuffer(t *testing.T) {
	m, problems := build.Build(crowd(2000, 300), goldenOpts)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	for _, lua := range []bool{false, true} {
		p := goldenParams
		if lua {
			p.Dynamic = &Dynamic{Modules: []string{"/ndk.so", "/lua.so"}}
		}
		out, err := Render(m, p)
		if err != nil {
			t.Fatal(err)
		}
		files := out.Files
		for name, data := range files {
			for i, line := range bytes.Split(data, []byte("\n")) {
				if len(line) > 1024 {
					t.Fatalf("lua=%v %s:%d is %d bytes long: %.80s...", lua, name, i+1, len(line), line)
				}
			}
		}
	}
}

// TestSharedServers: in dynamic mode, hosts of one shape go to one file
// whose host maps send each host to its own backend; in plain mode every
// host keeps its own file.
func TestSharedServers(t *testing.T) {
	m, _ := build.Build(crowd(50, 0), goldenOpts)
	for _, tc := range []struct {
		name        string
		dynamic     *Dynamic
		wantServers int
	}{
		{"plain", nil, 51},
		// The catch-all, the merged maps and the shared server.
		{"dynamic", &Dynamic{Modules: []string{"/ndk.so", "/lua.so"}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := goldenParams
			p.Dynamic = tc.dynamic
			out, err := Render(m, p)
			if err != nil {
				t.Fatal(err)
			}
			files := out.Files
			var servers []string
			for _, n := range files.Names() {
				if strings.HasPrefix(n, "servers/") {
					servers = append(servers, n)
				}
			}
			if len(servers) != tc.wantServers {
				t.Fatalf("%d server files, want %d: %v", len(servers), tc.wantServers, servers)
			}
			if tc.dynamic == nil {
				return
			}
			shared := servers[2] // after servers/_default.conf and _maps.conf
			if srcs := out.Sources[shared]; len(srcs) != 50 || srcs[7].Name != "app-00007" {
				t.Fatalf("Sources[%s] = %d objects, %v...", shared, len(srcs), srcs[:min(3, len(srcs))])
			}
			want := `"app-00007.a-long-cluster-domain.example.com" "team-with-a-rather-long-namespace-name/app-00007/80";`
			if !bytes.Contains(files[layout.MapsFile], []byte(want)) {
				t.Fatalf("%s has no map entry %s", layout.MapsFile, want)
			}
			if bytes.Contains(files[shared], []byte("map $host")) {
				t.Fatalf("%s has maps of its own:\n%s", shared, files[shared])
			}
			if got, ok := out.Sources[layout.MapsFile]; ok {
				t.Fatalf("Sources of the merged maps = %v, want none (a refusal there is bisected)", got)
			}
			if got := out.Sources["servers/_default.conf"]; got != nil {
				t.Fatalf("Sources of the default server = %v, want none", got)
			}
		})
	}
}
