package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

type tsStatus struct {
	State   string `json:"state"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func getTSStatus(t *testing.T, kubectl, ns, name string) (tsStatus, map[string]any, error) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", e2e.env.AdminKubeconfig,
		"get", "transportservers.k8s.nginx.org", "-n", ns, name, "-o", "json").Output()
	if err != nil {
		return tsStatus{}, nil, fmt.Errorf("kubectl get ts %s/%s: %w", ns, name, err)
	}
	var ts struct {
		Status tsStatus `json:"status"`
	}
	var raw struct {
		Status map[string]any `json:"status"`
	}
	if err := json.Unmarshal(out, &ts); err != nil {
		return tsStatus{}, nil, err
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		return tsStatus{}, nil, err
	}
	return ts.Status, raw.Status, nil
}

func tsYAML(ns, name, class, listener string) string {
	return fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: TransportServer
metadata:
  namespace: %s
  name: %s
spec:
  ingressClassName: %s
  listener:
    name: %s
    protocol: TCP
  upstreams:
  - name: tea
    service: tea
    port: 80
  action:
    pass: tea
`, ns, name, class, listener)
}

// TestTransportServerStatus: the leader writes a TransportServer's status
// as NGINX Ingress Controller does (state, reason, message; no
// externalEndpoints), as deploy/'s ServiceAccount (so the RBAC rule for
// transportservers/status is exercised). The oldest TransportServer on a
// listener owns it; a later one is rejected (a Collision leaves it out).
func TestTransportServerStatus(t *testing.T) {
	t.Parallel()
	kubectl := tool(t, "kubectl", "KUBECTL", "make kube-apiserver")
	installCRDs(t, kubectl)
	ns := newNamespace(t)
	createService(t, ns, "tea", startBackend(t, "tea"))
	port := freePort(t, "127.0.0.1")
	gc := fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: GlobalConfiguration
metadata:
  namespace: %s
  name: listeners
spec:
  listeners:
  - name: tcp-tea
    port: %d
    protocol: TCP
`, ns, port)
	if out, ok := kubectlApply(t, kubectl, gc); !ok {
		t.Fatalf("kubectl apply:\n%s\n%s", out, gc)
	}
	c := startController(t, controllerConfig{Namespace: ns, Args: []string{"--publish-address", "192.0.2.10",
		"--global-configuration", ns + "/listeners"}})

	if out, ok := kubectlApply(t, kubectl, tsYAML(ns, "first", "causeway", "tcp-tea")); !ok {
		t.Fatalf("kubectl apply:\n%s", out)
	}
	wait := func(name, state, reason string, fragments ...string) {
		t.Helper()
		eventually(t, waitFor, func() error {
			st, raw, err := getTSStatus(t, kubectl, ns, name)
			if err != nil {
				return err
			}
			if st.State != state || st.Reason != reason {
				return fmt.Errorf("TransportServer %s: state %q reason %q (%q), want %s %s", name, st.State, st.Reason, st.Message, state, reason)
			}
			for _, f := range fragments {
				if !strings.Contains(st.Message, f) {
					return fmt.Errorf("TransportServer %s: message %q lacks %q", name, st.Message, f)
				}
			}
			if _, ok := raw["externalEndpoints"]; ok {
				return fmt.Errorf("TransportServer %s: status %v has externalEndpoints", name, raw)
			}
			return nil
		})
	}
	wait("first", "Valid", "AddedOrUpdated", "Configuration for "+ns+"/first was added or updated")

	// Created later, on the same listener: the builder rejects it with a
	// Collision, so it is Invalid, and the first keeps the listener.
	time.Sleep(1100 * time.Millisecond) // creationTimestamp has a one-second grain
	for _, m := range []string{tsYAML(ns, "second", "causeway", "tcp-tea"), tsYAML(ns, "other", "nginx", "tcp-tea")} {
		if out, ok := kubectlApply(t, kubectl, m); !ok {
			t.Fatalf("kubectl apply:\n%s", out)
		}
	}
	wait("second", "Invalid", "Rejected", "TransportServer "+ns+"/second was rejected with error", `listener "tcp-tea" belongs to`)
	wait("first", "Valid", "AddedOrUpdated")

	// Another class's TransportServer is never written.
	time.Sleep(time.Second)
	if st, _, err := getTSStatus(t, kubectl, ns, "other"); err != nil || st.State != "" {
		t.Errorf("TransportServer of class nginx: status %+v (%v), want none", st, err)
	}

	// Once the owner is gone, the second takes the listener.
	if out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", e2e.env.AdminKubeconfig,
		"delete", "transportservers.k8s.nginx.org", "-n", ns, "first").CombinedOutput(); err != nil {
		t.Fatalf("kubectl delete: %v\n%s", err, out)
	}
	wait("second", "Valid", "AddedOrUpdated")
	c.Stop() // fails on any RBAC refusal in the log
}
