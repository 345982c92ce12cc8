package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// kustomization is the part of deploy/kustomization.yaml the tests
// understand. Decoding is strict: a transformer (namespace, namePrefix,
// patches...) would make the files differ from what kustomize applies, so
// it fails loudly instead of being ignored.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

// loadDeploy decodes every object of the kustomization in dir, in order.
func loadDeploy(dir string) ([]runtime.Object, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, fmt.Errorf("read kustomization: %w", err)
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		return nil, fmt.Errorf("deploy/kustomization.yaml has more than resources (the e2e tier reads the files as they are): %w", err)
	}
	var objs []runtime.Object
	decoder := scheme.Codecs.UniversalDeserializer()
	for _, res := range k.Resources {
		data, err := os.ReadFile(filepath.Join(dir, res))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", res, err)
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", res, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 || isComment(doc) {
				continue
			}
			obj, _, err := decoder.Decode(doc, nil, nil)
			if err != nil {
				return nil, fmt.Errorf("decode %s: %w", res, err)
			}
			objs = append(objs, obj)
		}
	}
	return objs, nil
}

func isComment(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// applyDeploy creates deploy/'s Namespace, RBAC, ConfigMap and IngressClass.
// The Deployment and Service are left to the server-side dry run: nothing
// here would run their pods or balance their traffic.
func applyDeploy(ctx context.Context, c kubernetes.Interface, objs []runtime.Object) error {
	for _, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = c.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			_, err = c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ConfigMap:
			_, err = c.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = c.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = c.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *networkingv1.IngressClass:
			_, err = c.NetworkingV1().IngressClasses().Create(ctx, o, metav1.CreateOptions{})
		default:
			continue
		}
		if err != nil {
			return fmt.Errorf("apply deploy/ %T: %w", obj, err)
		}
	}
	return nil
}

// deployObject returns deploy/'s only object of type T.
func deployObject[T runtime.Object](t testing.TB) T {
	t.Helper()
	var found []T
	for _, o := range e2e.deploy {
		if v, ok := o.(T); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("deploy/ has %d objects of type %T, want 1", len(found), zero)
	}
	return found[0]
}

// grantNamespace gives the controller's ServiceAccount deploy/'s Role (its
// ConfigMap and Lease, by name) in ns as well, so that each test can keep
// its ConfigMap and Lease in a namespace of its own. The rules are copied
// unchanged; only the namespace differs.
func grantNamespace(t *testing.T, ns string) {
	t.Helper()
	ctx := t.Context()
	role := deployObject[*rbacv1.Role](t).DeepCopy()
	binding := deployObject[*rbacv1.RoleBinding](t).DeepCopy()
	role.Namespace, binding.Namespace = ns, ns
	role.ResourceVersion, binding.ResourceVersion = "", ""
	if _, err := e2e.admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Role in %s: %v", ns, err)
	}
	if _, err := e2e.admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create RoleBinding in %s: %v", ns, err)
	}
	// The authorizer learns of new bindings through an informer; wait
	// until it has, or the controller's first requests would be refused.
	user := "system:serviceaccount:" + systemNamespace + ":" + serviceAccount
	for _, attr := range role.Rules {
		for _, verb := range attr.Verbs {
			ra := &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: attr.APIGroups[0], Resource: attr.Resources[0]}
			if len(attr.ResourceNames) > 0 {
				ra.Name = attr.ResourceNames[0]
			}
			err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
				sar, err := e2e.admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
					Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: ra},
				}, metav1.CreateOptions{})
				return err == nil && sar.Status.Allowed, nil
			})
			if err != nil {
				t.Fatalf("the Role copied into %s does not take effect for %s %+v: %v", ns, user, ra, err)
			}
		}
	}
}

