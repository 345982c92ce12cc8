package integration

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/causeway/causeway/test/harness"
)

// startCountingBackend runs a backend that answers "n=N", N counting the
// requests it got, with no caching header of its own.
func startCountingBackend(t *testing.T, service string) (*backend, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	b := startHandlerBackend(t, service, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "n=%d", n.Add(1))
	}))
	return b, &n
}

const cacheVirtualServer = `apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: pages, namespace: default}
spec:
  cache:
    cacheZoneName: pages
    cacheZoneSize: 1m
    allowedCodes: [200]
    time: 1m
    cacheKey: "$scheme$host$request_uri|$cookie_session"
    conditions: {bypass: ["$http_x_bypass"]}
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: cache, namespace: default}
spec:
  host: cache.test
  upstreams: [{name: app, service: app, port: 80}]
  routes:
  - path: /cached
    policies: [{name: pages}]
    action: {pass: app}
  - path: /fresh
    action: {pass: app}
---
`

// TestVirtualServerCachePolicyAgainstNginx: a cache Policy's route answers
// a repeated request from nginx's cache, keeps users apart by the key's
// cookie, lets a bypass condition through to the backend, and leaves the
// VirtualServer's other routes uncached; the zone's files are under the
// state directory.
func TestVirtualServerCachePolicyAgainstNginx(t *testing.T) {
	t.Parallel()
	app, n := startCountingBackend(t, "app")
	c := startController(t, map[string]string{
		"class.yaml": ingressClass,
		"app.yaml":   serviceYAML("default", "app", 80, app),
		"cache.yaml": cacheVirtualServer,
	})
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	get := func(path string, header map[string]string) string {
		t.Helper()
		r, err := harness.Do(addr, harness.Request{Method: "GET", Scheme: "http", Host: "cache.test", Path: path, Header: header})
		if err != nil || r.Status != 200 {
			t.Fatalf("GET %s: %d (%v)", path, r.Status, err)
		}
		return r.Body
	}
	for _, step := range []struct {
		name, path string
		header     map[string]string
		want       string
	}{
		{"the first request reaches the backend", "/cached?a=1", nil, "n=1"},
		{"the same request is answered from the cache", "/cached?a=1", nil, "n=1"},
		{"another query is another entry", "/cached?a=2", nil, "n=2"},
		{"another session cookie is another entry", "/cached?a=1", map[string]string{"Cookie": "session=b"}, "n=3"},
		{"that user's entry is kept too", "/cached?a=1", map[string]string{"Cookie": "session=b"}, "n=3"},
		{"the bypass condition goes to the backend", "/cached?a=1", map[string]string{"X-Bypass": "1"}, "n=4"},
		{"a route without the Policy is not cached", "/fresh", nil, "n=5"},
		{"still not", "/fresh", nil, "n=6"},
		// As nginx's proxy_cache_bypass does, the bypassing response
		// replaced the entry (proxy_no_cache would keep it out).
		{"the bypassing response is the entry now", "/cached?a=1", nil, "n=4"},
	} {
		if got := get(step.path, step.header); got != step.want {
			t.Errorf("%s: %q, want %q", step.name, got, step.want)
		}
	}
	if got := n.Load(); got != 6 {
		t.Errorf("the backend got %d requests, want 6", got)
	}
	dirs, err := filepath.Glob(filepath.Join(c.StateDir, "tmp", "cache-cw_*_pages"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("cache directories %v (%v), want one", dirs, err)
	}
	if st, err := os.Stat(dirs[0]); err != nil || !st.IsDir() {
		t.Errorf("cache directory: %v", err)
	}
}
