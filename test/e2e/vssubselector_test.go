package e2e

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// createPodService creates Service name whose endpoints, one
// EndpointSlice per backend (they share an IP, not a port), each name a
// Pod labelled by labels[i], as the EndpointSlice controller would write
// them for running Pods. The Pods stay Pending: nothing schedules them.
func createPodService(t *testing.T, ns, name string, backends []*backend, labels []map[string]string) {
	t.Helper()
	ctx := t.Context()
	createServiceObject(t, ns, name)
	// The ServiceAccount admission plugin wants the default account, which
	// no controller manager creates here.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}
	if _, err := e2e.admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create ServiceAccount: %v", err)
	}
	for i, b := range backends {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", name, i), Labels: labels[i]},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/app"}}},
		}
		if _, err := e2e.admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Pod: %v", err)
		}
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", name, i), Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{b.IP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
				TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod.Name, UID: pod.UID}}},
			Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(b.Port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}
		if _, err := e2e.admin.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create EndpointSlice: %v", err)
		}
	}
}

// TestVirtualServerSubselector: an upstream's subselector serves the
// endpoints of the Pods with its labels, read through the Pod informer
// as deploy/'s ServiceAccount (so its RBAC rule is exercised), and a
// change of a Pod's labels moves its endpoint in or out.
func TestVirtualServerSubselector(t *testing.T) {
	t.Parallel()
	kubectl := tool(t, "kubectl", "KUBECTL", "make kube-apiserver")
	installCRDs(t, kubectl)
	ns := newNamespace(t)
	createPodService(t, ns, "tea", []*backend{startBackend(t, "v1"), startBackend(t, "v2")},
		[]map[string]string{{"app": "tea", "version": "v1"}, {"app": "tea", "version": "v2"}})
	c := startController(t, controllerConfig{Namespace: ns})
	const host = "subselector.example.com"
	manifest := vsYAML(ns, "tea", "causeway", host, `    subselector: {version: v2}
  routes:
  - path: /
    action:
      pass: tea
`)
	if out, ok := kubectlApply(t, kubectl, manifest); !ok {
		t.Fatalf("kubectl apply:\n%s\n%s", out, manifest)
	}
	c.waitServed(host, "v2")
	// Right after the reload, an old worker may still accept a connection
	// with the old configuration (404) for a few milliseconds after a new
	// one answered: let them go before checking that it holds.
	time.Sleep(100 * time.Millisecond)
	c.waitServed(host, "v2")
	consistently(t, 500*time.Millisecond, func() error { return c.served(host, "v2") })

	// Relabel: v1's Pod now has the label, v2's no longer.
	for pod, version := range map[string]string{"tea-0": "v2", "tea-1": "v1"} {
		p, err := e2e.admin.CoreV1().Pods(ns).Get(t.Context(), pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Labels["version"] = version
		if _, err := e2e.admin.CoreV1().Pods(ns).Update(t.Context(), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.waitServed(host, "v1")
}
