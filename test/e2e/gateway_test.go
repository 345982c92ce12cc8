package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/source/kube"
	"github.com/causeway/causeway/test/harness"
)

// Gateway API's CRDs are cluster-wide and the tests share one API server:
// installed once, by whichever test needs them first.
var (
	installGatewayCRDsOnce sync.Once
	installGatewayCRDsErr  string
)

// installGatewayCRDs applies the standard channel's CRDs of the pinned
// module (sigs.k8s.io/gateway-api in go.mod), from the module cache, as
// docs/kubernetes.md tells users to.
func installGatewayCRDs(t *testing.T, kubectl string) {
	t.Helper()
	installGatewayCRDsOnce.Do(func() {
		dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
		if err != nil {
			installGatewayCRDsErr = "go list -m sigs.k8s.io/gateway-api: " + err.Error()
			return
		}
		crds := filepath.Join(strings.TrimSpace(string(dir)), "config", "crd", "standard")
		kc := []string{"--kubeconfig", e2e.env.AdminKubeconfig}
		if out, err := exec.Command(kubectl, append(kc, "apply", "--server-side", "-f", crds)...).CombinedOutput(); err != nil {
			installGatewayCRDsErr = "kubectl apply -f " + crds + ": " + err.Error() + "\n" + string(out)
			return
		}
		var out []byte
		for range 20 {
			out, err = exec.Command(kubectl, append(kc, "wait", "--for", "condition=Established", "--timeout", waitFor.String(),
				"crd/gatewayclasses.gateway.networking.k8s.io", "crd/gateways.gateway.networking.k8s.io",
				"crd/listenersets.gateway.networking.k8s.io",
				"crd/httproutes.gateway.networking.k8s.io", "crd/grpcroutes.gateway.networking.k8s.io",
				"crd/tlsroutes.gateway.networking.k8s.io", "crd/tcproutes.gateway.networking.k8s.io",
				"crd/udproutes.gateway.networking.k8s.io", "crd/referencegrants.gateway.networking.k8s.io",
				"crd/backendtlspolicies.gateway.networking.k8s.io")...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "accessor error") {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			installGatewayCRDsErr = "kubectl wait for Established: " + err.Error() + "\n" + string(out)
		}
	})
	if installGatewayCRDsErr != "" {
		t.Fatal(installGatewayCRDsErr)
	}
}

// gatewayCRDsInstalled reports whether the Gateway CRD is served already.
func gatewayCRDsInstalled(t *testing.T) bool {
	_, err := e2e.admin.Discovery().ServerResourcesForGroupVersion("gateway.networking.k8s.io/v1")
	return err == nil
}

// serviceAccountSource runs the kube source in this process, as deploy/'s
// ServiceAccount (so with deploy/'s RBAC), with a short rediscovery
// period: its Snapshot is the one the controller builds from.
func serviceAccountSource(t *testing.T, ns string, logs *harness.SyncBuffer) *kube.Source {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", e2e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := kube.New(kube.Options{Client: client, Dynamic: dyn, GatewayAPI: true, Namespaces: []string{ns},
		ConfigMap: ns + "/causeway", RediscoverEvery: 500 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("source: %v", err)
		}
	})
	eventually(t, waitFor, func() error {
		if !s.HasSynced() {
			return fmt.Errorf("the source has not synced")
		}
		return nil
	})
	return s
}

