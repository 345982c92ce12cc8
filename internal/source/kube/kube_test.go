package kube

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
)

func TestStatusOnly(t *testing.T) {
	base := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 3, ResourceVersion: "10",
		Annotations: map[string]string{"x": "1"}}}
	now := metav1.NewTime(time.Unix(1, 0))
	for _, tc := range []struct {
		name   string
		change func(*networkingv1.Ingress)
		want   bool
	}{
		{"status written", func(i *networkingv1.Ingress) {
			i.ResourceVersion = "11"
			i.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}}
		}, true},
		{"spec changed", func(i *networkingv1.Ingress) { i.Generation = 4 }, false},
		{"annotation changed", func(i *networkingv1.Ingress) { i.Annotations = map[string]string{"x": "2"} }, false},
		{"label changed", func(i *networkingv1.Ingress) { i.Labels = map[string]string{"y": "1"} }, false},
		{"being deleted", func(i *networkingv1.Ingress) { i.DeletionTimestamp = &now }, false},
		{"no generation (not from an API server)", func(i *networkingv1.Ingress) { i.Generation = 0 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := base.DeepCopy()
			tc.change(next)
			old := base.DeepCopy()
			if tc.name == "no generation (not from an API server)" {
				old.Generation = 0
			}
			if got := statusOnly(old, next); got != tc.want {
				t.Fatalf("statusOnly = %v, want %v", got, tc.want)
			}
		})
	}
	if statusOnly(&corev1.Service{}, &corev1.Service{}) {
		t.Fatal("Services are never status-only")
	}
	// NGINX Ingress Controller's kinds with a status subresource carry a
	// generation too; GlobalConfiguration has no status.
	meta := metav1.ObjectMeta{Name: "a", Generation: 2}
	if !statusOnly(&nicv1.VirtualServer{ObjectMeta: meta}, &nicv1.VirtualServer{ObjectMeta: meta, Status: nicv1.VirtualServerStatus{State: "Valid"}}) {
		t.Fatal("a VirtualServer status write must be status-only")
	}
	if !statusOnly(&nicv1.TransportServer{ObjectMeta: meta}, &nicv1.TransportServer{ObjectMeta: meta}) {
		t.Fatal("a TransportServer resync must be status-only")
	}
	if statusOnly(&nicv1.GlobalConfiguration{ObjectMeta: meta}, &nicv1.GlobalConfiguration{ObjectMeta: meta}) {
		t.Fatal("GlobalConfiguration has no status")
	}
	// So do Gateway API's, but ReferenceGrant, which has no status.
	for _, pair := range [][2]runtime.Object{
		{&gwv1.GatewayClass{ObjectMeta: meta}, &gwv1.GatewayClass{ObjectMeta: meta}},
		{&gwv1.Gateway{ObjectMeta: meta}, &gwv1.Gateway{ObjectMeta: meta, Status: gwv1.GatewayStatus{Addresses: []gwv1.GatewayStatusAddress{{Value: "192.0.2.1"}}}}},
		{&gwv1.ListenerSet{ObjectMeta: meta}, &gwv1.ListenerSet{ObjectMeta: meta, Status: gwv1.ListenerSetStatus{Listeners: []gwv1.ListenerEntryStatus{{Name: "http"}}}}},
		{&gwv1.HTTPRoute{ObjectMeta: meta}, &gwv1.HTTPRoute{ObjectMeta: meta}},
		{&gwv1.GRPCRoute{ObjectMeta: meta}, &gwv1.GRPCRoute{ObjectMeta: meta}},
		{&gwv1.TLSRoute{ObjectMeta: meta}, &gwv1.TLSRoute{ObjectMeta: meta}},
		{&gwv1.TCPRoute{ObjectMeta: meta}, &gwv1.TCPRoute{ObjectMeta: meta}},
		{&gwv1.UDPRoute{ObjectMeta: meta}, &gwv1.UDPRoute{ObjectMeta: meta}},
		{&gwv1.BackendTLSPolicy{ObjectMeta: meta}, &gwv1.BackendTLSPolicy{ObjectMeta: meta}},
	} {
		if !statusOnly(pair[0], pair[1]) {
			t.Fatalf("a %T status write must be status-only", pair[0])
		}
	}
	if statusOnly(&gwv1.ReferenceGrant{ObjectMeta: meta}, &gwv1.ReferenceGrant{ObjectMeta: meta}) {
		t.Fatal("ReferenceGrant has no status")
	}
	if statusOnly(&nicv1.Policy{ObjectMeta: meta}, &nicv1.VirtualServer{ObjectMeta: meta}) {
		t.Fatal("objects of different kinds are not one update")
	}
}

// TestPodsNamedByEndpoints: a Pod's events matter only when an endpoint
// of a cached EndpointSlice names it (watchPods).
func TestPodsNamedByEndpoints(t *testing.T) {
	f := informers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	slices := f.Discovery().V1().EndpointSlices().Informer()
	if err := slices.AddIndexers(cache.Indexers{podIndex: slicePods}); err != nil {
		t.Fatal(err)
	}
	es := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.0.0.1"}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-a"}},
			{Addresses: []string{"10.0.0.2"}, TargetRef: &corev1.ObjectReference{Kind: "Node", Name: "web-b"}},
			{Addresses: []string{"10.0.0.3"}},
		}}
	if err := slices.GetIndexer().Add(es); err != nil {
		t.Fatal(err)
	}
	s := &Source{slices: []cache.SharedIndexInformer{slices}}
	pod := func(ns, name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	for _, tc := range []struct {
		pod  *corev1.Pod
		want bool
	}{
		{pod("shop", "web-a"), true},
		{pod("shop", "web-b"), false}, // a Node, not a Pod
		{pod("other", "web-a"), false},
		{pod("shop", "job-x"), false},
	} {
		if got := s.named(tc.pod); got != tc.want {
			t.Errorf("%s/%s: named %v, want %v", tc.pod.Namespace, tc.pod.Name, got, tc.want)
		}
	}
}
