package replicas

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

func endpoint(addr string, ready *bool, pod string) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
	if pod != "" {
		e.TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: pod, UID: types.UID("uid-" + pod)}
	}
	return e
}

func slice(name, service string, family discoveryv1.AddressType, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: name,
		Labels: map[string]string{discoveryv1.LabelServiceName: service}}, AddressType: family, Endpoints: eps}
}

// TestReady: a ready (or unconditioned) endpoint counts once, across the
// slices of both address families; one not ready does not.
func TestReady(t *testing.T) {
	for _, tc := range []struct {
		name   string
		slices []any
		want   int
	}{
		{"none", nil, 0},
		{"two ready", []any{slice("a", "s", discoveryv1.AddressTypeIPv4, endpoint("10.0.0.1", ptr.To(true), "p1"),
			endpoint("10.0.0.2", nil, "p2"))}, 2},
		{"one not ready", []any{slice("a", "s", discoveryv1.AddressTypeIPv4, endpoint("10.0.0.1", ptr.To(true), "p1"),
			endpoint("10.0.0.2", ptr.To(false), "p2"))}, 1},
		{"dual-stack counts each Pod once", []any{
			slice("a", "s", discoveryv1.AddressTypeIPv4, endpoint("10.0.0.1", ptr.To(true), "p1"), endpoint("10.0.0.2", ptr.To(true), "p2")),
			slice("b", "s", discoveryv1.AddressTypeIPv6, endpoint("fd00::1", ptr.To(true), "p1"), endpoint("fd00::2", ptr.To(true), "p2"))}, 2},
		{"without target, by address", []any{slice("a", "s", discoveryv1.AddressTypeIPv4, endpoint("10.0.0.1", nil, ""),
			endpoint("10.0.0.1", nil, ""), endpoint("10.0.0.3", nil, ""))}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Ready(tc.slices); got != tc.want {
				t.Fatalf("%d, want %d", got, tc.want)
			}
		})
	}
}

// TestCounter: the count follows the Service's slices (and only its),
// and a change is signalled.
func TestCounter(t *testing.T) {
	client := fake.NewClientset(
		slice("edge-1", "edge", discoveryv1.AddressTypeIPv4, endpoint("10.0.0.1", ptr.To(true), "p1"), endpoint("10.0.0.2", ptr.To(true), "p2")),
		slice("other-1", "other", discoveryv1.AddressTypeIPv4, endpoint("10.0.0.9", ptr.To(true), "p9")))
	// The fake client drops what happens between its list and its watch:
	// create nothing before the watch is there.
	watching := make(chan struct{})
	var once sync.Once
	client.PrependWatchReactor("endpointslices", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := client.Tracker().Watch(a.GetResource(), a.GetNamespace())
		once.Do(func() { close(watching) })
		return true, w, err
	})
	c, err := New(client, "ingress", "edge", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)
	wait := func(want int) {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for c.Count() != want {
			select {
			case <-c.Changed():
			case <-time.After(10 * time.Millisecond):
			case <-deadline:
				t.Fatalf("count %d, want %d", c.Count(), want)
			}
		}
	}
	wait(2)
	<-watching
	select {
	case <-c.Changed(): // the first count's
	default:
	}
	if _, err := client.DiscoveryV1().EndpointSlices("ingress").Create(ctx, slice("edge-2", "edge", discoveryv1.AddressTypeIPv4,
		endpoint("10.0.0.3", ptr.To(true), "p3")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Changed():
	case <-time.After(5 * time.Second):
		t.Fatal("no change signalled")
	}
	wait(3)
	if err := client.DiscoveryV1().EndpointSlices("ingress").Delete(ctx, "edge-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wait(1)
}
