package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestIngressNginxStatusAndEventFlags runs the controller with
// ingress-nginx's --disable-leader-election, --update-status=false,
// --disable-sync-events and --disable-catch-all: it holds no Lease yet
// writes as a leader, serves without writing Ingress status, writes the
// Warning Events only, and refuses an Ingress with a spec.defaultBackend.
func TestIngressNginxStatusAndEventFlags(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createService(t, ns, "app", startBackend(t, "app"))
	c := startController(t, controllerConfig{Namespace: ns, Args: []string{
		"--publish-address", "192.0.2.50", "--disable-leader-election", "--update-status=false", "--disable-sync-events", "--disable-catch-all",
	}})
	c.WaitLeader(waitFor)

	createIngress(t, newIngress(ns, "web", "flags.e2e.test", "app"))
	catchAll := newIngress(ns, "catch-all", "catch-all.e2e.test", "app")
	catchAll.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
		Name: "app", Port: networkingv1.ServiceBackendPort{Number: 80}}}
	createIngress(t, catchAll)
	c.waitServed("flags.e2e.test", "app")
	waitEvent(t, ns, "catch-all", corev1.EventTypeWarning, "Rejected", "--disable-catch-all")
	consistently(t, 2*time.Second, func() error {
		if got := statusAddresses(getIngress(t, ns, "web")); len(got) != 0 {
			return fmt.Errorf("status %v written with --update-status=false", got)
		}
		if evs := ingressEvents(t, ns, "web"); len(evs) != 0 {
			return fmt.Errorf("events with --disable-sync-events: %s", describeEvents(evs))
		}
		return c.served("catch-all.e2e.test", "")
	})
	if _, err := e2e.admin.CoordinationV1().Leases(ns).Get(t.Context(), "causeway-leader", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Lease exists with --disable-leader-election (get: %v)", err)
	}
}

// TestWatchNamespaceSelector runs the controller with
// --watch-namespace-selector and the ClusterRole rule the chart adds for it
// (controller.scope.namespaceSelector): only the Ingresses of labelled
// namespaces are served, and labelling a namespace brings its Ingresses in.
func TestWatchNamespaceSelector(t *testing.T) {
	t.Parallel()
	inside, outside := newNamespace(t), newNamespace(t)
	label := "e2e.causeway.io/selector-" + fmt.Sprint(nextNS.Add(1))
	setLabel := func(ns string) {
		n, err := e2e.admin.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[label] = "yes"
		if _, err := e2e.admin.CoreV1().Namespaces().Update(t.Context(), n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setLabel(inside)
	grantNamespaces(t)
	b := startBackend(t, "app")
	createService(t, inside, "app", b)
	createService(t, outside, "app", b)
	c := startController(t, controllerConfig{Namespace: inside, Watch: []string{}, Args: []string{
		"--publish-address", "192.0.2.51", "--watch-namespace-selector", label + "=yes"}})
	c.WaitLeader(waitFor)

	createIngress(t, newIngress(outside, "web", "selector-out.e2e.test", "app"))
	createIngress(t, newIngress(inside, "web", "selector-in.e2e.test", "app"))
	c.waitServed("selector-in.e2e.test", "app")
	waitStatus(t, inside, "web", waitFor, "192.0.2.51")
	consistently(t, 2*time.Second, func() error { return ignored(t, c, outside, "web", "selector-out.e2e.test") })

	setLabel(outside)
	c.waitServed("selector-out.e2e.test", "app")
	waitStatus(t, outside, "web", waitFor, "192.0.2.51")
}

// grantNamespaces gives the controller's ServiceAccount the rule the chart
// adds with controller.scope.namespaceSelector: list and watch
// namespaces.
func grantNamespaces(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	name := "causeway-e2e-namespaces"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list", "watch"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: systemNamespace, Name: serviceAccount}}}
	if _, err := e2e.admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := e2e.admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + systemNamespace + ":" + serviceAccount
	for _, verb := range []string{"list", "watch"} {
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			sar, err := e2e.admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: "namespaces"}},
			}, metav1.CreateOptions{})
			return err == nil && sar.Status.Allowed, nil
		})
		if err != nil {
			t.Fatalf("%s namespaces is not granted: %v", verb, err)
		}
	}
}
