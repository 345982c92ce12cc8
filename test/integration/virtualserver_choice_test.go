package integration

import (
	"fmt"
	"math"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

const choiceVirtualServer = `apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: choice, namespace: default}
spec:
  host: choice.test
  upstreams:
  - {name: tea, service: tea, port: 80}
  - {name: coffee, service: coffee, port: 80}
  - {name: juice, service: juice, port: 80}
  routes:
  - path: /
    splits:
    - {weight: %d, action: {pass: tea}}
    - {weight: %d, action: {pass: coffee}}
    - {weight: %d, action: {pass: juice}}
  - path: /m
    matches:
    - conditions: [{header: X-Version, value: %s}, {argument: mode, value: "!off"}]
      action: {pass: coffee}
    - conditions: [{cookie: user, value: beta}]
      action: {pass: juice}
    - conditions: [{variable: $request_method, value: POST}]
      splits:
      - {weight: 0, action: {pass: tea}}
      - {weight: 100, action: {pass: juice}}
    action: {pass: tea}
---
`

// TestVirtualServerChoiceAgainstNginx: three splits share a route by
// weight, and matches on a header, an argument (negated), a cookie and a
// variable choose in order, through the Lua balancer; a new weight
// applies without a reload.
func TestVirtualServerChoiceAgainstNginx(t *testing.T) {
	t.Parallel()
	tea, coffee, juice := startBackend(t, "tea"), startBackend(t, "coffee"), startBackend(t, "juice")
	c := startController(t, map[string]string{
		"class.yaml":    ingressClass,
		"services.yaml": serviceYAML("default", "tea", 80, tea) + serviceYAML("default", "coffee", 80, coffee) + serviceYAML("default", "juice", 80, juice),
		"choice.yaml":   fmt.Sprintf(choiceVirtualServer, 20, 30, 50, "v2"),
	})
	if c.Metric("causeway_dataplane_mode", `mode="lua"`) != 1 {
		t.Skip("the Lua data plane is not available")
	}
	count := func(n int) map[string]int {
		got := map[string]int{}
		for range n {
			got[c.Get("choice.test", "/").Reply.Service]++
		}
		return got
	}
	// 300 requests; each share within 4 standard deviations of its weight
	// (20%: 60 ± 28, 30%: 90 ± 32, 50%: 150 ± 35).
	const total = 300
	got := count(total)
	for name, w := range map[string]float64{"tea": 0.2, "coffee": 0.3, "juice": 0.5} {
		if sd := math.Sqrt(total * w * (1 - w)); math.Abs(float64(got[name])-total*w) > 4*sd {
			t.Errorf("20/30/50 split of %d requests: %v; %s is off by more than %.0f", total, got, name, 4*sd)
		}
	}
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	for _, tc := range []struct {
		method, path string
		header       map[string]string
		want         string
	}{
		{"GET", "/m", nil, "tea"},
		{"GET", "/m", map[string]string{"X-Version": "V2"}, "coffee"},                        // values compare ignoring case
		{"GET", "/m?mode=off", map[string]string{"X-Version": "v2"}, "tea"},                  // the negated argument fails
		{"GET", "/m?mode=on", map[string]string{"X-Version": "v2"}, "coffee"},                // ... and holds
		{"GET", "/m", map[string]string{"Cookie": "a=1; user=beta"}, "juice"},                // the second match
		{"GET", "/m", map[string]string{"X-Version": "v2", "Cookie": "user=beta"}, "coffee"}, // the first match wins
		{"POST", "/m", nil, "juice"},                                                         // a variable, and splits in a match
	} {
		r, err := harness.Do(addr, harness.Request{Method: tc.method, Scheme: "http", Host: "choice.test", Path: tc.path, Header: tc.header})
		if err != nil || r.Reply.Service != tc.want {
			t.Errorf("%s %s with %v: %d from %q (%v), want %q", tc.method, tc.path, tc.header, r.Status, r.Reply.Service, err, tc.want)
		}
	}
	// New weights and a new match value apply without a reload.
	reloads := c.Metric("causeway_nginx_reloads_total")
	c.WriteManifest("choice.yaml", fmt.Sprintf(choiceVirtualServer, 0, 0, 100, "v3"))
	eventually(t, 10*time.Second, func() error {
		if got := count(20); got["juice"] != 20 {
			return fmt.Errorf("0/0/100 split: %v", got)
		}
		return nil
	})
	for value, want := range map[string]string{"v3": "coffee", "v2": "tea"} {
		r, err := harness.Do(addr, harness.Request{Method: "GET", Scheme: "http", Host: "choice.test", Path: "/m", Header: map[string]string{"X-Version": value}})
		if err != nil || r.Reply.Service != want {
			t.Errorf("after the change, /m with X-Version %s: %q (%v), want %q", value, r.Reply.Service, err, want)
		}
	}
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Errorf("a weight and match value change reloaded nginx: %v reloads, were %v", got, reloads)
	}
}