// TestRBACLeastPrivilege pins deploy/'s rules to exactly what the
// controller's code requests. Every other test runs the controller with
// these rules, so a missing permission fails them; this one fails when a
// permission is added that the code does not need.
func TestRBACLeastPrivilege(t *testing.T) {
	type rule struct{ group, resource, name, verbs string }
	flatten := func(rules []rbacv1.PolicyRule) []rule {
		var out []rule
		for _, r := range rules {
			if len(r.NonResourceURLs) > 0 {
				t.Errorf("rule grants non-resource URLs %v", r.NonResourceURLs)
			}
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			verbs := slices.Clone(r.Verbs)
			slices.Sort(verbs)
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, n := range names {
						out = append(out, rule{g, res, n, strings.Join(verbs, ",")})
					}
				}
			}
		}
		slices.SortFunc(out, func(a, b rule) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		return out
	}
	for _, tc := range []struct {
		name string
		got  []rbacv1.PolicyRule
		want []rule
	}{
		{"ClusterRole", deployObject[*rbacv1.ClusterRole](t).Rules, []rule{
			{"", "events", "", "create,patch"},   // record.EventBroadcaster
			{"", "configmaps", "", "list,watch"}, // ConfigMaps Ingress annotations reference, one informer each, by name
			{"", "secrets", "", "list,watch"},    // TLS secret informer (by type); referenced Secrets (by name)
			{"", "services", "", "list,watch"},   // Service informer, --publish-service
			{"discovery.k8s.io", "endpointslices", "", "list,watch"},
			{"", "pods", "", "list,watch"},       // Pod informer (labels, for subselectors), with the custom resources
			{"", "namespaces", "", "list,watch"}, // Namespace informer (labels, for allowedRoutes), with Gateway API's CRDs
			{"networking.k8s.io", "ingressclasses", "", "list,watch"},
			{"networking.k8s.io", "ingresses", "", "list,watch"},
			{"networking.k8s.io", "ingresses/status", "", "patch"}, // status writer's merge patch
			// NGINX Ingress Controller's resources: dynamic informers
			// (--enable-custom-resources)
			{"k8s.nginx.org", "virtualservers", "", "list,watch"},
			{"k8s.nginx.org", "virtualservers/status", "", "patch"}, // the status writer's merge patches
			{"k8s.nginx.org", "virtualserverroutes", "", "list,watch"},
			{"k8s.nginx.org", "virtualserverroutes/status", "", "patch"},
			{"k8s.nginx.org", "transportservers", "", "list,watch"},
			{"k8s.nginx.org", "transportservers/status", "", "patch"},
			{"k8s.nginx.org", "policies", "", "list,watch"},
			{"k8s.nginx.org", "policies/status", "", "patch"},
			{"k8s.nginx.org", "globalconfigurations", "", "list,watch"},
			// Gateway API's resources: dynamic informers
			// (--enable-gateway-api), and the leader's status writer: an
			// update of the status subresource, a get of it after a
			// conflict (status.GatewayWriter).
			{"gateway.networking.k8s.io", "gatewayclasses", "", "list,watch"},
			{"gateway.networking.k8s.io", "gatewayclasses/status", "", "get,update"},
			{"gateway.networking.k8s.io", "gateways/status", "", "get,update"},
			{"gateway.networking.k8s.io", "listenersets/status", "", "get,update"},
			{"gateway.networking.k8s.io", "httproutes/status", "", "get,update"},
			{"gateway.networking.k8s.io", "grpcroutes/status", "", "get,update"},
			{"gateway.networking.k8s.io", "tlsroutes/status", "", "get,update"},
			{"gateway.networking.k8s.io", "tcproutes/status", "", "get,update"},
			{"gateway.networking.k8s.io", "udproutes/status", "", "get,update"},
			{"gateway.networking.k8s.io", "backendtlspolicies/status", "", "get,update"},
			{"gateway.networking.k8s.io", "gateways", "", "list,watch"},
			{"gateway.networking.k8s.io", "listenersets", "", "list,watch"},
			{"gateway.networking.k8s.io", "httproutes", "", "list,watch"},
			{"gateway.networking.k8s.io", "grpcroutes", "", "list,watch"},
			{"gateway.networking.k8s.io", "tlsroutes", "", "list,watch"},
			{"gateway.networking.k8s.io", "tcproutes", "", "list,watch"},
			{"gateway.networking.k8s.io", "udproutes", "", "list,watch"},
			{"gateway.networking.k8s.io", "referencegrants", "", "list,watch"},
			{"gateway.networking.k8s.io", "backendtlspolicies", "", "list,watch"},
			// the webhook's own configuration: names for its certificate,
			// and its CA kept in caBundle (webhookcert)
			{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "causeway-admission", "get,list,update,watch"},
		}},
		{"Role", deployObject[*rbacv1.Role](t).Rules, []rule{
			{"", "configmaps", "causeway", "list,watch"}, // ConfigMap informer, by name
			{"coordination.k8s.io", "leases", "", "create"},
			{"", "services", "", "create,delete,update"},                       // the Services of Gateways (gatewayservice/writer)
			{"coordination.k8s.io", "leases", "causeway-leader", "get,update"}, // leader election
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := slices.Clone(tc.want)
			slices.SortFunc(want, func(a, b rule) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			if got := flatten(tc.got); !slices.Equal(got, want) {
				t.Errorf("rules:\n got %v\nwant %v", got, want)
			}
		})
	}
	binding := deployObject[*rbacv1.ClusterRoleBinding](t)
	if len(binding.Subjects) != 1 || binding.Subjects[0].Kind != "ServiceAccount" ||
		binding.Subjects[0].Namespace != systemNamespace || binding.Subjects[0].Name != serviceAccount {
		t.Errorf("ClusterRoleBinding subjects = %+v, want only the ServiceAccount %s/%s", binding.Subjects, systemNamespace, serviceAccount)
	}
	if sa := deployObject[*corev1.ServiceAccount](t); sa.Namespace != systemNamespace || sa.Name != serviceAccount {
		t.Errorf("ServiceAccount is %s/%s", sa.Namespace, sa.Name)
	}
}

// TestDeployDryRun runs `kubectl apply --dry-run=server -k deploy/`, so
// the API server validates and admits every manifest (the Deployment and
// Service included) exactly as a cluster would.
func TestDeployDryRun(t *testing.T) {
	t.Parallel()
	kubectl := os.Getenv("KUBECTL")
	if kubectl == "" {
		kubectl = filepath.Join(e2e.repoRoot, ".cache", "bin", "kubectl")
	}
	if _, err := os.Stat(kubectl); err != nil {
		msg := fmt.Sprintf("kubectl not found at %s: run `make kube-apiserver` (it builds kubectl too) or set $KUBECTL", kubectl)
		if os.Getenv("CAUSEWAY_REQUIRE_TESTENV") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", e2e.env.AdminKubeconfig,
		"apply", "--dry-run=server", "-k", filepath.Join(e2e.repoRoot, "deploy"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply --dry-run=server -k deploy/: %v\n%s", err, out)
	}
	// Every object must have been admitted; objects the setup created are
	// "configured" or "unchanged", the rest "created".
	for _, want := range []string{"deployment.apps/causeway", "service/causeway", "ingressclass.networking.k8s.io/causeway",
		"clusterrole.rbac.authorization.k8s.io/causeway", "role.rbac.authorization.k8s.io/causeway"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("kubectl output does not mention %s:\n%s", want, out)
		}
	}
	// A dry run must not have created anything.
	if _, err := e2e.admin.AppsV1().Deployments(systemNamespace).Get(ctx, "causeway", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the dry run created the Deployment (err = %v)", err)
	}
	t.Logf("kubectl apply --dry-run=server -k deploy/:\n%s", out)
}
