package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic"

	"github.com/causeway/causeway/internal/certmanager"
)

// certificateCRD stands in for cert-manager's: the same group, version and
// names, without its schema (this API server runs no cert-manager).
const certificateCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: certificates.cert-manager.io
spec:
  group: cert-manager.io
  scope: Namespaced
  names: {plural: certificates, singular: certificate, kind: Certificate, listKind: CertificateList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// grantCertManager installs the Certificate CRD and gives deploy/'s
// ServiceAccount the ClusterRole rule the chart adds with
// controller.certManager.enabled (TestChart checks the chart has it).
func grantCertManager(t *testing.T, kubectl string) {
	t.Helper()
	if out, ok := kubectlApply(t, kubectl, certificateCRD); !ok {
		t.Fatalf("kubectl apply the Certificate CRD:\n%s", out)
	}
	if out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", e2e.env.AdminKubeconfig, "wait", "--for", "condition=Established",
		"--timeout", waitFor.String(), "crd/certificates.cert-manager.io").CombinedOutput(); err != nil {
		t.Fatalf("kubectl wait: %v\n%s", err, out)
	}
	grantWrites(t, "cert-manager.io", "certificates")
}

// grantWrites gives deploy/'s ServiceAccount what the chart's optional
// rules grant on group/resource: get, list, create, update, delete.
func grantWrites(t *testing.T, group, resource string) {
	t.Helper()
	ctx := t.Context()
	name := "causeway-e2e-" + resource
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{group}, Resources: []string{resource},
			Verbs: []string{"get", "list", "create", "update", "delete"}}}}
	if _, err := e2e.admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: systemNamespace, Name: serviceAccount}}}
	if _, err := e2e.admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// The grant goes with the test: the tests running beside it must
	// not borrow it, or the forbidden check of their controllers' logs
	// would miss a rule deploy/ lacks.
	t.Cleanup(func() {
		ctx := context.Background()
		for _, err := range []error{
			e2e.admin.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{}),
			e2e.admin.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{}),
		} {
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("removing the grant %s: %v", name, err)
			}
		}
	})
}

// vsEventReasons are the reasons of the Events on VirtualServer ns/name
// whose message contains fragment.
func vsEventReasons(t *testing.T, ns, name, fragment string) ([]string, error) {
	sel := fields.Set{"involvedObject.kind": "VirtualServer", "involvedObject.name": name}.AsSelector().String()
	list, err := e2e.admin.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, err
	}
	var reasons []string
	for _, ev := range list.Items {
		if strings.Contains(ev.Message, fragment) {
			reasons = append(reasons, ev.Reason)
		}
	}
	return reasons, nil
}

// TestCertManagerCertificates: with --enable-cert-manager the leader, as
// deploy/'s ServiceAccount with the chart's extra rule, creates the
// Certificate a VirtualServer asks for, controlled by it; updates it when
// the request changes; and deletes it when the VirtualServer names
// another tls.secret.
func TestCertManagerCertificates(t *testing.T) {
	t.Parallel()
	kubectl := tool(t, "kubectl", "KUBECTL", "make kube-apiserver")
	installCRDs(t, kubectl)
	grantCertManager(t, kubectl)
	ns := newNamespace(t)
	createService(t, ns, "tea", startBackend(t, "tea"))
	startController(t, controllerConfig{Namespace: ns, Args: []string{"--enable-cert-manager"}})

	apply := func(secret, issuer string) {
		t.Helper()
		m := vsYAML(ns, "cafe", "causeway", "cafe.example.com", fmt.Sprintf(`  tls:
    secret: %s
    cert-manager:
      cluster-issuer: %s
      renew-before: 360h
  routes:
  - path: /
    action:
      pass: tea
`, secret, issuer))
		if out, ok := kubectlApply(t, kubectl, m); !ok {
			t.Fatalf("kubectl apply:\n%s\n%s", out, m)
		}
	}
	dyn, err := dynamic.NewForConfig(e2e.env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	certs := dyn.Resource(certmanager.CertificateGVR).Namespace(ns)
	certificate := func(name, issuer string) error {
		c, err := certs.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got, _, _ := unstructured.NestedString(c.Object, "spec", "issuerRef", "name")
		secret, _, _ := unstructured.NestedString(c.Object, "spec", "secretName")
		dns, _, _ := unstructured.NestedStringSlice(c.Object, "spec", "dnsNames")
		owners := c.GetOwnerReferences()
		switch {
		case got != issuer:
			return fmt.Errorf("issuer %q, want %q", got, issuer)
		case secret != name || len(dns) != 1 || dns[0] != "cafe.example.com":
			return fmt.Errorf("secretName %q, dnsNames %v", secret, dns)
		case len(owners) != 1 || owners[0].Kind != "VirtualServer" || owners[0].Name != "cafe" || owners[0].Controller == nil || !*owners[0].Controller:
			return fmt.Errorf("owners %+v", owners)
		}
		return nil
	}

	apply("cafe-tls", "letsencrypt")
	eventually(t, waitFor, func() error { return certificate("cafe-tls", "letsencrypt") })
	apply("cafe-tls", "internal-ca")
	eventually(t, waitFor, func() error { return certificate("cafe-tls", "internal-ca") })
	apply("cafe-tls-2", "internal-ca")
	eventually(t, waitFor, func() error { return certificate("cafe-tls-2", "internal-ca") })
	eventually(t, waitFor, func() error {
		if _, err := certs.Get(t.Context(), "cafe-tls", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the former Certificate: %v, want it deleted", err)
		}
		return nil
	})
	eventually(t, waitFor, func() error {
		reasons, err := vsEventReasons(t, ns, "cafe", `"cafe-tls"`)
		if err != nil || !slices.Contains(reasons, "DeleteCertificate") {
			return fmt.Errorf("no DeleteCertificate Event on the VirtualServer: %v (%v)", reasons, err)
		}
		return nil
	})
}
