package integration

import (
	"fmt"
	"strings"
	"testing"
)

// TestVirtualServerUpstreamFieldsAgainstNginx: an upstream with lb-method
// "hash $request_uri consistent" sends each path to one endpoint while
// the paths spread over all of them, and use-cluster-ip proxies to the
// Service's cluster IP instead of its endpoints.
func TestVirtualServerUpstreamFieldsAgainstNginx(t *testing.T) {
	t.Parallel()
	eps := startBackends(t, "web", 3)
	// The cluster IP answers as another service on a loopback address,
	// so a reply says which way the request went.
	vip := startBackend(t, "cluster-ip")
	svc := strings.Replace(serviceYAML("default", "web", vip.Port, eps...), "spec:\n  ports:", "spec:\n  clusterIP: "+vip.IP+"\n  ports:", 1)
	vs := fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: up, namespace: default}
spec:
  host: up.test
  upstreams:
  - {name: hashed, service: web, port: %[1]d, lb-method: "hash $request_uri consistent"}
  - {name: vip, service: web, port: %[1]d, use-cluster-ip: true}
  routes:
  - {path: /hashed, action: {pass: hashed}}
  - {path: /vip, action: {pass: vip}}
`, vip.Port)
	c := startController(t, map[string]string{"class.yaml": ingressClass, "web.yaml": svc, "vs.yaml": vs})
	seen := map[string]bool{}
	for i := range 30 {
		path := fmt.Sprintf("/hashed/%d", i)
		first := c.Get("up.test", path)
		if first.Status != 200 || first.Reply.Service != "web" {
			t.Fatalf("%s: %d from %q", path, first.Status, first.Reply.Service)
		}
		for range 3 {
			if r := c.Get("up.test", path); r.Reply.Endpoint != first.Reply.Endpoint {
				t.Errorf("%s went to %s, then to %s: the hash does not hold", path, first.Reply.Endpoint, r.Reply.Endpoint)
			}
		}
		seen[first.Reply.Endpoint] = true
	}
	if len(seen) < 2 {
		t.Errorf("30 paths all went to %v: not hashed over the endpoints", seen)
	}
	for range 5 {
		if r := c.Get("up.test", "/vip"); r.Status != 200 || r.Reply.Service != "cluster-ip" {
			t.Errorf("/vip: %d from %q, want the cluster IP", r.Status, r.Reply.Service)
		}
	}
}
