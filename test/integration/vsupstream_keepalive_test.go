package integration

import (
	"net/http"
	"sync"
	"testing"
)

const keepaliveVirtualServer = `apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: pools, namespace: default}
spec:
  host: pools.test
  upstreams:
  - {name: pooled, service: pooled, port: 80, keepalive: 2}
  - {name: fresh, service: fresh, port: 80, keepalive: 0}
  - {name: shared, service: shared, port: 80}
  routes:
  - path: /pooled
    action: {pass: pooled}
  - path: /fresh
    action: {pass: fresh}
  - path: /shared
    action: {pass: shared}
---
`

// TestVirtualServerUpstreamKeepaliveAgainstNginx: an upstream's keepalive
// decides whether nginx reuses its connections to the endpoints: with 2,
// sequential requests share one connection; with 0 each request opens its
// own; without it, the ConfigMap's pool serves. The backends tell
// connections apart by nginx's source address and port.
func TestVirtualServerUpstreamKeepaliveAgainstNginx(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	peers := map[string]map[string]bool{}
	handler := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if peers[name] == nil {
				peers[name] = map[string]bool{}
			}
			peers[name][r.RemoteAddr] = true
			mu.Unlock()
			w.Write([]byte(name))
		})
	}
	m := ingressClass
	for _, name := range []string{"pooled", "fresh", "shared"} {
		b := startHandlerBackend(t, name, handler(name))
		m += serviceYAML("default", name, 80, b)
	}
	m += keepaliveVirtualServer + configMapYAML(map[string]string{"worker-processes": "1"})
	c := startController(t, map[string]string{"manifests.yaml": m})

	const n = 20
	for _, name := range []string{"pooled", "fresh", "shared"} {
		for i := range n {
			if r := c.Get("pools.test", "/"+name); r.Status != 200 || r.Body != name {
				t.Fatalf("%s request %d: status %d body %q", name, i, r.Status, r.Body)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got := len(peers["pooled"]); got != 1 {
		t.Errorf("keepalive 2: %d requests came over %d connections, want 1", n, got)
	}
	if got := len(peers["fresh"]); got != n {
		t.Errorf("keepalive 0: %d requests came over %d connections, want %d", n, got, n)
	}
	if got := len(peers["shared"]); got != 1 {
		t.Errorf("no keepalive (the ConfigMap's pool): %d requests came over %d connections, want 1", n, got)
	}
}
