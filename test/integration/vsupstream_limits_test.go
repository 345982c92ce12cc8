package integration

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

const limitsVirtualServer = `apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: limits, namespace: default}
spec:
  host: limits.test
  upstreams:
  - {name: app, service: app, port: 80, max-fails: 1, fail-timeout: 60s}
  - {name: slow, service: slow, port: 80, max-conns: 1}
  routes:
  - path: /app
    action: {pass: app}
  - path: /slow
    action: {pass: slow}
---
`

// TestVirtualServerUpstreamLimitsAgainstNginx: max-fails takes an
// endpoint whose attempts fail out of the rotation after one failure
// (the retry serves that request), and max-conns bounds the requests in
// flight to an endpoint, the next one getting 502, as nginx's
// "no live upstreams". One worker: the counts are per worker.
func TestVirtualServerUpstreamLimitsAgainstNginx(t *testing.T) {
	t.Parallel()
	live := startBackend(t, "app")
	ip := loopbackIP()
	_, attempts := harness.ClosingListener(t, ip, live.Port)
	failing := &backend{Service: "app", IP: ip, Port: live.Port}
	release := make(chan struct{})
	var slowHits atomic.Int64
	slow := startHandlerBackend(t, "slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slowHits.Add(1)
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		w.Write([]byte("slow"))
	}))
	m := ingressClass + serviceYAML("default", "app", 80, failing, live) + serviceYAML("default", "slow", 80, slow) +
		limitsVirtualServer + configMapYAML(map[string]string{"worker-processes": "1"})
	c := startController(t, map[string]string{"manifests.yaml": m})
	get := func(path string) result { return c.Get("limits.test", path) }

	for i := range 20 {
		if r := get("/app"); r.Status != 200 {
			t.Fatalf("request %d: status %d, want 200 (a failed attempt is retried on the live endpoint)", i, r.Status)
		}
	}
	if n := attempts.Load(); n != 1 {
		t.Errorf("%d attempts on the failing endpoint, want 1: max-fails 1 takes it out for fail-timeout", n)
	}

	var wg sync.WaitGroup
	wg.Add(1)
	var first result
	var firstErr error
	go func() { defer wg.Done(); first, firstErr = c.get("http", "limits.test", "/slow") }()
	deadline := time.Now().Add(5 * time.Second)
	for slowHits.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r := get("/slow"); r.Status != 502 {
		t.Errorf("a second request while max-conns 1 is in flight: status %d, want 502", r.Status)
	}
	close(release)
	wg.Wait()
	if firstErr != nil || first.Status != 200 {
		t.Errorf("the request in flight: status %d, want 200", first.Status)
	}
	if r := get("/slow"); r.Status != 200 {
		t.Errorf("after it finished: status %d, want 200", r.Status)
	}
	for deadline := time.Now().Add(3 * time.Second); !strings.Contains(c.log.String(), "default/slow/80: no live endpoint"); {
		if time.Now().After(deadline) {
			t.Error("no log line names the backend without a live endpoint")
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}
