package kube

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func namespace(name string, lbls map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
}

// snapshotIngresses are the "namespace/name" of a snapshot's Ingresses.
func snapshotIngresses(s *Source) []string {
	var out []string
	for _, ing := range s.Snapshot().Ingresses {
		out = append(out, ing.Namespace+"/"+ing.Name)
	}
	slices.Sort(out)
	return out
}

// TestNamespaceSelector: with --watch-namespace-selector only the
// Ingresses of the namespaces whose labels match are served, and a
// namespace gaining or losing the label brings its Ingresses in or out.
func TestNamespaceSelector(t *testing.T) {
	api := newFakeAPI(t,
		namespace("shop", map[string]string{"team": "web"}),
		namespace("batch", nil),
		ingress("shop", "front", nil),
		ingress("batch", "jobs", nil),
	)
	sel, err := labels.Parse("team=web")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := startSource(t, api, Options{NamespaceSelector: sel})
	if got := snapshotIngresses(s); !slices.Equal(got, []string{"shop/front"}) {
		t.Fatalf("Ingresses %v, want only shop/front", got)
	}
	if !s.Watches("shop") || s.Watches("batch") || s.Watches("nowhere") {
		t.Errorf("Watches shop %v, batch %v, nowhere %v; want only shop", s.Watches("shop"), s.Watches("batch"), s.Watches("nowhere"))
	}
	if _, err := api.CoreV1().Namespaces().Update(t.Context(), namespace("batch", map[string]string{"team": "web"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "batch's Ingress served once labelled", func() bool {
		return slices.Equal(snapshotIngresses(s), []string{"batch/jobs", "shop/front"})
	})
	if _, err := api.CoreV1().Namespaces().Update(t.Context(), namespace("shop", nil), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "shop's Ingress left out once unlabelled", func() bool {
		return slices.Equal(snapshotIngresses(s), []string{"batch/jobs"})
	})
	if s.Watches("shop") || !s.Watches("batch") {
		t.Errorf("Watches shop %v, batch %v after the labels moved; want only batch", s.Watches("shop"), s.Watches("batch"))
	}
}

// TestWatchesNamespaceList: with --watch-namespace the namespaces listed
// are served, and without either flag every namespace is.
func TestWatchesNamespaceList(t *testing.T) {
	api := newFakeAPI(t)
	listed, _ := startSource(t, api, Options{Namespaces: []string{"shop", "web"}})
	all, _ := startSource(t, api, Options{})
	for ns, want := range map[string]bool{"shop": true, "web": true, "batch": false, "": false} {
		if got := listed.Watches(ns); got != want {
			t.Errorf("--watch-namespace shop,web: Watches(%q) %v, want %v", ns, got, want)
		}
		if !all.Watches(ns) {
			t.Errorf("no scope: Watches(%q) false, want every namespace", ns)
		}
	}
}

// TestNoNamespaceSelector: without a selector no namespace is read.
func TestNoNamespaceSelector(t *testing.T) {
	api := newFakeAPI(t, ingress("batch", "jobs", nil))
	s, _ := startSource(t, api, Options{NamespaceSelector: labels.Everything()})
	if got := snapshotIngresses(s); !slices.Equal(got, []string{"batch/jobs"}) {
		t.Errorf("Ingresses %v", got)
	}
	for _, a := range api.Actions() {
		if a.GetResource().Resource == "namespaces" {
			t.Errorf("namespaces read without a selector: %v", a)
		}
	}
}
