package integration

import (
	"net"
	"slices"
	"strconv"
	"testing"

	"github.com/causeway/causeway/test/harness"
)

const rateLimitManifest = `apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: reject-429, namespace: default}
spec:
  rateLimit: {rate: 1r/m, key: "${binary_remote_addr}", burst: 1, noDelay: true, rejectCode: 429, logLevel: warn, zoneSize: 1m}
---
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: dry, namespace: default}
spec:
  rateLimit: {rate: 1r/m, key: "${binary_remote_addr}", dryRun: true}
---
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: per-key, namespace: default}
spec:
  rateLimit: {rate: 1r/m, key: "${http_x_api_key}", rejectCode: 429}
---
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: spaced, namespace: default}
spec:
  rateLimit: {rate: 1r/m, key: "${binary_remote_addr}", burst: 3, delay: 1}
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: limits, namespace: default}
spec:
  host: limits.test
  upstreams: [{name: tea, service: tea, port: 80}]
  routes:
  - {path: /reject, action: {pass: tea}, policies: [{name: reject-429}]}
  - {path: /dry, action: {pass: tea}, policies: [{name: dry}]}
  - {path: /key, action: {pass: tea}, policies: [{name: per-key}]}
  - {path: /spaced, action: {pass: tea}, policies: [{name: spaced}]}
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: forwarded, namespace: default}
spec:
  host: forwarded.test
  tls:
    secret: ""
    redirect: {enable: true, code: 307, basedOn: x-forwarded-proto}
  upstreams: [{name: tea, service: tea, port: 80}]
  routes:
  - {path: /, action: {pass: tea}}
---
`

// TestVirtualServerRateLimitFieldsAgainstNginx serves a rateLimit Policy's
// fields through real nginx: rejectCode, dryRun, a key other than the
// client's address, delay and zoneSize; and a tls.redirect based on
// X-Forwarded-Proto.
func TestVirtualServerRateLimitFieldsAgainstNginx(t *testing.T) {
	t.Parallel()
	tea := startBackend(t, "tea")
	c := startController(t, map[string]string{
		"class.yaml":    ingressClass,
		"services.yaml": serviceYAML("default", "tea", 80, tea),
		"limits.yaml":   rateLimitManifest,
	})
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	do := func(host, path string, header map[string]string) harness.Result {
		t.Helper()
		r, err := harness.Do(addr, harness.Request{Method: "GET", Scheme: "http", Host: host, Path: path, Header: header})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	statuses := func(path string, n int, header map[string]string) []int {
		var out []int
		for range n {
			out = append(out, do("limits.test", path, header).Status)
		}
		return out
	}
	// 1 a minute with a burst of 1: the third is refused with rejectCode.
	if got := statuses("/reject", 3, nil); !slices.Equal(got, []int{200, 200, 429}) {
		t.Errorf("/reject: %v, want 200 200 429", got)
	}
	// dryRun counts without refusing.
	if got := statuses("/dry", 4, nil); !slices.Equal(got, []int{200, 200, 200, 200}) {
		t.Errorf("/dry: %v, want every request served", got)
	}
	// Counted per X-API-Key: another key has its own count, and requests
	// without one are not counted.
	a, b := map[string]string{"X-API-Key": "a"}, map[string]string{"X-API-Key": "b"}
	if got := statuses("/key", 2, a); !slices.Equal(got, []int{200, 429}) {
		t.Errorf("/key with key a: %v, want 200 429", got)
	}
	if got := statuses("/key", 1, b); !slices.Equal(got, []int{200}) {
		t.Errorf("/key with key b: %v, want 200", got)
	}
	if got := statuses("/key", 3, nil); !slices.Equal(got, []int{200, 200, 200}) {
		t.Errorf("/key without a key: %v, want every request served", got)
	}
	// A burst of 3 with delay 1: the first excess request is served at
	// once, the next would wait (20 s at 1r/m, past the client's timeout,
	// so it is not asked); over the burst is refused with 503.
	if got := statuses("/spaced", 2, nil); !slices.Equal(got, []int{200, 200}) {
		t.Errorf("/spaced: %v, want 200 200", got)
	}
	// basedOn x-forwarded-proto: whoever says http is redirected; no
	// header, no redirect.
	if r := do("forwarded.test", "/cup", map[string]string{"X-Forwarded-Proto": "http"}); r.Status != 307 || r.Location != "https://forwarded.test/cup" {
		t.Errorf("X-Forwarded-Proto http: %d to %q, want 307 to https://forwarded.test/cup", r.Status, r.Location)
	}
	if r := do("forwarded.test", "/cup", nil); r.Status != 200 {
		t.Errorf("no X-Forwarded-Proto: %d, want 200", r.Status)
	}
}
