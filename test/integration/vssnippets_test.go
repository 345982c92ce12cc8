package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const snippetsVirtualServer = `apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: snip, namespace: default}
spec:
  host: snip.test
  http-snippets: |
    add_header X-Http "vs";
  server-snippets: |
    add_header X-Server "s";
    rewrite ^/old/(.*)$ /tea/$1 last;
  upstreams:
  - {name: tea, service: tea, port: 80}
  - {name: coffee, service: coffee, port: 80}
  routes:
  - path: /tea
    location-snippets: |
      add_header X-Route "tea" always;
      proxy_set_header X-Tenant "acme";
    action: {pass: tea}
  - path: /breakout
    location-snippets: |
      add_header X-Breakout "1"; }
      location /pwned { return 200 "pwned"; }
      location /x {
    action: {pass: tea}
  - path: /lua
    location-snippets: |
      content_by_lua_block { ngx.say("pwned") }
    action: {pass: tea}
  - path: /
    action: {pass: coffee}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: config, namespace: causeway}
data:
  allow-snippet-annotations: "true"
  http-snippet: |
    add_header X-Http-Global "cm";
`

// TestVirtualServerSnippetsAgainstNginx: a VirtualServer's http-snippets
// (and the ConfigMap's http-snippet) on every host, its server-snippets
// and location-snippets take effect in real nginx (a
// response header on every route, a rewrite, a request header to the
// backend), while location-snippets that try to close their location and
// add one of their own, or run Lua, are refused whole: their routes keep
// serving from the backend, and nothing of them reaches the configuration.
func TestVirtualServerSnippetsAgainstNginx(t *testing.T) {
	t.Parallel()
	tea, coffee := startBackend(t, "tea"), startBackend(t, "coffee")
	c := startController(t, map[string]string{
		"class.yaml":    ingressClass,
		"services.yaml": serviceYAML("default", "tea", 80, tea) + serviceYAML("default", "coffee", 80, coffee),
		"snip.yaml":     snippetsVirtualServer,
		"plain.yaml":    ingressYAML("default", "plain", "plain.test", "Prefix / coffee"),
	})
	// http-snippets reach every host, an Ingress's too, beside a host's
	// and a location's own add_header.
	for _, tc := range []struct{ host, path string }{{"snip.test", "/tea"}, {"snip.test", "/"}, {"plain.test", "/"}} {
		if r := c.Get(tc.host, tc.path); r.Status != 200 || r.Header.Get("X-Http") != "vs" || r.Header.Get("X-Http-Global") != "cm" {
			t.Errorf("%s%s: %d, X-Http %q, X-Http-Global %q; want the http-snippets' headers", tc.host, tc.path, r.Status,
				r.Header.Get("X-Http"), r.Header.Get("X-Http-Global"))
		}
	}
	r := c.Get("snip.test", "/tea")
	if r.Status != 200 || r.Reply.Service != "tea" || r.Header.Get("X-Route") != "tea" || r.Header.Get("X-Server") != "s" || r.Reply.Headers["X-Tenant"] != "acme" {
		t.Errorf("/tea: %d from %q, X-Route %q, X-Server %q, X-Tenant to the backend %q; want the snippets applied",
			r.Status, r.Reply.Service, r.Header.Get("X-Route"), r.Header.Get("X-Server"), r.Reply.Headers["X-Tenant"])
	}
	if r := c.Get("snip.test", "/old/cup"); r.Status != 200 || r.Reply.Service != "tea" || r.Reply.Path != "/tea/cup" || r.Header.Get("X-Route") != "tea" {
		t.Errorf("/old/cup: %d from %q at %q, want the server snippet's rewrite to /tea/cup", r.Status, r.Reply.Service, r.Reply.Path)
	}
	for _, tc := range []struct{ path, service string }{{"/breakout", "tea"}, {"/lua", "tea"}, {"/pwned", "coffee"}, {"/x", "coffee"}} {
		r := c.Get("snip.test", tc.path)
		if r.Status != 200 || r.Reply.Service != tc.service || strings.HasPrefix(r.Body, "pwned") || r.Header.Get("X-Breakout") != "" {
			t.Errorf("%s: %d from %q (X-Breakout %q, body %q), want %s unchanged", tc.path, r.Status, r.Reply.Service, r.Header.Get("X-Breakout"), r.Body, tc.service)
		}
		if r.Header.Get("X-Server") != "s" {
			t.Errorf("%s: X-Server %q, want the server snippet's header", tc.path, r.Header.Get("X-Server"))
		}
	}
	for _, want := range []string{`spec.routes[1] (path /breakout).location-snippets`, `spec.routes[2] (path /lua).location-snippets`, `content_by_lua_block`} {
		if !strings.Contains(c.log.String(), want) {
			t.Errorf("the log does not report %q:\n%s", want, c.log.String())
		}
	}
	// Nothing of the refused snippets is in what nginx loaded.
	err := filepath.Walk(c.StateDir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(p, ".conf") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, bad := range []string{`"pwned"`, "ngx.say", "X-Breakout", "/pwned"} {
			if strings.Contains(string(data), bad) {
				t.Errorf("%s holds %q", p, bad)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestVirtualServerHTTPSnippetsDenyEveryHost: the deny lines of a
// VirtualServer's http-snippets close every host in real nginx, as at
// nginx's http level: its own, another VirtualServer's (named before and
// after it) and an Ingress's. They were once collected too late and
// enforced on no host.
func TestVirtualServerHTTPSnippetsDenyEveryHost(t *testing.T) {
	t.Parallel()
	tea := startBackend(t, "tea")
	vs := func(name, host, snippets string) string {
		return "apiVersion: k8s.nginx.org/v1\nkind: VirtualServer\nmetadata: {name: " + name + ", namespace: default}\nspec:\n  host: " + host + "\n" +
			snippets + "  upstreams:\n  - {name: tea, service: tea, port: 80}\n  routes:\n  - path: /\n    action: {pass: tea}\n"
	}
	c := startController(t, map[string]string{
		"class.yaml":    ingressClass,
		"services.yaml": serviceYAML("default", "tea", 80, tea),
		"config.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config, namespace: causeway}\ndata:\n  allow-snippet-annotations: \"true\"\n",
		"vs.yaml": vs("alpha", "alpha.test", "") + "---\n" + vs("mid", "mid.test", "  http-snippets: |\n    deny 127.0.0.0/8;\n") +
			"---\n" + vs("zeta", "zeta.test", ""),
		"plain.yaml": ingressYAML("default", "plain", "plain.test", "Prefix / tea"),
	})
	for _, host := range []string{"alpha.test", "mid.test", "zeta.test", "plain.test"} {
		if r := c.Get(host, "/"); r.Status != 403 {
			t.Errorf("%s: %d from %q, want 403 from the http-snippets' deny", host, r.Status, r.Reply.Service)
		}
	}
}
