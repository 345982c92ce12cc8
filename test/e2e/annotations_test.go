package e2e

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestReferencedConfigMapFollowsTheAPI: an Ingress's custom-headers
// annotation names a ConfigMap; the controller watches exactly that
// object through the API (with the RBAC of deploy/), so its headers are
// served, a change to it goes live, and its deletion is a Problem while
// the Ingress keeps being served.
func TestReferencedConfigMapFollowsTheAPI(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createService(t, ns, "svc", startBackend(t, "a"))
	cms := e2e.admin.CoreV1().ConfigMaps(ns)
	// The controller's own ConfigMap allows the header.
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "causeway", Namespace: ns},
		Data: map[string]string{"global-allowed-response-headers": "X-Team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := startController(t, controllerConfig{Namespace: ns})
	const host = "headers.e2e.test"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "extra", Namespace: ns}, Data: map[string]string{"X-Team": "blue"}}
	if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ing := newIngress(ns, "web", host, "svc")
	ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/custom-headers": ns + "/extra"}
	createIngress(t, ing)

	header := func(want string) func() error {
		return func() error {
			r, err := c.get("http", host, "/")
			if err != nil {
				return err
			}
			if r.Status != 200 || r.Reply.Service != "a" {
				return fmt.Errorf("status %d from %q", r.Status, r.Reply.Service)
			}
			if got := r.Header.Get("X-Team"); got != want {
				return fmt.Errorf("X-Team %q, want %q", got, want)
			}
			return nil
		}
	}
	eventually(t, waitFor, header("blue"))

	cm.Data["X-Team"] = "green"
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitFor, header("green"))

	if err := cms.Delete(t.Context(), "extra", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitFor, header(""))
	waitEvent(t, ns, "web", corev1.EventTypeWarning, "Rejected", "MissingConfigMap", "custom-headers", "not found")
}
