package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/test/harness"
)

// TestBackendTLSPolicyStatus: what the build makes of two
// BackendTLSPolicies, one honoured (the system's CAs) and one whose
// ConfigMap is missing, is written by the leader's status writer, as
// deploy/'s ServiceAccount, through the real CRD's schema: an entry of
// status.ancestors for the Gateway the route reaches them through, with
// the spec's conditions, beside another controller's entry, which stays.
func TestBackendTLSPolicyStatus(t *testing.T) {
	t.Parallel()
	kubectl := tool(t, "kubectl", "KUBECTL", "make kube-apiserver")
	installGatewayCRDs(t, kubectl)
	ns := newNamespace(t)
	ctx := t.Context()
	admin, err := gatewayclient.NewForConfig(e2e.env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: causeway-%[1]s}
spec: {controllerName: causeway.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: cafe, namespace: %[1]s}
spec:
  gatewayClassName: causeway-%[1]s
  listeners:
  - {name: http, port: 80, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: menu, namespace: %[1]s}
spec:
  parentRefs: [{name: cafe}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /coffee}}]
    backendRefs: [{name: coffee, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /tea}}]
    backendRefs: [{name: tea, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: coffee, namespace: %[1]s}
spec:
  targetRefs: [{group: "", kind: Service, name: coffee}]
  validation: {wellKnownCACertificates: System, hostname: coffee.example.com}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: tea, namespace: %[1]s}
spec:
  targetRefs: [{group: "", kind: Service, name: tea}]
  validation:
    caCertificateRefs: [{group: "", kind: ConfigMap, name: nonexistent}]
    hostname: tea.example.com
`, ns)
	createServiceObject(t, ns, "coffee")
	createServiceObject(t, ns, "tea")
	eventually(t, waitFor, func() error {
		if out, ok := kubectlApply(t, kubectl, manifest); !ok {
			return fmt.Errorf("kubectl apply:\n%s", out)
		}
		return nil
	})
	// Another controller's ancestor entry of the policy coffee.
	eventually(t, waitFor, func() error {
		p, err := admin.GatewayV1().BackendTLSPolicies(ns).Get(ctx, "coffee", metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Status.Ancestors = []gwv1.PolicyAncestorStatus{{AncestorRef: gwv1.ParentReference{Name: "theirs"}, ControllerName: theirController,
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "theirs",
				ObservedGeneration: p.Generation, LastTransitionTime: metav1.Now()}}}}
		_, err = admin.GatewayV1().BackendTLSPolicies(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	})

	logs := &harness.SyncBuffer{}
	s := serviceAccountSource(t, ns, logs)
	var snap *source.Snapshot
	eventually(t, waitFor, func() error {
		snap = s.Snapshot()
		if !hasClass(snap, "causeway-"+ns) || len(snap.Gateways) != 1 || len(snap.HTTPRoutes) != 1 || len(snap.BackendTLSPolicies) != 2 ||
			len(snap.Services) < 2 {
			return fmt.Errorf("the snapshot lacks the objects")
		}
		return nil
	})
	snap.GatewayClasses = slices.DeleteFunc(slices.Clone(snap.GatewayClasses), func(gc *gwv1.GatewayClass) bool {
		return gc.Name != "causeway-"+ns
	})
	_, _, writeErrs := observeGatewayStatus(t, snap, logs)

	eventually(t, waitFor, func() error {
		for name, want := range map[string][]string{
			"coffee": {theirController + " theirs Accepted=True/Accepted",
				string(gateway.ControllerName) + " cafe Accepted=True/Accepted,ResolvedRefs=True/ResolvedRefs"},
			"tea": {string(gateway.ControllerName) + " cafe Accepted=False/NoValidCACertificate,ResolvedRefs=False/InvalidCACertificateRef"},
		} {
			p, err := admin.GatewayV1().BackendTLSPolicies(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			var got []string
			for _, a := range p.Status.Ancestors {
				var cs []string
				for _, c := range a.Conditions {
					if c.ObservedGeneration != p.Generation {
						return fmt.Errorf("%s: %s at generation %d, not %d", name, c.Type, c.ObservedGeneration, p.Generation)
					}
					cs = append(cs, c.Type+"="+string(c.Status)+"/"+c.Reason)
				}
				got = append(got, fmt.Sprintf("%s %s %s", a.ControllerName, a.AncestorRef.Name, strings.Join(cs, ",")))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				return fmt.Errorf("%s status.ancestors\n got %q\nwant %q; write errors: %s", name, got, want, writeErrs.String())
			}
		}
		return nil
	})
	if l := logs.String(); strings.Contains(l, "forbidden") {
		t.Fatalf("a request was refused under deploy/'s RBAC:\n%s", l)
	}
}
