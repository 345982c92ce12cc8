package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSecurityAnnotationFailsClosed: an Ingress asking for external
// authentication at a URL Causeway refuses (a fragment carrying a
// directive, as CVE-2025-24514's payloads do) must not be served to
// everyone. Its paths answer 503
// through real nginx, a sibling Ingress on the same host and another host
// keep answering 200, and the log names the annotation. Dropping the
// annotation opens the paths again without a restart.
func TestSecurityAnnotationFailsClosed(t *testing.T) {
	t.Parallel()
	guarded, open := startBackend(t, "guarded"), startBackend(t, "open")
	const auth = "    nginx.ingress.kubernetes.io/auth-url: 'http://auth.test/#;load_module /tmp/x.so;'\n"
	guardedIngress := func(annotations string) string {
		return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: guarded
  namespace: default
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: "{}"
%sspec:
  ingressClassName: causeway
  rules:
  - host: shared.test
    http:
      paths:
      - {path: /admin, pathType: Prefix, backend: {service: {name: guarded, port: {number: 80}}}}
      - {path: /exact, pathType: Exact, backend: {service: {name: guarded, port: {number: 80}}}}
---
`, annotations)
	}
	m := ingressClass + serviceYAML("default", "guarded", 80, guarded) + serviceYAML("default", "open", 80, open) +
		ingressYAML("default", "open", "shared.test", "Prefix /public open") +
		ingressYAML("default", "other", "other.test", "Prefix / open")
	c := startController(t, map[string]string{"services.yaml": m, "guarded.yaml": guardedIngress(auth)})

	for _, p := range []string{"/admin", "/admin/users", "/exact"} {
		if r := c.Get("shared.test", p); r.Status != 503 {
			t.Errorf("shared.test%s: status %d (served by %q), want 503: a security annotation must fail closed", p, r.Status, r.Reply.Service)
		}
	}
	for _, tc := range []struct{ host, path string }{{"shared.test", "/public"}, {"other.test", "/"}} {
		if r := c.Get(tc.host, tc.path); r.Status != 200 || r.Reply.Service != "open" {
			t.Errorf("%s%s: status %d served by %q, want 200 from open", tc.host, tc.path, r.Status, r.Reply.Service)
		}
	}
	eventually(t, 10*time.Second, func() error {
		log := c.log.String()
		for _, want := range []string{"InvalidAnnotation", "nginx.ingress.kubernetes.io/auth-url", "default/guarded"} {
			if !strings.Contains(log, want) {
				return fmt.Errorf("the controller log does not name %q", want)
			}
		}
		if strings.Contains(log, "kubectl.kubernetes.io") {
			return fmt.Errorf("annotations under other prefixes must be ignored silently")
		}
		return nil
	})

	c.WriteManifest("guarded.yaml", guardedIngress(""))
	eventually(t, 10*time.Second, func() error {
		if r := c.Get("shared.test", "/admin"); r.Status != 200 || r.Reply.Service != "guarded" {
			return fmt.Errorf("/admin without the annotation: status %d served by %q, want 200 from guarded", r.Status, r.Reply.Service)
		}
		return nil
	})
}
