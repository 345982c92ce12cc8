package integration

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// TestVirtualServerListenersAgainstNginx: VirtualServers on the
// GlobalConfiguration's HTTP listeners answer on their listener's port
// (bound on --listen-address, or on the listener's ipv4) and nowhere
// else: not on the controller's HTTP port, and not on the other
// VirtualServer's listener, whose default server answers 404.
func TestVirtualServerListenersAgainstNginx(t *testing.T) {
	t.Parallel()
	tea, coffee := startBackend(t, "tea"), startBackend(t, "coffee")
	c := startController(t, map[string]string{
		"class.yaml":    ingressClass,
		"services.yaml": serviceYAML("default", "tea", 80, tea) + serviceYAML("default", "coffee", 80, coffee),
	}, "--global-configuration", "causeway/listeners")
	pinned := loopbackIP()
	teaPort, coffeePort := freePort(t, c.IP), freePort(t, pinned)
	gc := fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: GlobalConfiguration
metadata: {name: listeners, namespace: causeway}
spec:
  listeners:
  - {name: tea-web, port: %d, protocol: HTTP}
  - {name: coffee-web, port: %d, protocol: HTTP, ipv4: %s}
`, teaPort, coffeePort, pinned)
	vs := func(name, listener string) string {
		return fmt.Sprintf(`---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: %[1]s, namespace: default}
spec:
  host: %[1]s.test
  listener: {http: %[2]s}
  upstreams: [{name: up, service: %[1]s, port: 80}]
  routes: [{path: /, action: {pass: up}}]
`, name, listener)
	}
	c.WriteManifest("gc.yaml", gc+vs("tea", "tea-web")+vs("coffee", "coffee-web"))
	eventually(t, 10*time.Second, func() error {
		r, err := harness.Get("http", net.JoinHostPort(c.IP, strconv.Itoa(teaPort)), "tea.test", "/")
		if err == nil && r.Status != 200 {
			err = fmt.Errorf("status %d", r.Status)
		}
		return err
	})
	get := func(addr string, port int, host string) result {
		t.Helper()
		r, err := harness.Get("http", net.JoinHostPort(addr, strconv.Itoa(port)), host, "/")
		if err != nil {
			t.Fatalf("GET http://%s/ at %s:%d: %v", host, addr, port, err)
		}
		return r
	}
	for _, tc := range []struct {
		addr    string
		port    int
		host    string
		status  int
		service string
	}{
		{c.IP, teaPort, "tea.test", 200, "tea"},
		{pinned, coffeePort, "coffee.test", 200, "coffee"},
		{c.IP, teaPort, "coffee.test", 404, ""},
		{pinned, coffeePort, "tea.test", 404, ""},
		{c.IP, c.HTTPPort, "tea.test", 404, ""},
		{c.IP, c.HTTPPort, "coffee.test", 404, ""},
	} {
		if r := get(tc.addr, tc.port, tc.host); r.Status != tc.status || r.Reply.Service != tc.service {
			t.Errorf("http://%s/ at %s:%d: %d from %q, want %d from %q", tc.host, tc.addr, tc.port, r.Status, r.Reply.Service, tc.status, tc.service)
		}
	}
	// The pinned listener is bound on its ipv4 only.
	if _, err := harness.Get("http", net.JoinHostPort(c.IP, strconv.Itoa(coffeePort)), "coffee.test", "/"); err == nil {
		t.Errorf("listener coffee-web answers on %s, want only %s", c.IP, pinned)
	}
}
