package kube

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		t.Fatal("only Ingresses can be status-only")
	}
}
