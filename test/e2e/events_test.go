package e2e

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/utils/ptr"
)

// TestEvents checks the Events on Ingresses: Normal AddedOrUpdated when a
// version goes live, Warning Rejected naming the model's reason, and each
// only on a transition, not on every sync.
func TestEvents(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createService(t, ns, "app", startBackend(t, "app"))
	c := startController(t, controllerConfig{Namespace: ns})
	c.WaitLeader(waitFor)

	first := createIngress(t, newIngress(ns, "first", "events.e2e.test", "app"))
	waitEvent(t, ns, "first", corev1.EventTypeNormal, "AddedOrUpdated", "Configuration for "+ns+"/first was added or updated")
	// Creation times have a resolution of a second, and within one the
	// greater namespace/name ranks first; make "first" plainly the oldest.
	time.Sleep(time.Until(first.CreationTimestamp.Add(1100 * time.Millisecond)))

	for _, tc := range []struct {
		name      string
		ingress   func() *networkingv1.Ingress
		fragments []string
	}{
		{"collision loser", func() *networkingv1.Ingress {
			return newIngress(ns, "second", "events.e2e.test", "app") // same host and path as the older "first"
		}, []string{"Collision", "already served by Ingress " + ns + "/first"}},
		{"missing secret", func() *networkingv1.Ingress {
			ing := newIngress(ns, "no-secret", "tls.events.e2e.test", "app")
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"tls.events.e2e.test"}, SecretName: "absent"}}
			return ing
		}, []string{"MissingSecret", "absent"}},
		{"invalid path", func() *networkingv1.Ingress {
			// The API accepts any ImplementationSpecific path; the model
			// refuses characters that mean something to nginx.
			ing := newIngress(ns, "bad-path", "path.events.e2e.test", "app")
			ing.Spec.Rules[0].HTTP.Paths[0].Path = "/a;b"
			ing.Spec.Rules[0].HTTP.Paths[0].PathType = ptr.To(networkingv1.PathTypeImplementationSpecific)
			return ing
		}, []string{"Invalid", "/a;b"}},
		{"missing service", func() *networkingv1.Ingress {
			return newIngress(ns, "no-service", "svc.events.e2e.test", "nowhere")
		}, []string{"MissingService", "nowhere"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ing := createIngress(t, tc.ingress())
			waitEvent(t, ns, ing.Name, corev1.EventTypeWarning, "Rejected", tc.fragments...)
		})
	}

	// A whole rejection is not announced as live.
	for _, ev := range ingressEvents(t, ns, "bad-path") {
		if ev.Reason == "AddedOrUpdated" {
			t.Errorf("rejected Ingress got %s %s: %s", ev.Type, ev.Reason, ev.Message)
		}
	}

	// Syncs that change nothing about an Ingress emit nothing about it.
	for i := range 3 {
		createService(t, ns, fmt.Sprintf("unrelated-%d", i))
	}
	time.Sleep(2 * time.Second)
	if n := countEvents(t, ns, "first", "AddedOrUpdated"); n != 1 {
		t.Errorf("first: %d AddedOrUpdated events after unrelated syncs, want 1; events: %s", n, describeEvents(ingressEvents(t, ns, "first")))
	}
	if n := countEvents(t, ns, "second", "Rejected"); n != 1 {
		t.Errorf("second: %d Rejected events after unrelated syncs, want 1", n)
	}

	// A new version of the Ingress is announced again.
	updateIngress(t, ns, "first", func(ing *networkingv1.Ingress) {
		ing.Spec.Rules[0].HTTP.Paths = append(ing.Spec.Rules[0].HTTP.Paths, networkingv1.HTTPIngressPath{
			Path: "/v2", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: ing.Spec.Rules[0].HTTP.Paths[0].Backend,
		})
	})
	eventually(t, waitFor, func() error {
		if n := countEvents(t, ns, "first", "AddedOrUpdated"); n != 2 {
			return fmt.Errorf("%d AddedOrUpdated events after an update, want 2", n)
		}
		return nil
	})
}

// countEvents adds up the occurrences of a reason on an Ingress; repeats
// of one event are counted by the API, not listed again.
func countEvents(t *testing.T, ns, name, reason string) int {
	t.Helper()
	n := 0
	for _, ev := range ingressEvents(t, ns, name) {
		if ev.Reason == reason {
			n += int(max(ev.Count, 1))
		}
	}
	return n
}
