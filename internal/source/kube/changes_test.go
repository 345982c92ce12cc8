package kube

import (
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TakeChanges tells a change of Ingresses alone (added, changed, deleted)
// from one of anything else; a status-only update of an Ingress is no
// change, and an EndpointSlice's is neither (TakeEndpointChanges).
func TestChangesTellIngressesApart(t *testing.T) {
	client := fake.NewSimpleClientset()
	s, ctx := runSynced(t, client)
	<-s.Changed()
	if _, other := s.TakeChanges(); !other {
		t.Error("the first listing is not a change of something else")
	}

	// want waits for the changes until they are ingresses and other.
	want := func(other bool, ingresses ...string) {
		t.Helper()
		w := map[string]bool{}
		for _, k := range ingresses {
			w[k] = true
		}
		got, gotOther := map[string]bool{}, false
		deadline := time.Now().Add(10 * time.Second)
		for (!maps.Equal(got, w) || gotOther != other) && time.Now().Before(deadline) {
			select {
			case <-s.Changed():
				ing, o := s.TakeChanges()
				maps.Copy(got, ing)
				gotOther = gotOther || o
			case <-time.After(50 * time.Millisecond):
			}
		}
		if !maps.Equal(got, w) || gotOther != other {
			t.Fatalf("changes: Ingresses %v, other %v; want %v, %v", got, gotOther, w, other)
		}
	}
	ings := client.NetworkingV1().Ingresses("shop")
	ing, err := ings.Create(ctx, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 1},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "web.example.com"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ings.Create(ctx, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want(false, "shop/web", "shop/api")

	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}}
	if ing, err = ings.UpdateStatus(ctx, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// quiet fails on any change within 200 ms (a signal may be left
	// over from changes taken already).
	quiet := func(after string) {
		t.Helper()
		for timeout := time.After(200 * time.Millisecond); ; {
			select {
			case <-s.Changed():
				if ing, other := s.TakeChanges(); len(ing) > 0 || other {
					t.Fatalf("after %s: changes %v, other %v", after, ing, other)
				}
			case <-timeout:
				return
			}
		}
	}
	quiet("a status-only update")
	ing.Spec.Rules[0].Host = "www.example.com"
	ing.Generation++ // as the API server does (the fake does not)
	if _, err := ings.Update(ctx, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want(false, "shop/web")

	if err := ings.Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Services("shop").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want(true, "shop/api")
	createSlice(t, client, sliceOf("api-1", "api"))
	quiet("an EndpointSlice change")
}
