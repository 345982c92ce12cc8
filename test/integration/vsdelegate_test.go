package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const delegatingVirtualServer = `apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: cafe, namespace: cafe}
spec:
  host: cafe.test
  upstreams:
  - {name: web, service: web, port: 80}
  routes:
  - path: /
    action: {pass: web}
  - path: /drinks
    routeSelector:
      matchLabels: {app: drinks}
  - path: =/menu
    route: menu
  - path: ~* ^/item/[0-9]+$
    route: items
  - path: ~* ^/item/
    action: {return: {code: 404, body: "no such item"}}
  - path: ~* ^/item-[a-z]+$
    route: items
  - path: /guarded
    route: guarded
    policies: [{name: deny-local}]
    errorPages:
    - {codes: [403], return: {body: "closed"}}
---
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: deny-local, namespace: cafe}
spec:
  accessControl: {deny: [127.0.0.0/8, "::1"]}
---
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: generous, namespace: cafe}
spec:
  rateLimit: {rate: 100r/s, key: "${binary_remote_addr}"}
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServerRoute
metadata: {name: guarded, namespace: cafe}
spec:
  host: cafe.test
  upstreams:
  - {name: web, service: web, port: 80}
  subroutes:
  - path: /guarded/closed
    action: {pass: web}
  - path: /guarded/open
    action: {pass: web}
    policies: [{name: generous}]
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServerRoute
metadata: {name: menu, namespace: cafe}
spec:
  host: cafe.test
  subroutes:
  - path: =/menu
    action: {return: {code: 200, body: "today: tea"}}
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServerRoute
metadata: {name: items, namespace: cafe}
spec:
  host: cafe.test
  upstreams:
  - {name: web, service: web, port: 80}
  subroutes:
  - path: ~* ^/item-[a-z]+$
    action: {pass: web}
  - path: ~* ^/item/[0-9]+$
    action: {return: {code: 200, body: "item"}}
---
`

// drinkRoute is a VirtualServerRoute in ns, labelled labels, passing path
// to the Service svc of its namespace.
func drinkRoute(ns, name, labels, path, svc string) string {
	return fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: VirtualServerRoute
metadata: {name: %s, namespace: %s, labels: {%s}}
spec:
  host: cafe.test
  upstreams:
  - {name: u, service: %s, port: 80}
  subroutes:
  - path: %s
    action: {pass: u}
---
`, name, ns, labels, svc, path)
}

// TestVirtualServerDelegationAgainstNginx: a routeSelector serves the
// VirtualServerRoutes of its host carrying its labels, from several
// namespaces, leaving out one invalid for its path; a label change is
// followed; exact and regex paths delegate to subroutes of the same path,
// regexes tried in the VirtualServer's order; a delegating route's
// policies and errorPages serve its subroutes without their own.
func TestVirtualServerDelegationAgainstNginx(t *testing.T) {
	t.Parallel()
	tea, coffee, web := startBackend(t, "tea"), startBackend(t, "coffee"), startBackend(t, "web")
	c := startController(t, map[string]string{
		"class.yaml": ingressClass,
		"services.yaml": serviceYAML("tea", "tea", 80, tea) + serviceYAML("coffee", "coffee", 80, coffee) +
			serviceYAML("cafe", "web", 80, web),
		"cafe.yaml": delegatingVirtualServer,
		"drinks.yaml": drinkRoute("tea", "tea", "app: drinks", "/drinks/tea", "tea") +
			drinkRoute("coffee", "coffee", "app: drinks, roast: dark", "/drinks/coffee", "coffee") +
			drinkRoute("cafe", "juice", "app: drinks", "/juice", "web") +
			drinkRoute("coffee", "decaf", "app: other", "/drinks/decaf", "coffee"),
	})
	for _, tc := range []struct {
		path, service string
		status        int
		body          string
	}{
		{"/drinks/tea", "tea", 200, ""}, {"/drinks/coffee/cup", "coffee", 200, ""},
		{"/drinks/decaf", "web", 200, ""}, {"/juice", "web", 200, ""}, {"/drinks", "web", 200, ""},
		{"/menu", "", 200, "today: tea"}, {"/menu/x", "web", 200, ""},
		{"/item/42", "", 200, "item"}, {"/ITEM/42", "", 200, "item"}, {"/item/x", "", 404, "no such item"},
		{"/item-abc", "web", 200, ""},
		// The route's policies and errorPages go to the subroute without
		// its own; one with a Policy of another kind takes none.
		{"/guarded/closed", "", 403, "closed"}, {"/guarded/open", "web", 200, ""},
	} {
		r := c.Get("cafe.test", tc.path)
		if r.Status != tc.status || r.Reply.Service != tc.service || (tc.body != "" && r.Body != tc.body) {
			t.Errorf("%s: %d from %q (%q), want %d from %q (%q)", tc.path, r.Status, r.Reply.Service, r.Body, tc.status, tc.service, tc.body)
		}
	}
	if !strings.Contains(c.log.String(), "VirtualServerRoute cafe/juice that routeSelector selects is invalid") {
		t.Errorf("the invalid selected VirtualServerRoute is not reported:\n%s", c.log.String())
	}
	// decaf takes the label: it is selected without further ado.
	c.WriteManifest("drinks.yaml", drinkRoute("tea", "tea", "app: drinks", "/drinks/tea", "tea")+
		drinkRoute("coffee", "coffee", "app: drinks, roast: dark", "/drinks/coffee", "coffee")+
		drinkRoute("coffee", "decaf", "app: drinks", "/drinks/decaf", "coffee"))
	eventually(t, 10*time.Second, func() error {
		if r := c.Get("cafe.test", "/drinks/decaf"); r.Reply.Service != "coffee" {
			return fmt.Errorf("/drinks/decaf: %d from %q, want coffee", r.Status, r.Reply.Service)
		}
		return nil
	})
	if r := c.Get("cafe.test", "/drinks/tea"); r.Reply.Service != "tea" {
		t.Errorf("/drinks/tea after the change: %d from %q", r.Status, r.Reply.Service)
	}
}
