package integration

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// gatewayClassYAML is a GatewayClass of Causeway's, named causeway.
const gatewayClassYAML = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: causeway}
spec: {controllerName: causeway.io/gateway-controller}
---
`

// gatewayManifests are a GatewayClass of Causeway's, a Gateway with an
// HTTP listener for every host on port %[1]d and one for isolated.test,
// an HTTPS listener on port %[2]d, and routes that exercise hostnames,
// precedence and filters.
const gatewayManifests = gatewayClassYAML + `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  listeners:
  - {name: http, port: %[1]d, protocol: HTTP}
  - {name: isolated, port: %[1]d, protocol: HTTP, hostname: isolated.test}
  - name: https
    port: %[2]d
    protocol: HTTPS
    hostname: "*.secure.test"
    tls: {certificateRefs: [{name: cert}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [app.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: [{name: tea, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /}, headers: [{name: x-v, value: "2"}]}]
    backendRefs: [{name: coffee, port: 80}]
  - matches: [{path: {type: Exact, value: /juice}}]
    backendRefs: [{name: juice, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /split}}]
    backendRefs: [{name: tea, port: 80, weight: %[3]d}, {name: juice, port: 80, weight: %[4]d}]
  - matches: [{path: {type: PathPrefix, value: /old}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {scheme: https, statusCode: 301}
  - matches: [{path: {type: PathPrefix, value: /moved}}, {path: {type: PathPrefix, value: /went/away}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {statusCode: 308, path: {type: ReplacePrefixMatch, replacePrefixMatch: /new/}}
  - matches: [{path: {type: PathPrefix, value: /strip}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {hostname: example.org, path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}
  - matches: [{path: {type: PathPrefix, value: /cors-cred}}]
    filters:
    - type: CORS
      cors: {allowOrigins: ["*"], allowMethods: ["*"], allowHeaders: ["*"], allowCredentials: true}
    backendRefs: [{name: tea, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /cors-list}}]
    filters:
    - type: CORS
      cors: {allowOrigins: ["https://*.bar.test"], allowMethods: [GET]}
    backendRefs: [{name: tea, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /cors-any}}]
    filters:
    - type: CORS
      cors: {allowOrigins: ["*"], allowMethods: ["*"], allowHeaders: ["*"]}
    backendRefs: [{name: tea, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: any-host, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /any}}]
    backendRefs: [{name: tea, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wild, namespace: default}
spec:
  parentRefs: [{name: gw}]
  hostnames: ["*.wild.test", "x.secure.test"]
  rules:
  - backendRefs: [{name: coffee, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: one, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [one.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /x}}]
    backendRefs: [{name: tea, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: two, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [two.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /x}}]
    backendRefs: [{name: juice, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: isolated, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: isolated}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /only}}]
    backendRefs: [{name: juice, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: root-rewrite, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [rewrite.test]
  rules:
  - filters:
    - type: URLRewrite
      urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /xyz/}}
    backendRefs: [{name: tea, port: 80}]
---
`

// TestGatewayAPIAgainstNginx: HTTPRoutes on a Gateway's listeners are
// served on the listeners' ports, not the Ingress ports: hostnames exact,
// wildcard (any depth) and none, the spec's precedence (hostname first,
// then path, then headers), listener isolation, weights, redirects and
// HTTPS with the listener's certificate; a host no listener serves is 404.
func TestGatewayAPIAgainstNginx(t *testing.T) {
	t.Parallel()
	tea, coffee, juice := startBackend(t, "tea"), startBackend(t, "coffee"), startBackend(t, "juice")
	c := startController(t, map[string]string{
		"services.yaml": serviceYAML("default", "tea", 80, tea) + serviceYAML("default", "coffee", 80, coffee) + serviceYAML("default", "juice", 80, juice),
		"cert.yaml":     tlsSecretYAML(t, "default", "cert", "gateway.secure.test", 2048),
	})
	httpPort, httpsPort := freePort(t, c.IP), freePort(t, c.IP)
	c.WriteManifest("gateway.yaml", fmt.Sprintf(gatewayManifests, httpPort, httpsPort, 0, 1))
	httpAddr := net.JoinHostPort(c.IP, strconv.Itoa(httpPort))
	httpsAddr := net.JoinHostPort(c.IP, strconv.Itoa(httpsPort))
	type row struct {
		scheme, host, path string
		header             map[string]string
		status             int
		service, location  string
	}
	rows := []row{
		{"http", "app.test", "/a/b", nil, 200, "tea", ""},
		{"http", "app.test", "/", map[string]string{"X-V": "2"}, 200, "coffee", ""},
		// A header match on "/" is tried after the longer prefix /a.
		{"http", "app.test", "/a", map[string]string{"X-V": "2"}, 200, "tea", ""},
		{"http", "app.test", "/juice", nil, 200, "juice", ""},
		{"http", "app.test", "/juice/x", nil, 404, "", ""},
		{"http", "app.test", "/split", nil, 200, "juice", ""},
		{"http", "app.test", "/old/x?q=1", nil, 301, "", "https://app.test/old/x?q=1"},
		// ReplacePrefixMatch replaces each match's own prefix, element
		// by element, and keeps the query.
		{"http", "app.test", "/moved", nil, 308, "", "http://app.test:PORT/new"},
		{"http", "app.test", "/moved/", nil, 308, "", "http://app.test:PORT/new/"},
		{"http", "app.test", "/moved/a/b?q=1", nil, 308, "", "http://app.test:PORT/new/a/b?q=1"},
		{"http", "app.test", "/went/away/x", nil, 308, "", "http://app.test:PORT/new/x"},
		{"http", "app.test", "/strip", nil, 302, "", "http://example.org:PORT/"},
		{"http", "app.test", "/strip/x%0D%0Ay?z", nil, 302, "", "http://example.org:PORT/x%0D%0Ay?z"},
		// The raw URI must spell the prefix the location matched.
		{"http", "app.test", "/mov%65d/x", nil, 400, "", ""},
		// A route without hostnames serves every host of its listener,
		// after the routes naming the host.
		{"http", "app.test", "/any", nil, 200, "tea", ""},
		{"http", "other.test", "/any/thing", nil, 200, "tea", ""},
		{"http", "other.test", "/", nil, 404, "", ""},
		// Hosts of one shape share a server (the Lua data plane), each
		// with its own backends.
		{"http", "one.test", "/x", nil, 200, "tea", ""},
		{"http", "two.test", "/x", nil, 200, "juice", ""},
		{"http", "two.test", "/y", nil, 404, "", ""},
		// Wildcards match any number of labels, never the suffix itself.
		{"http", "a.wild.test", "/", nil, 200, "coffee", ""},
		{"http", "a.b.wild.test", "/x", nil, 200, "coffee", ""},
		{"http", "wild.test", "/", nil, 404, "", ""},
		// isolated.test has a listener of its own: the routes of the
		// listener without a hostname do not reach it (the wild route,
		// without a sectionName, is attached to both).
		{"http", "isolated.test", "/only", nil, 200, "juice", ""},
		{"http", "isolated.test", "/any", nil, 404, "", ""},
		// HTTPS: the route's x.secure.test is within the listener's
		// *.secure.test; its other hostnames are not.
		{"https", "x.secure.test", "/", nil, 200, "coffee", ""},
		{"https", "y.secure.test", "/", nil, 404, "", ""},
		{"https", "a.wild.test", "/", nil, 404, "", ""},
	}
	check := func(r row) error {
		addr := httpAddr
		if r.scheme == "https" {
			addr = httpsAddr
		}
		got, err := harness.Do(addr, harness.Request{Scheme: r.scheme, Host: r.host, Path: r.path, Header: r.header})
		if err != nil {
			return err
		}
		location := strings.ReplaceAll(r.location, "PORT", strconv.Itoa(httpPort))
		if got.Status != r.status || got.Reply.Service != r.service || got.Location != location {
			return fmt.Errorf("%s://%s%s %v: %d %q %q, want %d %q %q", r.scheme, r.host, r.path, r.header,
				got.Status, got.Reply.Service, got.Location, r.status, r.service, location)
		}
		// Every name gets the listener's certificate, served or not:
		// the port has that one listener.
		if r.scheme == "https" && got.PeerCN != "gateway.secure.test" {
			return fmt.Errorf("https://%s: certificate %q, want the listener's", r.host, got.PeerCN)
		}
		return nil
	}
	eventually(t, 20*time.Second, func() error { return check(rows[0]) })
	for _, r := range rows {
		if err := check(r); err != nil {
			t.Error(err)
		}
	}
	// ReplacePrefixMatch of the root prefix puts the replacement before
	// the whole path, one "/" between them.
	for path, want := range map[string]string{"/bar/b?q=1": "/xyz/bar/b?q=1", "/": "/xyz/", "/xyz": "/xyz/xyz"} {
		got, err := harness.Do(httpAddr, harness.Request{Scheme: "http", Host: "rewrite.test", Path: path})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != 200 || got.Reply.URI != want {
			t.Errorf("rewrite.test%s: %d, upstream URI %q, want 200 and %q", path, got.Status, got.Reply.URI, want)
		}
	}
	// CORS wildcards: "*" without credentials, the request's own
	// values with them (browsers refuse "*" with credentials).
	// A wildcard origin matches any number of labels; a preflight from
	// an origin not allowed is answered by nginx, without CORS headers.
	for _, c := range []struct {
		path, method, origin string
		want                 map[string]string
		service              string
	}{
		{"/cors-cred", "OPTIONS", "https://o.test", map[string]string{"Access-Control-Allow-Origin": "https://o.test", "Access-Control-Allow-Methods": "PUT",
			"Access-Control-Allow-Headers": "x-a, x-b", "Access-Control-Allow-Credentials": "true"}, ""},
		{"/cors-cred", "GET", "https://o.test", map[string]string{"Access-Control-Allow-Origin": "https://o.test", "Access-Control-Allow-Credentials": "true"}, "tea"},
		{"/cors-any", "OPTIONS", "https://o.test", map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "*",
			"Access-Control-Allow-Headers": "*", "Access-Control-Allow-Credentials": ""}, ""},
		{"/cors-any", "GET", "https://o.test", map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": ""}, "tea"},
		{"/cors-list", "OPTIONS", "https://a.b.bar.test", map[string]string{"Access-Control-Allow-Origin": "https://a.b.bar.test", "Access-Control-Allow-Methods": "GET"}, ""},
		{"/cors-list", "OPTIONS", "https://bar.test", map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": ""}, ""},
		{"/cors-list", "GET", "https://bar.test", map[string]string{"Access-Control-Allow-Origin": ""}, "tea"},
	} {
		got, err := harness.Do(httpAddr, harness.Request{Method: c.method, Scheme: "http", Host: "app.test", Path: c.path,
			Header: map[string]string{"Origin": c.origin, "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "x-a, x-b"}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Reply.Service != c.service || c.method == "OPTIONS" && got.Status != 204 {
			t.Errorf("%s %s from %s: %d from %q, want the backend %q (204 for a preflight)", c.method, c.path, c.origin, got.Status, got.Reply.Service, c.service)
		}
		for name, want := range c.want {
			if v := got.Header.Get(name); v != want {
				t.Errorf("%s %s from %s: %s %q, want %q", c.method, c.path, c.origin, name, v, want)
			}
		}
	}
	// A new weight is pushed to the Lua balancer, without a reload.
	if c.Metric("causeway_dataplane_mode", `mode="lua"`) == 1 {
		reloads := reloadsAfterGateway(t, c)
		c.WriteManifest("gateway.yaml", fmt.Sprintf(gatewayManifests, httpPort, httpsPort, 1, 0))
		eventually(t, 10*time.Second, func() error {
			return check(row{"http", "app.test", "/split", nil, 200, "tea", ""})
		})
		if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
			t.Errorf("an HTTPRoute weight change reloaded nginx: %v reloads, were %v", got, reloads)
		}
	}
	// The Ingress ports know nothing of the Gateway's hosts.
	if got := c.Get("app.test", "/a"); got.Status != 404 {
		t.Errorf("app.test on the Ingress HTTP port: %d, want 404", got.Status)
	}
}

// reloadsAfterGateway waits until the controller counts the reloads of
// its start and of a Gateway's arrival (confirmed, which may be after
// the first requests are served) and returns the count, for a test that
// then checks a change is pushed without a reload.
func reloadsAfterGateway(t *testing.T, c *controller) float64 {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		if got := c.Metric("causeway_nginx_reloads_total"); got < 2 {
			return fmt.Errorf("%v reloads counted", got)
		}
		return nil
	})
	return c.Metric("causeway_nginx_reloads_total")
}
