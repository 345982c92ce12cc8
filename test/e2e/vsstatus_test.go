package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

type vsStatus struct {
	State             string `json:"state"`
	Reason            string `json:"reason"`
	Message           string `json:"message"`
	ReferencedBy      string `json:"referencedBy"`
	ExternalEndpoints []struct {
		IP       string `json:"ip"`
		Hostname string `json:"hostname"`
		Ports    string `json:"ports"`
	} `json:"externalEndpoints"`
}

func getVSStatus(t *testing.T, kubectl, ns, name string) (vsStatus, error) {
	return getCRStatus(t, kubectl, "virtualservers", ns, name)
}

// getCRStatus reads the status of one of NGINX Ingress Controller's
// resources (a VirtualServer's has every field the others have).
func getCRStatus(t *testing.T, kubectl, resource, ns, name string) (vsStatus, error) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", e2e.env.AdminKubeconfig,
		"get", resource+".k8s.nginx.org", "-n", ns, name, "-o", "json").Output()
	if err != nil {
		return vsStatus{}, fmt.Errorf("kubectl get %s %s/%s: %w", resource, ns, name, err)
	}
	var vs struct {
		Status vsStatus `json:"status"`
	}
	if err := json.Unmarshal(out, &vs); err != nil {
		return vsStatus{}, err
	}
	return vs.Status, nil
}

func vsYAML(ns, name, class, host, extra string) string {
	return fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata:
  namespace: %s
  name: %s
spec:
  ingressClassName: %s
  host: %s
  upstreams:
  - name: tea
    service: tea
    port: 80
%s`, ns, name, class, host, extra)
}

// TestVirtualServerStatus: the leader writes the status of VirtualServers,
// VirtualServerRoutes and Policies as NGINX Ingress Controller does, as
// deploy/'s ServiceAccount (so the RBAC rules for their status are
// exercised).
func TestVirtualServerStatus(t *testing.T) {
	t.Parallel()
	kubectl := tool(t, "kubectl", "KUBECTL", "make kube-apiserver")
	installCRDs(t, kubectl)
	ns := newNamespace(t)
	createService(t, ns, "tea", startBackend(t, "tea"))
	c := startController(t, controllerConfig{Namespace: ns, Args: []string{"--publish-address", "192.0.2.10"}})

	const route = `  routes:
  - path: /
    action:
      pass: tea
`
	for _, m := range []string{
		vsYAML(ns, "valid", "causeway", "valid.example.com", route),
		vsYAML(ns, "warning", "causeway", "warning.example.com", "  externalDNS: {enable: true}\n"+route),
		// The schema accepts an action naming an upstream that is not
		// defined; the controller rejects the VirtualServer.
		vsYAML(ns, "invalid", "causeway", "invalid.example.com", `  routes:
  - path: /
    action:
      pass: coffee
`),
		vsYAML(ns, "other", "nginx", "other.example.com", route),
		vsYAML(ns, "cafe", "causeway", "cafe.example.com", `  routes:
  - path: /menu
    route: menu
`),
		vsrYAML(ns, "menu", "cafe.example.com"),
		vsrYAML(ns, "loose", "nobody.example.com"),
		fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: Policy
metadata:
  namespace: %s
  name: lan
spec:
  accessControl:
    allow: ["10.0.0.0/8"]
`, ns),
		fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: Policy
metadata:
  namespace: %s
  name: jwt
spec:
  jwt:
    realm: cafe
    secret: jwk
`, ns),
	} {
		if out, ok := kubectlApply(t, kubectl, m); !ok {
			t.Fatalf("kubectl apply:\n%s\n%s", out, m)
		}
	}

	waitCR := func(resource, name, state, reason string, endpoints bool, fragments ...string) {
		t.Helper()
		eventually(t, waitFor, func() error {
			st, err := getCRStatus(t, kubectl, resource, ns, name)
			if err != nil {
				return err
			}
			if st.State != state || st.Reason != reason {
				return fmt.Errorf("%s %s: state %q reason %q (%q), want %s %s", resource, name, st.State, st.Reason, st.Message, state, reason)
			}
			for _, f := range fragments {
				if !strings.Contains(st.Message, f) {
					return fmt.Errorf("%s %s: message %q lacks %q", resource, name, st.Message, f)
				}
			}
			if !endpoints {
				return nil
			}
			// --publish-address: nginx's own ports, as no Service says more.
			ports := fmt.Sprintf("[%d,%d]", c.HTTPPort, c.HTTPSPort)
			if len(st.ExternalEndpoints) != 1 || st.ExternalEndpoints[0].IP != "192.0.2.10" || st.ExternalEndpoints[0].Ports != ports {
				return fmt.Errorf("%s %s: externalEndpoints %+v, want 192.0.2.10 %s", resource, name, st.ExternalEndpoints, ports)
			}
			return nil
		})
	}
	wait := func(name, state, reason string, endpoints bool, fragments ...string) {
		t.Helper()
		waitCR("virtualservers", name, state, reason, endpoints, fragments...)
	}
	wait("valid", "Valid", "AddedOrUpdated", true, "Configuration for "+ns+"/valid was added or updated")
	wait("warning", "Warning", "AddedOrUpdatedWithWarning", true, "with warning(s)", "spec.externalDNS")
	// NIC keeps externalEndpoints on an Invalid VirtualServer.
	wait("invalid", "Invalid", "Rejected", true, "was rejected with error", "coffee")
	waitCR("virtualserverroutes", "menu", "Valid", "AddedOrUpdated", true, "Configuration for "+ns+"/menu was added or updated")
	if st, err := getCRStatus(t, kubectl, "virtualserverroutes", ns, "menu"); err != nil || st.ReferencedBy != ns+"/cafe" {
		t.Errorf("VirtualServerRoute menu: referencedBy %q (%v), want %s/cafe", st.ReferencedBy, err, ns)
	}
	waitCR("virtualserverroutes", "loose", "Warning", "NoVirtualServerFound", true, "VirtualServer is invalid or doesn't exist")
	waitCR("policies", "lan", "Valid", "AddedOrUpdated", false, "Policy "+ns+"/lan was added or updated")
	waitCR("policies", "jwt", "Invalid", "Rejected", false, "Policy "+ns+"/jwt is invalid and was rejected", "NGINX Plus")
	if log := c.log.String(); !strings.Contains(log, "watching custom resources") {
		t.Errorf("the controller did not log which custom resources it watches:\n%s", log)
	}

	// Fixing the invalid one turns it Valid.
	if out, ok := kubectlApply(t, kubectl, vsYAML(ns, "invalid", "causeway", "invalid.example.com", route)); !ok {
		t.Fatalf("kubectl apply:\n%s", out)
	}
	wait("invalid", "Valid", "AddedOrUpdated", true)

	// Another class's VirtualServer is never written. It was applied
	// before the objects whose status was waited for above, and the fix
	// was written after two syncs that saw it through one write queue: a
	// status of its own would be there by now.
	if st, err := getVSStatus(t, kubectl, ns, "other"); err != nil || st.State != "" {
		t.Errorf("VirtualServer of class nginx: status %+v (%v), want none", st, err)
	}
	c.Stop() // fails on any RBAC refusal in the log
}

func vsrYAML(ns, name, host string) string {
	return fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: VirtualServerRoute
metadata:
  namespace: %s
  name: %s
spec:
  ingressClassName: causeway
  host: %s
  upstreams:
  - name: tea
    service: tea
    port: 80
  subroutes:
  - path: /menu
    action:
      pass: tea
`, ns, name, host)
}
