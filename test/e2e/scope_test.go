package e2e

import (
	"fmt"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ignored checks that the controller left an Ingress entirely alone: no
// route, no status, no event.
func ignored(t *testing.T, c *controller, ns, name, host string) error {
	t.Helper()
	if err := c.served(host, ""); err != nil {
		return fmt.Errorf("Ingress %s/%s is routed: %w", ns, name, err)
	}
	if got := statusAddresses(getIngress(t, ns, name)); len(got) != 0 {
		return fmt.Errorf("Ingress %s/%s got status %v", ns, name, got)
	}
	if evs := ingressEvents(t, ns, name); len(evs) != 0 {
		return fmt.Errorf("Ingress %s/%s got events: %s", ns, name, describeEvents(evs))
	}
	return nil
}

// TestClassFiltering checks that Ingresses of another controller's class,
// by spec.ingressClassName or the legacy annotation, and Ingresses naming
// no class, are ignored silently, and that one leaving our class loses its
// route and status without an event.
func TestClassFiltering(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	other := "other-" + ns
	_, err := e2e.admin.NetworkingV1().IngressClasses().Create(t.Context(), &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: other},
		Spec:       networkingv1.IngressClassSpec{Controller: "example.com/other"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e2e.admin.NetworkingV1().IngressClasses().Delete(t.Context(), other, metav1.DeleteOptions{})
	})
	createService(t, ns, "app", startBackend(t, "app"))
	c := startController(t, controllerConfig{Namespace: ns, Args: []string{"--publish-address", "192.0.2.40"}})
	c.WaitLeader(waitFor)

	theirs := newIngress(ns, "theirs", "theirs.e2e.test", "app")
	theirs.Spec.IngressClassName = ptr.To(other)
	legacy := newIngress(ns, "legacy", "legacy.e2e.test", "app")
	legacy.Spec.IngressClassName = nil
	legacy.Annotations = map[string]string{"kubernetes.io/ingress.class": other}
	classless := newIngress(ns, "classless", "classless.e2e.test", "app")
	classless.Spec.IngressClassName = nil
	for _, ing := range []*networkingv1.Ingress{theirs, legacy, classless} {
		createIngress(t, ing)
	}
	// Ours comes last: once it is live and published, the others have
	// been through a sync too.
	createIngress(t, newIngress(ns, "ours", "ours.e2e.test", "app"))
	c.waitServed("ours.e2e.test", "app")
	waitStatus(t, ns, "ours", waitFor, "192.0.2.40")
	waitEvent(t, ns, "ours", "Normal", "AddedOrUpdated")

	check := func() error {
		for _, ing := range []*networkingv1.Ingress{theirs, legacy, classless} {
			if err := ignored(t, c, ns, ing.Name, ing.Spec.Rules[0].Host); err != nil {
				return err
			}
		}
		return nil
	}
	consistently(t, 2*time.Second, check)

	// Leaving our class: route and status go, silently.
	before := len(ingressEvents(t, ns, "ours"))
	updateIngress(t, ns, "ours", func(ing *networkingv1.Ingress) { ing.Spec.IngressClassName = ptr.To(other) })
	c.waitServed("ours.e2e.test", "")
	waitStatus(t, ns, "ours", waitFor)
	time.Sleep(time.Second)
	if evs := ingressEvents(t, ns, "ours"); len(evs) != before {
		t.Errorf("leaving the class produced events: %s", describeEvents(evs))
	}
}

// TestNamespaceScoping runs a controller that watches one namespace and
// checks that an Ingress of our class in another is ignored entirely.
func TestNamespaceScoping(t *testing.T) {
	t.Parallel()
	inside, outside := newNamespace(t), newNamespace(t)
	b := startBackend(t, "app")
	createService(t, inside, "app", b)
	createService(t, outside, "app", b)
	c := startController(t, controllerConfig{Namespace: inside, Watch: []string{inside}, Args: []string{"--publish-address", "192.0.2.41"}})
	c.WaitLeader(waitFor)

	createIngress(t, newIngress(outside, "web", "outside.e2e.test", "app"))
	createIngress(t, newIngress(inside, "web", "inside.e2e.test", "app"))
	c.waitServed("inside.e2e.test", "app")
	waitStatus(t, inside, "web", waitFor, "192.0.2.41")
	waitEvent(t, inside, "web", "Normal", "AddedOrUpdated")
	consistently(t, 2*time.Second, func() error { return ignored(t, c, outside, "web", "outside.e2e.test") })
}
