package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestRateLimitScale: a rateLimit Policy with scale divides its rate by
// the ready endpoints of the controller's own Service (--publish-service),
// and follows them as they change; the endpoints here are data only, no
// traffic goes to them.
func TestRateLimitScale(t *testing.T) {
	t.Parallel()
	kubectl := tool(t, "kubectl", "KUBECTL", "make kube-apiserver")
	installCRDs(t, kubectl)
	ns := newNamespace(t)
	ctx := t.Context()
	createServiceObject(t, ns, "edge")
	slices := e2e.admin.DiscoveryV1().EndpointSlices(ns)
	edge := func(ready ...bool) []discoveryv1.Endpoint {
		var out []discoveryv1.Endpoint
		for i, r := range ready {
			out = append(out, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.251.0.%d", i+1)},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(r)},
				TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: fmt.Sprintf("causeway-%d", i)}})
		}
		return out
	}
	slice, err := slices.Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: "edge-1", Labels: map[string]string{discoveryv1.LabelServiceName: "edge"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: edge(true, true),
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	createService(t, ns, "tea", startBackend(t, "tea"))
	c := startController(t, controllerConfig{Namespace: ns, Args: []string{"--publish-service", ns + "/edge"}})
	for _, m := range []string{fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: Policy
metadata:
  namespace: %s
  name: scaled
spec:
  rateLimit:
    rate: 10r/s
    key: ${binary_remote_addr}
    scale: true
`, ns), vsYAML(ns, "cafe", "causeway", "scale.e2e.test", `  policies:
  - name: scaled
  routes:
  - path: /
    action:
      pass: tea
`)} {
		if out, ok := kubectlApply(t, kubectl, m); !ok {
			t.Fatalf("kubectl apply:\n%s\n%s", out, m)
		}
	}
	c.waitServed("scale.e2e.test", "tea")
	rate := func(want string) {
		t.Helper()
		eventually(t, waitFor, func() error {
			conf, err := os.ReadFile(filepath.Join(c.StateDir, "nginx.conf"))
			if err != nil {
				return err
			}
			for _, l := range strings.Split(string(conf), "\n") {
				if strings.Contains(l, "limit_req_zone") && strings.Contains(l, " rate=") {
					if !strings.HasSuffix(strings.TrimSpace(l), "rate="+want+";") {
						return fmt.Errorf("%s, want rate=%s", strings.TrimSpace(l), want)
					}
					return nil
				}
			}
			return fmt.Errorf("no limit_req_zone in nginx.conf")
		})
	}
	rate("5r/s") // 10r/s over 2 replicas
	// Four endpoints, one not ready: three replicas serve traffic.
	slice.Endpoints = edge(true, true, false, true)
	if slice, err = slices.Update(ctx, slice, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rate("3r/s")
	// Twelve: under one request a second each, counted per minute.
	slice.Endpoints = edge(true, true, true, true, true, true, true, true, true, true, true, true)
	if _, err = slices.Update(ctx, slice, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rate("50r/m")
	// None: the count is unknown, the whole rate applies, with a Problem.
	if err := slices.Delete(ctx, "edge-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rate("10r/s")
	eventually(t, waitFor, func() error {
		if !strings.Contains(c.log.String(), "spec.rateLimit.scale: the number of replicas is not known") {
			return fmt.Errorf("no Problem says the count is unknown")
		}
		return nil
	})
}
