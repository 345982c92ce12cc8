package integration

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/spec"
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
  - path: /menu
    route: menu
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServerRoute
metadata: {name: menu, namespace: default}
spec:
  host: cafe.test
  upstreams:
  - {name: tea, service: tea, port: 80}
  subroutes:
  - path: /menu
    action: {pass: tea}
  - path: =/menu/today
    action: {return: {code: 204}}
---
`

// TestVirtualServerAgainstNginx serves a VirtualServer from the files
// source through real nginx: nginx's string prefixes, exact and regex
// routes in nginx's order, redirect and return actions, a prefix delegated
// to a VirtualServerRoute, TLS with the HTTPS redirect; an Ingress for the same host, younger, does not take it.
func TestVirtualServerAgainstNginx(t *testing.T) {
	t.Parallel()
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
		{"/menu", 200, "tea"}, {"/menu/drinks", 200, "tea"}, {"/menu/today", 204, ""},
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
	// NGINX Ingress Controller's redirect: 301 by default, whatever
	// http-redirect-code says, to the host and URI as sent, without the
	// HTTPS listener's port.
	if r := c.Get("cafe.test", "/tea/"); r.Status != 301 || r.Location != "https://cafe.test/tea/" {
		t.Errorf("http://cafe.test/tea/: %d to %q, want NIC's HTTPS redirect", r.Status, r.Location)
	}
	if !strings.Contains(c.log.String(), `host \"cafe.test\" belongs to VirtualServer default/cafe`) {
		t.Errorf("the younger Ingress's collision is not logged:\n%s", c.log.String())
	}
}

const policiesManifest = `apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: deny-local, namespace: default}
spec:
  accessControl: {deny: [127.0.0.0/8]}
---
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: users, namespace: default}
spec:
  basicAuth: {secret: users, realm: cafe}
---
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: slow, namespace: default}
spec:
  rateLimit: {rate: 1r/m, key: "${binary_remote_addr}", burst: 2, noDelay: true}
---
apiVersion: v1
kind: Secret
metadata: {name: users, namespace: default}
type: nginx.org/htpasswd
stringData:
  htpasswd: "bob:%s\n"
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: guarded, namespace: default}
spec:
  host: guarded.test
  upstreams: [{name: tea, service: tea, port: 80}]
  routes:
  - {path: /open, action: {pass: tea}}
  - {path: /denied, action: {pass: tea}, policies: [{name: deny-local}]}
  - {path: /auth, action: {pass: tea}, policies: [{name: users}]}
  - {path: /limited, action: {pass: tea}, policies: [{name: slow}]}
  - {path: /missing, action: {pass: tea}, policies: [{name: nope}]}
---
`

// TestVirtualServerPoliciesAgainstNginx: accessControl, basicAuth and
// rateLimit Policies through real nginx, with the model values the
// annotations use; a missing Policy answers 500.
func TestVirtualServerPoliciesAgainstNginx(t *testing.T) {
	t.Parallel()
	tea := startBackend(t, "tea")
	c := startController(t, map[string]string{
		"class.yaml":    ingressClass,
		"services.yaml": serviceYAML("default", "tea", 80, tea),
		"guarded.yaml":  fmt.Sprintf(policiesManifest, spec.SHAHash("secret")),
	})
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	do := func(path string, header map[string]string) int {
		t.Helper()
		r, err := harness.Do(addr, harness.Request{Method: "GET", Scheme: "http", Host: "guarded.test", Path: path, Header: header})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status
	}
	for _, tc := range []struct {
		path   string
		header map[string]string
		want   int
	}{
		{"/open", nil, 200}, {"/denied", nil, 403}, {"/auth", nil, 401},
		{"/auth", spec.BasicCredentials("bob", "wrong"), 401}, {"/auth", spec.BasicCredentials("bob", "secret"), 200},
		{"/missing", nil, 500},
	} {
		if got := do(tc.path, tc.header); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.path, got, tc.want)
		}
	}
	// 1 request a minute with a burst of 2: the fourth within a second
	// is refused with the ConfigMap's limit-req-status-code (503).
	var got []int
	for range 4 {
		got = append(got, do("/limited", nil))
	}
	if got[0] != 200 || got[3] != 503 {
		t.Errorf("rate-limited statuses %v, want 200 first and 503 last", got)
	}
}

const splitVirtualServer = `apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: split, namespace: default}
spec:
  host: split.test
  upstreams:
  - {name: tea, service: tea, port: 80}
  - {name: coffee, service: coffee, port: 80}
  routes:
  - path: /
    splits:
    - {weight: %d, action: {pass: tea}}
    - {weight: %d, action: {pass: coffee}}
  - path: /v
    matches:
    - conditions: [{header: X-Version, value: v2}]
      action: {pass: coffee}
    action: {pass: tea}
---
`

// TestVirtualServerSplitWithoutReload: two splits share a route by weight
// (the tolerance is wide: 200 requests at 50% land between 30% and 70%),
// a header match chooses an upstream, and a new weight applies without a
// reload, through the Lua balancer.
func TestVirtualServerSplitWithoutReload(t *testing.T) {
	t.Parallel()
	tea, coffee := startBackend(t, "tea"), startBackend(t, "coffee")
	c := startController(t, map[string]string{
		"class.yaml":    ingressClass,
		"services.yaml": serviceYAML("default", "tea", 80, tea) + serviceYAML("default", "coffee", 80, coffee),
		"split.yaml":    fmt.Sprintf(splitVirtualServer, 50, 50),
	})
	if c.Metric("causeway_dataplane_mode", `mode="lua"`) != 1 {
		t.Skip("the Lua data plane is not available")
	}
	count := func(n int) map[string]int {
		got := map[string]int{}
		for range n {
			got[c.Get("split.test", "/").Reply.Service]++
		}
		return got
	}
	if got := count(200); got["tea"] < 60 || got["coffee"] < 60 {
		t.Errorf("50/50 split of 200 requests: %v, want each at least 60", got)
	}
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	for _, tc := range []struct {
		header map[string]string
		want   string
	}{{nil, "tea"}, {map[string]string{"X-Version": "v2"}, "coffee"}, {map[string]string{"X-Version": "v3"}, "tea"}} {
		r, err := harness.Do(addr, harness.Request{Method: "GET", Scheme: "http", Host: "split.test", Path: "/v", Header: tc.header})
		if err != nil || r.Reply.Service != tc.want {
			t.Errorf("/v with %v: %q (%v), want %q", tc.header, r.Reply.Service, err, tc.want)
		}
	}
	reloads := c.Metric("causeway_nginx_reloads_total")
	c.WriteManifest("split.yaml", fmt.Sprintf(splitVirtualServer, 0, 100))
	eventually(t, 10*time.Second, func() error {
		if got := count(20); got["coffee"] != 20 {
			return fmt.Errorf("0/100 split: %v", got)
		}
		return nil
	})
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Errorf("a split weight change reloaded nginx: %v reloads, were %v", got, reloads)
	}
}
