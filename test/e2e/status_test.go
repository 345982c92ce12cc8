package e2e

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestStatusPublishAddress publishes --publish-address values (IPs and a
// host name, repeated and comma-separated) on live Ingresses of ours,
// leaves rejected ones without, and clears an Ingress that stops being
// ours.
func TestStatusPublishAddress(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createService(t, ns, "app", startBackend(t, "app"))
	c := startController(t, controllerConfig{Namespace: ns, Args: []string{
		"--publish-address", "192.0.2.10,lb.e2e.test", "--publish-address", "2001:db8::10",
	}})
	c.WaitLeader(waitFor)
	want := []string{"192.0.2.10", "2001:db8::10", "lb.e2e.test"}

	createIngress(t, newIngress(ns, "web", "status.e2e.test", "app"))
	waitStatus(t, ns, "web", waitFor, want...)

	// Rejected as a whole (a path the model refuses): not live, no address.
	bad := newIngress(ns, "bad", "bad.e2e.test", "app")
	bad.Spec.Rules[0].HTTP.Paths[0].Path = "/a$b"
	bad.Spec.Rules[0].HTTP.Paths[0].PathType = ptr.To(networkingv1.PathTypeImplementationSpecific)
	createIngress(t, bad)
	waitEvent(t, ns, "bad", corev1.EventTypeWarning, "Rejected", "Invalid")
	if got := statusAddresses(getIngress(t, ns, "bad")); len(got) != 0 {
		t.Errorf("rejected Ingress has status %v, want none", got)
	}

	// Status is written only when it differs: syncs caused by unrelated
	// changes, and the echoes of our own writes, write nothing.
	writes := c.Metric("causeway_ingress_status_writes_total")
	for i := range 3 {
		createService(t, ns, fmt.Sprintf("unrelated-%d", i))
	}
	time.Sleep(2 * time.Second)
	if got := c.Metric("causeway_ingress_status_writes_total"); got != writes {
		t.Errorf("status writes went from %v to %v without anything to write", writes, got)
	}

	// No longer ours: the address is taken back.
	updateIngress(t, ns, "web", func(ing *networkingv1.Ingress) { ing.Spec.IngressClassName = ptr.To("someone-else") })
	waitStatus(t, ns, "web", waitFor)
	// Ours again.
	updateIngress(t, ns, "web", func(ing *networkingv1.Ingress) { ing.Spec.IngressClassName = ptr.To(ingressClass) })
	waitStatus(t, ns, "web", waitFor, want...)
}

// TestStatusPublishService publishes what --publish-service's Service
// shows: its load-balancer addresses as they change, else its external IPs.
func TestStatusPublishService(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	ctx := t.Context()
	svcs := e2e.admin.CoreV1().Services(ns)
	edge, err := svcs.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := startController(t, controllerConfig{Namespace: ns, Args: []string{"--publish-service", ns + "/edge"}})
	c.WaitLeader(waitFor)
	createService(t, ns, "app", startBackend(t, "app"))
	createIngress(t, newIngress(ns, "web", "publish.e2e.test", "app"))
	c.waitServed("publish.e2e.test", "app")
	if got := statusAddresses(getIngress(t, ns, "web")); len(got) != 0 {
		t.Errorf("status = %v while the Service has no address, want none", got)
	}

	setLB := func(lb ...corev1.LoadBalancerIngress) {
		t.Helper()
		edge.Status.LoadBalancer.Ingress = lb
		if edge, err = svcs.UpdateStatus(ctx, edge, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setLB(corev1.LoadBalancerIngress{IP: "192.0.2.20"})
	waitStatus(t, ns, "web", waitFor, "192.0.2.20")

	setLB(corev1.LoadBalancerIngress{Hostname: "lb.e2e.test"}, corev1.LoadBalancerIngress{IP: "192.0.2.21"})
	waitStatus(t, ns, "web", waitFor, "192.0.2.21", "lb.e2e.test")

	// Without load-balancer addresses, the external IPs are published.
	setLB()
	edge.Spec.ExternalIPs = []string{"192.0.2.30"}
	if _, err := svcs.Update(ctx, edge, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ns, "web", waitFor, "192.0.2.30")
}