const choiceAnswersVirtualServer = `apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: deny-local, namespace: default}
spec:
  accessControl: {deny: [127.0.0.0/8, "::1"]}
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: answers, namespace: default}
spec:
  host: answers.test
  upstreams:
  - {name: tea, service: tea, port: 80}
  routes:
  - path: /
    splits:
    - weight: %d
      action:
        proxy: {upstream: tea, responseHeaders: {add: [{name: X-Proxied, value: "yes"}]}}
    - weight: %d
      action: {return: {code: 418, body: "no tea", headers: [{name: X-Tea, value: none}]}}
  - path: /m
    matches:
    - conditions: [{header: X-Go, value: "%s"}]
      action: {redirect: {url: "https://example.com/moved", code: 302}}
    action: {pass: tea}
  - path: /guarded
    policies: [{name: deny-local}]
    splits:
    - {weight: 0, action: {pass: tea}}
    - {weight: 100, action: {return: {code: 200, body: "open"}}}
  - path: /guarded-answers
    policies: [{name: deny-local}]
    splits:
    - {weight: 50, action: {return: {code: 200, body: "open"}}}
    - {weight: 50, action: {redirect: {url: "https://example.com/open"}}}
  - path: /answers
    matches:
    - conditions: [{header: X-Maintenance, value: "%[3]s"}]
      action: {return: {code: 503, body: "down", headers: [{name: Retry-After, value: "120"}]}}
    action: {redirect: {url: "https://example.com/", code: 301}}
---
`

// TestVirtualServerChoiceAnswersAgainstNginx: a split between an upstream
// and a return (with its own headers) shares requests by weight; a match
// chooses a redirect; a route whose every action answers needs no
// upstream; a new weight and match value apply without a reload; an
// accessControl Policy refuses before a return is chosen.
func TestVirtualServerChoiceAnswersAgainstNginx(t *testing.T) {
	t.Parallel()
	tea := startBackend(t, "tea")
	c := startController(t, map[string]string{
		"class.yaml":    ingressClass,
		"services.yaml": serviceYAML("default", "tea", 80, tea),
		"answers.yaml":  fmt.Sprintf(choiceAnswersVirtualServer, 50, 50, "yes"),
	})
	if c.Metric("causeway_dataplane_mode", `mode="lua"`) != 1 {
		t.Skip("the Lua data plane is not available")
	}
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	get := func(path string, header map[string]string) harness.Result {
		t.Helper()
		r, err := harness.Do(addr, harness.Request{Method: "GET", Scheme: "http", Host: "answers.test", Path: path, Header: header})
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return r
	}
	count := func(n int) map[string]int {
		got := map[string]int{}
		for range n {
			// A return's own headers, and the proxy's response headers
			// on the proxied responses only.
			switch r := get("/", nil); {
			case r.Status == 200 && r.Reply.Service == "tea" && r.Header.Get("X-Proxied") == "yes" && r.Header.Get("X-Tea") == "":
				got["tea"]++
			case r.Status == 418 && r.Body == "no tea" && r.Header.Get("X-Tea") == "none" && r.Header.Get("X-Proxied") == "":
				got["418"]++
			default:
				got[fmt.Sprintf("%d %q", r.Status, r.Body)]++
			}
		}
		return got
	}
	// 300 requests, 50/50: each within 4 standard deviations (150 ± 35),
	// and nothing else.
	const total = 300
	got := count(total)
	if sd := math.Sqrt(total * 0.25); len(got) != 2 || math.Abs(float64(got["tea"])-total/2) > 4*sd {
		t.Errorf("50/50 split of %d requests between tea and a return: %v; want each %d ± %.0f", total, got, total/2, 4*sd)
	}
	if r := get("/m", map[string]string{"X-Go": "yes"}); r.Status != 302 || r.Location != "https://example.com/moved" {
		t.Errorf("/m matching: %d to %q, want a 302 to https://example.com/moved", r.Status, r.Location)
	}
	if r := get("/m", nil); r.Status != 200 || r.Reply.Service != "tea" {
		t.Errorf("/m not matching: %d from %q, want tea", r.Status, r.Reply.Service)
	}
	if r := get("/guarded", nil); r.Status != 403 {
		t.Errorf("/guarded from a denied address: %d %q, want 403 before the return", r.Status, r.Body)
	}
	// A route whose every action answers proxies nothing.
	if r := get("/guarded-answers", nil); r.Status != 403 {
		t.Errorf("/guarded-answers from a denied address: %d %q, want 403 before the answers", r.Status, r.Body)
	}
	answers := func(when string, value string) {
		t.Helper()
		if r := get("/answers", map[string]string{"X-Maintenance": value}); r.Status != 503 || r.Body != "down" || r.Header.Get("Retry-After") != "120" {
			t.Errorf("%s, /answers matching: %d %q Retry-After %q, want 503 \"down\" with Retry-After 120", when, r.Status, r.Body, r.Header.Get("Retry-After"))
		}
		if r := get("/answers", nil); r.Status != 301 || r.Location != "https://example.com/" {
			t.Errorf("%s, /answers not matching: %d to %q, want a 301 to https://example.com/", when, r.Status, r.Location)
		}
	}
	answers("before the change", "yes")
	// New weights and a new match value apply without a reload.
	reloads := c.Metric("causeway_nginx_reloads_total")
	c.WriteManifest("answers.yaml", fmt.Sprintf(choiceAnswersVirtualServer, 0, 100, "no"))
	eventually(t, 10*time.Second, func() error {
		if got := count(20); got["418"] != 20 {
			return fmt.Errorf("0/100 split: %v", got)
		}
		return nil
	})
	if r := get("/m", map[string]string{"X-Go": "no"}); r.Status != 302 {
		t.Errorf("after the change, /m with X-Go no: %d, want 302", r.Status)
	}
	if r := get("/m", map[string]string{"X-Go": "yes"}); r.Status != 200 || r.Reply.Service != "tea" {
		t.Errorf("after the change, /m with X-Go yes: %d from %q, want tea", r.Status, r.Reply.Service)
	}
	answers("after the change", "no")
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Errorf("a weight and match value change reloaded nginx: %v reloads, were %v", got, reloads)
	}
}
