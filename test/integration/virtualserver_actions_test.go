package integration

import (
	"net"
	"strconv"
	"testing"

	"github.com/causeway/causeway/test/harness"
)

const actionsVirtualServer = `apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: actions, namespace: default}
spec:
  host: actions.test
  upstreams:
  - {name: tea, service: tea, port: 80}
  routes:
  - path: /gone
    action:
      return:
        code: 410
        type: application/json
        body: '{\"uri\": \"${request_uri}\", \"user\": \"${http_x_user}\"}\n'
        headers: [{name: X-Cafe, value: closed}]
  - path: /hello
    action: {return: {body: "hello ${arg_name}"}}
  - path: /old
    action: {redirect: {url: "${scheme}://${host}/new${request_uri}", code: 302}}
  - path: /tea
    action:
      proxy:
        upstream: tea
        rewritePath: /coffee
        requestHeaders:
          pass: false
          set: [{name: X-Tenant, value: "${http_x_login}-${request_method}"}]
        responseHeaders:
          hide: [X-Echo-Endpoint]
          add: [{name: X-Cafe, value: "open ${host}", always: true}]
  - path: ~* ^/menu/([a-z]+)$
    action: {proxy: {upstream: tea, rewritePath: "/v2/$1"}}
  - path: /_status
    action: {pass: tea}
    errorPages:
    - codes: [404]
      redirect: {url: "${scheme}://actions.test/missing", code: 302}
    - codes: [502, 503]
      return:
        code: 200
        type: application/json
        body: '{\"status\": ${upstream_status}}'
        headers: [{name: X-Status, value: "${upstream_status}"}]
    - codes: [500]
      return: {body: "kept"}
---
`

// TestVirtualServerActionsAgainstNginx: return bodies with NGINX
// variables, their type and headers, redirects with variables, and a
// proxy's rewritePath (prefix and regex routes) and headers, and error
// pages, through real nginx.
func TestVirtualServerActionsAgainstNginx(t *testing.T) {
	t.Parallel()
	tea := startBackend(t, "tea")
	c := startController(t, map[string]string{
		"class.yaml":    ingressClass,
		"services.yaml": serviceYAML("default", "tea", 80, tea),
		"actions.yaml":  actionsVirtualServer,
	})
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	r, err := harness.Do(addr, harness.Request{Method: "GET", Scheme: "http", Host: "actions.test", Path: "/gone?x=1",
		Header: map[string]string{"X-User": "bob"}})
	if err != nil || r.Status != 410 || r.Body != "{\"uri\": \"/gone?x=1\", \"user\": \"bob\"}\n" ||
		r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Cafe") != "closed" {
		t.Errorf("/gone: %d %q %v (%v)", r.Status, r.Body, r.Header, err)
	}
	if r := c.Get("actions.test", "/hello?name=ann"); r.Status != 200 || r.Body != "hello ann" || r.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("/hello: %d %q %v", r.Status, r.Body, r.Header)
	}
	if r := c.Get("actions.test", "/old/menu?a=b"); r.Status != 302 || r.Location != "http://actions.test/new/old/menu?a=b" {
		t.Errorf("/old: %d to %q", r.Status, r.Location)
	}
	r, err = harness.Do(addr, harness.Request{Method: "GET", Scheme: "http", Host: "actions.test", Path: "/tea/cup?x=1",
		Header: map[string]string{"X-Login": "bob", "X-Auth-User": "eve"}})
	if err != nil || r.Status != 200 || r.Reply.Service != "tea" || r.Reply.URI != "/coffee/cup?x=1" {
		t.Errorf("/tea/cup: %d from %q for %q (%v), want /coffee/cup?x=1 from tea", r.Status, r.Reply.Service, r.Reply.URI, err)
	}
	// pass: false keeps the client's headers; set headers still go.
	if h := r.Reply.Headers; h["X-Tenant"] != "bob-GET" || h["X-Auth-User"] != "" {
		t.Errorf("/tea/cup: the backend saw %v", h)
	}
	if r.Header.Get("X-Echo-Endpoint") != "" || r.Header.Get("X-Cafe") != "open actions.test" {
		t.Errorf("/tea/cup: response headers %v", r.Header)
	}
	if r := c.Get("actions.test", "/menu/drinks"); r.Reply.URI != "/v2/drinks" {
		t.Errorf("/menu/drinks: %d for %q, want /v2/drinks", r.Status, r.Reply.URI)
	}
	// Error pages: a redirect; a body replacing the status, with the
	// backend's in it; a body keeping the status.
	if r := c.Get("actions.test", "/_status/404/x"); r.Status != 302 || r.Location != "http://actions.test/missing" {
		t.Errorf("/_status/404/x: %d to %q", r.Status, r.Location)
	}
	if r := c.Get("actions.test", "/_status/503/x"); r.Status != 200 || r.Body != `{"status": 503}` ||
		r.Header.Get("X-Status") != "503" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("/_status/503/x: %d %q %v", r.Status, r.Body, r.Header)
	}
	if r := c.Get("actions.test", "/_status/500/x"); r.Status != 500 || r.Body != "kept" || r.Header.Get("Content-Type") != "text/html" {
		t.Errorf("/_status/500/x: %d %q %v", r.Status, r.Body, r.Header)
	}
	if r := c.Get("actions.test", "/_status/201/x"); r.Status != 201 || r.Reply.Service != "tea" {
		t.Errorf("/_status/201/x: %d from %q", r.Status, r.Reply.Service)
	}
}
