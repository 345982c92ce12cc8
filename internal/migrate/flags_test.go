package migrate

import (
	"context"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func podSpec(containers ...corev1.Container) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: containers}}
}

func deployment(ns, name string, containers ...corev1.Container) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.DeploymentSpec{Template: podSpec(containers...)}}
}

// TestControllersIn: a container is ingress-nginx's controller when it
// runs its binary or its image.
func TestControllersIn(t *testing.T) {
	objs := []runtime.Object{
		deployment("ingress-nginx", "by-args", corev1.Container{Name: "controller", Image: "example.com/mirror/nginx:1",
			Args: []string{"/nginx-ingress-controller", "--election-id=x"}}),
		deployment("", "by-image", corev1.Container{Name: "c", Image: "registry.k8s.io/ingress-nginx/controller:v1.15.1@sha256:abc",
			Args: []string{"--v=2"}}),
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "by-command"}, Spec: appsv1.DaemonSetSpec{Template: podSpec(
			corev1.Container{Name: "sidecar", Image: "busybox"},
			corev1.Container{Name: "controller", Image: "mine", Command: []string{"/usr/bin/nginx-ingress-controller"}, Args: []string{"--profiling=false"}})}},
		deployment("web", "app", corev1.Container{Name: "app", Image: "nginx:1.27", Args: []string{"--election-id=x"}}),
		deployment("web", "port", corev1.Container{Name: "app", Image: "example.com:5000/ingress-nginx/controller"}),
	}
	want := []Controller{
		{Kind: "Deployment", Namespace: "ingress-nginx", Name: "by-args", Container: "controller", Args: []string{"/nginx-ingress-controller", "--election-id=x"}},
		{Kind: "Deployment", Namespace: "default", Name: "by-image", Container: "c", Args: []string{"--v=2"}},
		{Kind: "DaemonSet", Namespace: "edge", Name: "by-command", Container: "controller", Args: []string{"/usr/bin/nginx-ingress-controller", "--profiling=false"}},
		{Kind: "Deployment", Namespace: "web", Name: "port", Container: "app", Args: []string{}},
	}
	got := ControllersIn(objs)
	for i := range got {
		if got[i].Args == nil {
			got[i].Args = []string{}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("controllers:\n got %+v\nwant %+v", got, want)
	}
}

// TestCheckControllerFlags: each flag's verdict, from the flag table.
func TestCheckControllerFlags(t *testing.T) {
	r := checkController(Controller{Kind: "Deployment", Namespace: "ns", Name: "c", Container: "controller", Args: []string{
		"/nginx-ingress-controller", "--election-id=x", "--ingress-class-by-name", "--enable-topology-aware-routing",
		"--enable-topology-aware-routing=false", "--status-port", "10246", "--publish-servce=a/b"}})
	want := []Entry{
		{Key: "--election-id", Value: "x", Verdict: Supported, Causeway: "--leader-election-id"},
		{Key: "--ingress-class-by-name", Value: "true", Verdict: SupportedWithDifference, Causeway: "--ingress-class-by-name"},
		{Key: "--enable-topology-aware-routing", Value: "true", Verdict: Unsupported},
		{Key: "--enable-topology-aware-routing", Value: "false", Verdict: NotApplicable},
		{Key: "--status-port", Value: "10246", Verdict: NotApplicable},
		{Key: "--publish-servce", Value: "a/b", Verdict: Unknown, Suggestion: "--publish-service"},
	}
	if len(r.Flags) != len(want) {
		t.Fatalf("flags %+v", r.Flags)
	}
	for i, w := range want {
		g := r.Flags[i]
		if g.Key != w.Key || g.Value != w.Value || g.Verdict != w.Verdict || g.Causeway != w.Causeway || g.Suggestion != w.Suggestion ||
			(g.Verdict == SupportedWithDifference) != (g.Difference != "") || (g.Verdict == Unsupported || g.Verdict == NotApplicable) != (g.Instead != "") {
			t.Errorf("flag %d: %+v, want %+v", i, g, w)
		}
	}
	report := Check(Objects{Controllers: []Controller{{Kind: "Deployment", Namespace: "ns", Name: "c", Args: []string{"--election-id=x"}}}}, Options{})
	if report.Summary.Flags[Supported] != 1 || !strings.Contains(strings.Join(report.Notes, "\n"), "no Ingresses found") {
		t.Errorf("summary %+v, notes %v", report.Summary, report.Notes)
	}
}

// TestControllerNotes: what the controller reads that the check did not
// is pointed out.
func TestControllerNotes(t *testing.T) {
	objs := Objects{Controllers: []Controller{{Kind: "Deployment", Namespace: "ingress-nginx", Name: "c",
		Args: []string{"--annotations-prefix=acme.io", "--configmap=$(POD_NAMESPACE)/nginx-config"}}}}
	got := strings.Join(Check(objs, Options{}).Notes, "\n")
	for _, want := range []string{
		"Deployment ingress-nginx/c runs with --annotations-prefix=acme.io: check again with --annotations-prefix acme.io",
		"Deployment ingress-nginx/c reads the ConfigMap ingress-nginx/nginx-config (--configmap): check it with --configmap ingress-nginx/nginx-config",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("notes lack %q:\n%s", want, got)
		}
	}
	if got := Check(objs, Options{AnnotationsPrefix: "acme.io", ConfigMapNamespace: "ingress-nginx", ConfigMapName: "nginx-config"}).Notes; len(got) != 1 {
		t.Errorf("notes %v, want only that no Ingress was found", got)
	}
}

// TestFromClusterControllers: the cluster's Deployments are read for
// controllers; when they may not be listed, the report says so and the
// rest is still checked.
func TestFromClusterControllers(t *testing.T) {
	client := fake.NewSimpleClientset(deployment("ingress-nginx", "ingress-nginx-controller",
		corev1.Container{Name: "controller", Args: []string{"/nginx-ingress-controller", "--election-id=x"}}))
	objs, err := FromCluster(context.Background(), client, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.Controllers) != 1 || objs.Controllers[0].Name != "ingress-nginx-controller" {
		t.Fatalf("controllers %+v", objs.Controllers)
	}
	client.PrependReactor("list", "daemonsets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "daemonsets"}, "", nil)
	})
	objs, err = FromCluster(context.Background(), client, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := Check(objs, Options{}); len(r.Controllers) != 0 || !strings.Contains(strings.Join(r.Notes, "\n"), "the controllers' flags are not checked: list DaemonSets:") {
		t.Errorf("controllers %+v, notes %v", r.Controllers, r.Notes)
	}
}
