package e2e

import (
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/gatewayservice"
)

// gatewayServices are the Services of Gateways in ns, by their Gateway
// ("namespace/name"), as Parse reads them.
func gatewayServices(t *testing.T, ns string) (map[string]gatewayservice.Owner, error) {
	list, err := e2e.admin.CoreV1().Services(ns).List(t.Context(), metav1.ListOptions{
		LabelSelector: gatewayservice.LabelManagedBy + "=" + gatewayservice.ManagedBy})
	if err != nil {
		return nil, err
	}
	out := map[string]gatewayservice.Owner{}
	for i := range list.Items {
		s := &list.Items[i]
		o, ok := gatewayservice.Parse(s)
		if !ok {
			return nil, fmt.Errorf("Service %s is labelled ours and does not parse", s.Name)
		}
		if s.Name != gatewayservice.ServiceName(o.Namespace, o.Name) || s.Spec.Type != corev1.ServiceTypeClusterIP {
			return nil, fmt.Errorf("Service %s of %s is of type %s", s.Name, o.Key(), s.Spec.Type)
		}
		out[o.Key()] = o
	}
	return out, nil
}

// TestGatewayServices: the leader keeps a Service per Gateway of a class
// of ours in the controller's namespace, under deploy/'s RBAC: created
// with internal ports of its own from the range, updated in place when a
// listener is added (the kept ports do not move), deleted with its
// Gateway; a Gateway of another controller's class gets none, and a
// Service of ours not labelled as one is never touched. Its cluster IP
// is the address Parse reads.
func TestGatewayServices(t *testing.T) {
	t.Parallel()
	kubectl := tool(t, "kubectl", "KUBECTL", "make kube-apiserver")
	installGatewayCRDs(t, kubectl)
	ns := newNamespace(t)
	createServiceObject(t, ns, "bystander")
	// The controller's ConfigMap owns the Services.
	cm, err := e2e.admin.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "causeway"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := startController(t, controllerConfig{Namespace: ns, Args: []string{
		"--gateway-service-type=ClusterIP", "--gateway-port-range=20000-20009"}})
	manifest := func(bListeners string) string {
		return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: causeway-svc-%[1]s}
spec: {controllerName: causeway.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: other-svc-%[1]s}
spec: {controllerName: example.com/other}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: a, namespace: %[1]s}
spec:
  gatewayClassName: causeway-svc-%[1]s
  infrastructure:
    labels: {team: shop}
    annotations: {lb.example.com/scheme: internal}
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: dns, port: 53, protocol: UDP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: b, namespace: %[1]s}
spec:
  gatewayClassName: causeway-svc-%[1]s
  listeners:
%[2]s
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: theirs, namespace: %[1]s}
spec:
  gatewayClassName: other-svc-%[1]s
  listeners:
  - {name: http, port: 80, protocol: HTTP}
`, ns, bListeners)
	}
	eventually(t, waitFor, func() error {
		if out, ok := kubectlApply(t, kubectl, manifest("  - {name: http, port: 80, protocol: HTTP}")); !ok {
			return fmt.Errorf("kubectl apply:\n%s", out)
		}
		return nil
	})

	var first map[string]gatewayservice.Owner
	eventually(t, waitFor, func() error {
		got, err := gatewayServices(t, ns)
		if err != nil {
			return err
		}
		if !slices.Equal(slices.Sorted(maps.Keys(got)), []string{ns + "/a", ns + "/b"}) {
			return fmt.Errorf("Services of Gateways %v, want a and b's", slices.Sorted(maps.Keys(got)))
		}
		seen := map[int32]bool{}
		for key, o := range got {
			if len(o.Addresses) != 1 {
				return fmt.Errorf("%s has addresses %v, want its cluster IP", key, o.Addresses)
			}
			for _, p := range o.Ports {
				if seen[p] || p < 20000 || p > 20009 {
					return fmt.Errorf("internal port %d given twice or out of range: %v", p, got)
				}
				seen[p] = true
			}
		}
		if len(got[ns+"/a"].Ports) != 2 || len(got[ns+"/b"].Ports) != 1 {
			return fmt.Errorf("ports %v", got)
		}
		first = got
		return nil
	})
	udp, err := e2e.admin.CoreV1().Services(ns).Get(t.Context(), gatewayservice.ServiceName(ns, "a"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := udp.Spec.Ports[0]; p.Port != 53 || p.Protocol != corev1.ProtocolUDP || p.Name != "p53" {
		t.Errorf("a's first port %+v, want p53 53/UDP", p)
	}
	// spec.infrastructure's labels and annotations, and Gateway API's
	// gateway-name label.
	if udp.Labels["team"] != "shop" || udp.Labels["gateway.networking.k8s.io/gateway-name"] != "a" || udp.Annotations["lb.example.com/scheme"] != "internal" {
		t.Errorf("a's labels %v and annotations %v, want spec.infrastructure's", udp.Labels, udp.Annotations)
	}
	if o := udp.OwnerReferences; len(o) != 1 || o[0].UID != cm.UID || o[0].Kind != "ConfigMap" {
		t.Errorf("a's owners %+v, want the controller's ConfigMap", o)
	}

	// b gains a listener: its port 80 keeps its internal port.
	if out, ok := kubectlApply(t, kubectl, manifest("  - {name: http, port: 80, protocol: HTTP}\n  - {name: alt, port: 8080, protocol: HTTP}")); !ok {
		t.Fatalf("kubectl apply:\n%s", out)
	}
	eventually(t, waitFor, func() error {
		got, err := gatewayServices(t, ns)
		if err != nil {
			return err
		}
		b := got[ns+"/b"]
		if len(b.Ports) != 2 {
			return fmt.Errorf("b's ports %v, want 80 and 8080", b.Ports)
		}
		if b.Ports[80] != first[ns+"/b"].Ports[80] || !maps.Equal(got[ns+"/a"].Ports, first[ns+"/a"].Ports) {
			return fmt.Errorf("internal ports moved: %v, were %v", got, first)
		}
		return nil
	})

	// a goes: its Service goes with it.
	if out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", e2e.env.AdminKubeconfig,
		"delete", "gateways.gateway.networking.k8s.io", "-n", ns, "a").CombinedOutput(); err != nil {
		t.Fatalf("kubectl delete: %v\n%s", err, out)
	}
	eventually(t, waitFor, func() error {
		got, err := gatewayServices(t, ns)
		if err != nil {
			return err
		}
		if _, ok := got[ns+"/a"]; ok || len(got) != 1 {
			return fmt.Errorf("Services of Gateways %v, want b's only", slices.Sorted(maps.Keys(got)))
		}
		return nil
	})
	if _, err := e2e.admin.CoreV1().Services(ns).Get(t.Context(), "bystander", metav1.GetOptions{}); err != nil {
		t.Errorf("the Service not ours: %v", err)
	}
	// The line follows the API's answer, which the test may see first.
	eventually(t, waitFor, func() error {
		if l := c.log.String(); !strings.Contains(l, "Gateway Service created") || !strings.Contains(l, "Gateway Service deleted") {
			return fmt.Errorf("the controller's log does not say what it wrote:\n%s", l)
		}
		return nil
	})
}
