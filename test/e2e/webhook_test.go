package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// webhookConfiguration is the ValidatingWebhookConfiguration deploy/'s
// RBAC lets the controller keep (by resourceName).
const webhookConfiguration = "causeway-admission"

// kubectlApply applies manifest as the admin user and returns the
// combined output and whether kubectl succeeded.
func kubectlApply(t *testing.T, kubectl, manifest string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", e2e.env.AdminKubeconfig, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// kubectlApplyDryRun is kubectlApply with --dry-run=server: admission runs,
// nothing is stored.
func kubectlApplyDryRun(t *testing.T, kubectl, manifest string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", e2e.env.AdminKubeconfig, "apply", "--dry-run=server", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

func ingressYAML(ns, name, host, service string, annotations ...string) string {
	var ann strings.Builder
	if len(annotations) > 0 {
		ann.WriteString("  annotations:\n")
		for i := 0; i+1 < len(annotations); i += 2 {
			fmt.Fprintf(&ann, "    %s: %q\n", annotations[i], annotations[i+1])
		}
	}
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %s
  namespace: %s
%sspec:
  ingressClassName: %s
  rules:
    - host: %s
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: %s
                port:
                  number: 80
`, name, ns, ann.String(), ingressClass, host, service)
}

func virtualServerYAML(ns, name, host, pass string) string {
	return fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata:
  name: %s
  namespace: %s
spec:
  host: %s
  upstreams:
    - name: app
      service: app
      port: 80
  routes:
    - path: /
      action:
        pass: %s
`, name, ns, host, pass)
}

// TestAdmissionWebhook: the API server sends Ingress writes of one
// namespace to the controller's webhook, whose certificate the controller
// generated and whose CA it wrote into the configuration. kubectl apply of
// a valid Ingress succeeds, of one that would raise a Problem is refused
// with the Problem, and of one naming a Service not created yet succeeds
// with a warning; VirtualServers (k8s.nginx.org/v1) likewise. A caBundle
// reset (a helm upgrade, say) is repaired.
//
// Not parallel: the configuration's name is the one deploy/'s RBAC grants,
// and TestChart's dry runs apply a configuration of that name too.
func TestAdmissionWebhook(t *testing.T) {
	kubectl := tool(t, "kubectl", "KUBECTL", "make kube-apiserver")
	installCRDs(t, kubectl) // VirtualServers are reviewed too
	ns := newNamespace(t)
	createService(t, ns, "app")
	port := freePort(t, "127.0.0.1")
	ctx := t.Context()
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: webhookConfiguration},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "validate.ingress.causeway.io",
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			TimeoutSeconds:          ptr.To(int32(10)),
			// Only this test's namespace: the other tests run beside it.
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"networking.k8s.io"}, APIVersions: []string{"v1"},
					Resources: []string{"ingresses"}},
			}, {
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"k8s.nginx.org"}, APIVersions: []string{"v1"},
					Resources: []string{"virtualservers"}},
			}},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(fmt.Sprintf("https://127.0.0.1:%d/validate", port))},
		}},
	}
	if _, err := e2e.admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e2e.admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), webhookConfiguration, metav1.DeleteOptions{})
	})
	startController(t, controllerConfig{Namespace: ns, Args: []string{
		"--validating-webhook-address", fmt.Sprintf("127.0.0.1:%d", port),
		"--validating-webhook-configuration", webhookConfiguration,
	}})
	waitCABundle := func(what string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, waitFor, true, func(ctx context.Context) (bool, error) {
			got, err := e2e.admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, webhookConfiguration, metav1.GetOptions{})
			return err == nil && bytes.Contains(got.Webhooks[0].ClientConfig.CABundle, []byte("BEGIN CERTIFICATE")), nil
		})
		if err != nil {
			t.Fatalf("%s: the controller did not write its CA into caBundle: %v", what, err)
		}
	}
	waitCABundle("at start")

	// The API server may take a moment to use the new caBundle.
	var out string
	var ok bool
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, waitFor, true, func(context.Context) (bool, error) {
		out, ok = kubectlApply(t, kubectl, ingressYAML(ns, "web", "web.test", "app"))
		return ok, nil
	})
	if err != nil {
		t.Fatalf("a valid Ingress was not admitted:\n%s", out)
	}
	if strings.Contains(out, "Warning") {
		t.Errorf("a valid Ingress was admitted with a warning:\n%s", out)
	}
	// Creation times have whole seconds, and objects created in the same
	// second rank by namespace/name: the rivals below must come a second later to be
	// younger than "web" for certain.
	web, err := e2e.admin.NetworkingV1().Ingresses(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(web.CreationTimestamp.Add(1100 * time.Millisecond)))
	// Reviews see the controller's last synced snapshot: wait until it
	// holds "web" (a dry run of a colliding Ingress is refused), as a
	// user would see after the controller served it.
	thief := ingressYAML(ns, "thief", "web.test", "app")
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, waitFor, true, func(context.Context) (bool, error) {
		out, ok = kubectlApplyDryRun(t, kubectl, thief)
		return !ok, nil
	})
	if err != nil {
		t.Fatalf("the webhook never saw Ingress web:\n%s", out)
	}

	for _, tc := range []struct {
		name, manifest string
		admitted       bool
		want           []string
	}{
		{"an unknown annotation is refused", ingressYAML(ns, "typo", "typo.test", "app", "nginx.ingress.kubernetes.io/rewrite-targt", "/"), false,
			[]string{`admission webhook "validate.ingress.causeway.io" denied the request`, "UnknownAnnotation", "nginx.ingress.kubernetes.io/rewrite-targt"}},
		{"an invalid value is refused", ingressYAML(ns, "big", "big.test", "app", "nginx.ingress.kubernetes.io/proxy-body-size", "huge"), false,
			[]string{"InvalidAnnotation", "proxy-body-size"}},
		{"a host and path already served are refused", thief, false,
			[]string{"Collision", ns + "/web"}},
		{"a snippet that would inject is refused", ingressYAML(ns, "inject", "inject.test", "app",
			"nginx.ingress.kubernetes.io/configuration-snippet", "}\nserver { listen 1; }"), false, []string{ns + "/inject"}},
		{"a Service not created yet only warns", ingressYAML(ns, "early", "early.test", "later"), true,
			[]string{"Warning: causeway: MissingService", "later"}},
		{"a valid VirtualServer is admitted", virtualServerYAML(ns, "shop", "shop.test", "app"), true, []string{"virtualserver.k8s.nginx.org/shop"}},
		{"a VirtualServer for a host an Ingress serves is refused", virtualServerYAML(ns, "vs-thief", "web.test", "app"), false,
			[]string{`admission webhook "validate.ingress.causeway.io" denied the request`, "VirtualServer " + ns + "/vs-thief", "Collision", ns + "/web"}},
		{"a VirtualServer passing to an undefined upstream is refused", virtualServerYAML(ns, "vs-broken", "broken.test", "nope"), false,
			[]string{"Invalid", `names upstream "nope", which spec.upstreams does not define`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := kubectlApply(t, kubectl, tc.manifest)
			if ok != tc.admitted {
				t.Fatalf("admitted %v, want %v:\n%s", ok, tc.admitted, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("kubectl output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	for _, refused := range []string{"typo", "big", "thief", "inject"} {
		if _, err := e2e.admin.NetworkingV1().Ingresses(ns).Get(ctx, refused, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("refused Ingress %s exists (err %v)", refused, err)
		}
	}

	for _, refused := range []string{"vs-thief", "vs-broken"} {
		out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", e2e.env.AdminKubeconfig, "get", "-n", ns, "virtualserver", refused).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "NotFound") {
			t.Errorf("refused VirtualServer %s exists (err %v):\n%s", refused, err, out)
		}
	}

	// An update that breaks a stored Ingress is refused too.
	out, ok = kubectlApply(t, kubectl, ingressYAML(ns, "web", "web.test", "app", "nginx.ingress.kubernetes.io/ssl-redirect", "maybe"))
	if ok || !strings.Contains(out, "ssl-redirect") {
		t.Errorf("a breaking update was admitted or not explained:\n%s", out)
	}

	// A reset caBundle comes back.
	got, err := e2e.admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, webhookConfiguration, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Webhooks[0].ClientConfig.CABundle = nil
	if _, err := e2e.admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCABundle("after a reset")
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, waitFor, true, func(context.Context) (bool, error) {
		out, ok = kubectlApply(t, kubectl, ingressYAML(ns, "second", "second.test", "app"))
		return ok, nil
	})
	if err != nil {
		t.Fatalf("a valid Ingress was not admitted after the caBundle came back:\n%s", out)
	}
}
