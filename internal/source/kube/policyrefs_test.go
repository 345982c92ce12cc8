package kube

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/source"
)

var policyGVR = nicv1.SchemeGroupVersion.WithResource("policies")

// unstructuredBasicAuth is a basicAuth Policy as the API server would send
// it.
func unstructuredBasicAuth(ns, name, secret string, generation int64) *unstructured.Unstructured {
	p := &nicv1.Policy{TypeMeta: metav1.TypeMeta{APIVersion: nicv1.SchemeGroupVersion.String(), Kind: "Policy"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: generation},
		Spec:       nicv1.PolicySpec{BasicAuth: &nicv1.BasicAuth{Secret: secret}}}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// TestPolicySecretsWatched: the Secrets Policies name, of types the TLS
// informer never lists (here nginx.org/htpasswd), are in the first
// snapshot, follow the Policy and leave with it; one of another namespace
// is never read.
func TestPolicySecretsWatched(t *testing.T) {
	api := newFakeAPI(t,
		secret("web", "users", "nginx.org/htpasswd", "htpasswd"),
		secret("web", "others", "nginx.org/htpasswd", "htpasswd"),
		secret("shop", "theirs", "nginx.org/htpasswd", "htpasswd"),
	)
	advertise(api, allCustomResources()...)
	dyn := newFakeDynamic(unstructuredBasicAuth("web", "auth", "users", 1), unstructuredBasicAuth("web", "foreign", "shop/theirs", 1))
	s, _ := startSource(t, api, Options{CustomResources: true, Dynamic: dyn})
	if sec := findSecret(s.Snapshot(), "web", "users"); sec == nil || sec.Data["htpasswd"] == nil {
		t.Fatalf("the first snapshot lacks the Secret the Policy names, or trimmed it: %v", sec)
	}
	if sec := findSecret(s.Snapshot(), "shop", "theirs"); sec != nil {
		t.Fatal("a Secret of another namespace was read for a Policy")
	}

	ctx := context.Background()
	dyn.waitWatch(t, "policies", "")
	api.waitWatch(t, "secrets", "web", "metadata.name=users")
	drain(s)
	if _, err := dyn.Resource(policyGVR).Namespace("web").Update(ctx, unstructuredBasicAuth("web", "auth", "others", 2), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the Secret the Policy names now", func(snap *source.Snapshot) bool {
		return findSecret(snap, "web", "others") != nil && findSecret(snap, "web", "users") == nil
	})
	if err := dyn.Resource(policyGVR).Namespace("web").Delete(ctx, "auth", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the Secret gone with the Policy", func(snap *source.Snapshot) bool {
		return findSecret(snap, "web", "others") == nil
	})
	eventually(t, "no informer left", func() bool {
		s.refs.mu.Lock()
		defer s.refs.mu.Unlock()
		return len(s.refs.active) == 0
	})
}

// TestPolicySecretsDroppedWithTheCRD: when the Policy CRD goes, so do the
// Secrets its Policies named.
func TestPolicySecretsDroppedWithTheCRD(t *testing.T) {
	api := newFakeAPI(t, secret("web", "users", "nginx.org/htpasswd", "htpasswd"))
	d := &switchableDiscovery{FakeDiscovery: api.Discovery().(*fakediscovery.FakeDiscovery)}
	d.set("policies")
	dyn := newFakeDynamic(unstructuredBasicAuth("web", "auth", "users", 1))
	s, _ := startSource(t, api, Options{Client: discoveryAPI{api, d}, Namespaces: []string{"web"}, CustomResources: true, Dynamic: dyn,
		RediscoverEvery: 20 * time.Millisecond})
	eventually(t, "the first sync", s.HasSynced)
	if findSecret(s.Snapshot(), "web", "users") == nil {
		t.Fatal("the first snapshot lacks the Secret the Policy names")
	}
	d.set()
	waitSignal(t, s, "the Secret gone with the CRD", func(snap *source.Snapshot) bool {
		return len(snap.Policies) == 0 && findSecret(snap, "web", "users") == nil
	})
}