// TestGatewayAPISource: Gateway API's CRDs installed while the controller
// runs are noticed without a restart; a GatewayClass, a Gateway with an
// HTTPS listener, a ListenerSet with another and an HTTPRoute then reach
// the snapshot, with the Secrets the listeners name (Opaque ones, which
// only the watch by name reads)
// and the Service the route sends to, all under deploy/'s RBAC (the
// controller's log holds no refusal).
func TestGatewayAPISource(t *testing.T) {
	t.Parallel()
	kubectl := tool(t, "kubectl", "KUBECTL", "make kube-apiserver")
	ns := newNamespace(t)
	before := gatewayCRDsInstalled(t)
	c := startController(t, controllerConfig{Namespace: ns})
	logs := &harness.SyncBuffer{}
	s := serviceAccountSource(t, ns, logs)
	if !before && !strings.Contains(c.log.String(), "Gateway API resources off: the gateway.networking.k8s.io CRDs are not installed") {
		t.Errorf("the controller did not say Gateway API is off without the CRDs:\n%s", c.log.String())
	}

	installGatewayCRDs(t, kubectl)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cafe-cert"}, Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"tls.crt": []byte("cert"), "tls.key": []byte("key")}}
	if _, err := e2e.admin.CoreV1().Secrets(ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	teamSecret := secret.DeepCopy()
	teamSecret.Name = "team-cert"
	if _, err := e2e.admin.CoreV1().Secrets(ns).Create(t.Context(), teamSecret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createServiceObject(t, ns, "coffee")
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
  - name: https
    port: 443
    protocol: HTTPS
    hostname: cafe.example.com
    tls: {mode: Terminate, certificateRefs: [{name: cafe-cert}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: coffee, namespace: %[1]s}
spec:
  parentRefs: [{name: cafe}]
  hostnames: [cafe.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /coffee}}]
    backendRefs: [{name: coffee, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: team, namespace: %[1]s}
spec:
  parentRef: {name: cafe}
  listeners:
  - name: team
    port: 8443
    protocol: HTTPS
    hostname: team.example.com
    tls: {mode: Terminate, certificateRefs: [{name: team-cert}]}
`, ns)
	// The API server may take a moment to serve a CRD it just
	// established.
	eventually(t, waitFor, func() error {
		if out, ok := kubectlApply(t, kubectl, manifest); !ok {
			return fmt.Errorf("kubectl apply:\n%s", out)
		}
		return nil
	})

	eventually(t, waitFor, func() error {
		snap := s.Snapshot()
		var missing []string
		if !hasClass(snap, "causeway-"+ns) {
			missing = append(missing, "GatewayClass")
		}
		if len(snap.Gateways) != 1 || snap.Gateways[0].Name != "cafe" || len(snap.Gateways[0].Spec.Listeners) != 2 {
			missing = append(missing, "Gateway")
		}
		if len(snap.HTTPRoutes) != 1 || snap.HTTPRoutes[0].Name != "coffee" {
			missing = append(missing, "HTTPRoute")
		}
		if !hasSecret(snap, ns, "cafe-cert") {
			missing = append(missing, "the listener's Secret")
		}
		if len(snap.ListenerSets) != 1 || snap.ListenerSets[0].Name != "team" {
			missing = append(missing, "ListenerSet")
		}
		if !hasSecret(snap, ns, "team-cert") {
			missing = append(missing, "the ListenerSet listener's Secret")
		}
		if !hasService(snap, ns, "coffee") {
			missing = append(missing, "the route's Service")
		}
		if len(missing) > 0 {
			return fmt.Errorf("the snapshot lacks %s; source log:\n%s", strings.Join(missing, ", "), logs.String())
		}
		if len(snap.Gateways[0].ManagedFields) != 0 {
			return fmt.Errorf("the Gateway's managed fields were kept")
		}
		return nil
	})

	// The controller notices the CRDs at its next discovery (every 30 s).
	eventually(t, 2*waitFor, func() error {
		if l := c.log.String(); !strings.Contains(l, "watching Gateway API resources") {
			return fmt.Errorf("the controller has not noticed the Gateway API CRDs:\n%s", l)
		}
		return nil
	})
	// Its informers listed them under deploy/'s RBAC: Stop (at cleanup)
	// fails the test on any refusal in its log.
}

func hasClass(snap *source.Snapshot, name string) bool {
	for _, c := range snap.GatewayClasses {
		if c.Name == name {
			return true
		}
	}
	return false
}

func hasSecret(snap *source.Snapshot, ns, name string) bool {
	for _, s := range snap.Secrets {
		if s.Namespace == ns && s.Name == name {
			return true
		}
	}
	return false
}

func hasService(snap *source.Snapshot, ns, name string) bool {
	for _, s := range snap.Services {
		if s.Namespace == ns && s.Name == name {
			return true
		}
	}
	return false
}
