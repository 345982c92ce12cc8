package kube

import (
	"context"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// EndpointSlice changes are told apart by Service and signalled on their
// own channel, never as a change that takes a build; ServiceEndpoints
// reads a Service and its slices from the caches.
func TestEndpointChangesByService(t *testing.T) {
	client := fake.NewSimpleClientset()
	s, ctx := runSynced(t, client)
	<-s.Changed() // the signal of the first listing
	s.TakeEndpointChanges()

	slice := sliceOf
	want := func(keys ...string) {
		t.Helper()
		w := map[string]bool{}
		for _, k := range keys {
			w[k] = true
		}
		deadline := time.Now().Add(10 * time.Second)
		got := map[string]bool{}
		for !maps.Equal(got, w) && time.Now().Before(deadline) {
			select {
			case <-s.EndpointsChanged():
				maps.Copy(got, s.TakeEndpointChanges())
			case <-time.After(50 * time.Millisecond):
			}
		}
		if !maps.Equal(got, w) {
			t.Fatalf("changed Services %v, want %v", got, w)
		}
		select {
		case <-s.Changed():
			t.Fatal("an EndpointSlice change was signalled as a change that takes a build")
		default:
		}
	}
	es := createSlice(t, client, slice("web-1", "web"))
	want("shop/web")
	es.Labels[discoveryv1.LabelServiceName] = "web2" // moved: both Services
	if _, err := client.DiscoveryV1().EndpointSlices("shop").Update(ctx, es, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("shop/web", "shop/web2")
	createSlice(t, client, slice("orphan", "")) // no Service: nothing to do
	if err := client.DiscoveryV1().EndpointSlices("shop").Delete(ctx, "web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want("shop/web2")

	if _, err := client.CoreV1().Services("shop").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	<-s.Changed() // a Service change takes a build
	createSlice(t, client, slice("api-1", "api"))
	createSlice(t, client, slice("api-2", "api"))
	createSlice(t, client, slice("other-1", "other"))
	want("shop/api", "shop/other")
	svc, slices := s.ServiceEndpoints("shop", "api")
	if svc == nil || svc.Name != "api" || len(slices) != 2 {
		t.Fatalf("ServiceEndpoints: %v and %d slices, want Service api and its 2", svc, len(slices))
	}
	if svc, slices := s.ServiceEndpoints("shop", "none"); svc != nil || len(slices) != 0 {
		t.Fatalf("ServiceEndpoints of a missing Service: %v, %d slices", svc, len(slices))
	}
}

// runSynced runs a Source on client until the test ends, and waits
// until it has synced.
func runSynced(t *testing.T, client *fake.Clientset) (*Source, context.Context) {
	t.Helper()
	s, err := New(Options{Client: client})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	go s.Run(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for !s.HasSynced() {
		if time.Now().After(deadline) {
			t.Fatal("not synced")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s, ctx
}

// sliceOf is an empty EndpointSlice of Service svc in namespace shop.
func sliceOf(name, svc string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name,
		Labels: map[string]string{discoveryv1.LabelServiceName: svc}}, AddressType: discoveryv1.AddressTypeIPv4}
}

func createSlice(t *testing.T, client *fake.Clientset, es *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	t.Helper()
	out, err := client.DiscoveryV1().EndpointSlices(es.Namespace).Create(t.Context(), es, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
