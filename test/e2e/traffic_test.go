package e2e

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTrafficFollowsIngress creates, updates and deletes an Ingress in the
// API and checks that nginx routes accordingly each time.
func TestTrafficFollowsIngress(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createService(t, ns, "svc-a", startBackend(t, "a"))
	createService(t, ns, "svc-b", startBackend(t, "b"))
	c := startController(t, controllerConfig{Namespace: ns})
	const host = "traffic.e2e.test"

	c.waitServed(host, "") // no Ingress yet: the default 404

	createIngress(t, newIngress(ns, "web", host, "svc-a"))
	c.waitServed(host, "a")

	updateIngress(t, ns, "web", func(ing *networkingv1.Ingress) {
		ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name = "svc-b"
	})
	c.waitServed(host, "b")

	if err := e2e.admin.NetworkingV1().Ingresses(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	c.waitServed(host, "")
}
