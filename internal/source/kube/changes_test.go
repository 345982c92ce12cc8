package kube

import (
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/causeway/causeway/internal/source"
)

// TakeChanges tells a change of Ingresses (added, changed, deleted) and
// of Services from one of anything else, each by key; a status-only
// update of an Ingress is no change, and an EndpointSlice's is neither
// (TakeEndpointChanges).
func TestChangesTellIngressesApart(t *testing.T) {
	client := fake.NewSimpleClientset()
	s, ctx := runSynced(t, client)
	<-s.Changed()
	if ch := s.TakeChanges(); !ch.Other {
		t.Error("the first listing is not a change of something else")
	}

	// want waits for the changes until they are ingresses, services
	// and other.
	want := func(other bool, ingresses, services []string) {
		t.Helper()
		w := source.Changes{Ingresses: map[string]bool{}, Services: map[string]bool{}, Other: other}
		for _, k := range ingresses {
			w.Ingresses[k] = true
		}
		for _, k := range services {
			w.Services[k] = true
		}
		got := source.Changes{Ingresses: map[string]bool{}, Services: map[string]bool{}}
		same := func() bool {
			return maps.Equal(got.Ingresses, w.Ingresses) && maps.Equal(got.Services, w.Services) && got.Other == w.Other
		}
		deadline := time.Now().Add(10 * time.Second)
		for !same() && time.Now().Before(deadline) {
			select {
			case <-s.Changed():
				ch := s.TakeChanges()
				maps.Copy(got.Ingresses, ch.Ingresses)
				maps.Copy(got.Services, ch.Services)
				got.Other = got.Other || ch.Other
			case <-time.After(50 * time.Millisecond):
			}
		}
		if !same() {
			t.Fatalf("changes: %+v; want %+v", got, w)
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
	want(false, []string{"shop/web", "shop/api"}, nil)

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
				if ch := s.TakeChanges(); len(ch.Ingresses)+len(ch.Services) > 0 || ch.Other {
					t.Fatalf("after %s: changes %+v", after, ch)
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
	want(false, []string{"shop/web"}, nil)

	if err := ings.Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	svcs := client.CoreV1().Services("shop")
	svc, err := svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want(false, []string{"shop/api"}, []string{"shop/api"})
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.2"}}
	if _, err := svcs.UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want(false, nil, []string{"shop/api"}) // a Service is read whole
	if err := svcs.Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want(false, nil, []string{"shop/api"})
	if _, err := client.CoreV1().Secrets("shop").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "tls"},
		Type: corev1.SecretTypeTLS}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want(true, nil, nil)
	createSlice(t, client, sliceOf("api-1", "api"))
	quiet("an EndpointSlice change")
}
