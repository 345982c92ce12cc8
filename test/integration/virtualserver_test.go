package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/testcert"
)

const cafeVirtualServer = `apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: cafe, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z", uid: vs-cafe}
spec:
  host: cafe.test
  tls:
    secret: cafe-tls
    redirect: {enable: true}
  upstreams:
  - {name: tea, service: tea, port: 80}
  - {name: coffee, service: coffee, port: 80, read-timeout: 30s}
  routes:
  - path: /tea
    action: {pass: tea}
  - path: =/tea/exact
    action: {pass: coffee}
  - path: ~* ^/tea/[0-9]+$
    action: {proxy: {upstream: coffee}}
  - path: /old
    action: {redirect: {url: "https://cafe.test/new", code: 302}}
  - path: /gone
    action: {return: {code: 410}}
  - path: /
    action: {pass: coffee}
---
`

// TestVirtualServerAgainstNginx serves a VirtualServer from the files
// source through real nginx: nginx's string prefixes, exact and regex
// routes in nginx's order, redirect and return actions, TLS with the HTTPS
// redirect; an Ingress for the same host, younger, does not take it.
func TestVirtualServerAgainstNginx(t *testing.T) {
	tea, coffee, web := startBackend(t, "tea"), startBackend(t, "coffee"), startBackend(t, "web")
	crt, key, err := testcert.SelfSigned(2048, time.Hour, "cafe.test")
	if err != nil {
		t.Fatal(err)
	}
	c := startController(t, map[string]string{
		"class.yaml":    ingressClass,
		"services.yaml": serviceYAML("default", "tea", 80, tea) + serviceYAML("default", "coffee", 80, coffee) + serviceYAML("default", "web", 80, web),
		"tls.yaml":      testcert.SecretYAML("default", "cafe-tls", crt, key),
		"cafe.yaml":     cafeVirtualServer,
		// Younger than the VirtualServer: the host is not its.
		"ingress.yaml": strings.Replace(ingressYAML("default", "late", "cafe.test", "Prefix /late web"),
			"metadata: {name: late, namespace: default}", `metadata: {name: late, namespace: default, creationTimestamp: "2026-02-01T00:00:00Z"}`, 1),
	})
	for _, tc := range []struct {
		path    string
		status  int
		service string
	}{
		{"/tea", 200, "tea"}, {"/teapot", 200, "tea"}, {"/tea/cup", 200, "tea"},
		{"/tea/exact", 200, "coffee"}, {"/tea/42", 200, "coffee"}, {"/TEA/42", 200, "coffee"}, {"/tea/42/x", 200, "tea"},
		{"/", 200, "coffee"}, {"/late", 200, "coffee"}, {"/gone", 410, ""}, {"/old", 302, ""},
	} {
		r := c.GetTLS("cafe.test", tc.path)
		if r.Status != tc.status || r.Reply.Service != tc.service {
			t.Errorf("https://cafe.test%s: %d from %q, want %d from %q", tc.path, r.Status, r.Reply.Service, tc.status, tc.service)
		}
		if tc.path == "/old" && r.Location != "https://cafe.test/new" {
			t.Errorf("/old redirects to %q", r.Location)
		}
		if r.PeerCN != "cafe.test" {
			t.Errorf("https://cafe.test%s presented %q", tc.path, r.PeerCN)
		}
	}
	if r := c.Get("cafe.test", "/tea"); r.Status != 308 || r.Location != fmt.Sprintf("https://cafe.test:%d/tea", c.HTTPSPort) {
		t.Errorf("http://cafe.test/tea: %d to %q, want the HTTPS redirect", r.Status, r.Location)
	}
	if !strings.Contains(c.log.String(), `host \"cafe.test\" belongs to VirtualServer default/cafe`) {
		t.Errorf("the younger Ingress's collision is not logged:\n%s", c.log.String())
	}
}
