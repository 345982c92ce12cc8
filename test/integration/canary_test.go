package integration

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/spec"
)

// TestCanaryTableAgainstNginx sends the canary rows to a real nginx with
// real backends; the build tests check the same rows on the Model.
func TestCanaryTableAgainstNginx(t *testing.T) {
	t.Parallel()
	runAnnotationTable(t, spec.CanaryTable)
}

// canaryYAML is a canary Ingress of canary.test/ routing to Service next.
func canaryYAML(kv ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web-canary\n  namespace: default\n  annotations:\n")
	b.WriteString("    nginx.ingress.kubernetes.io/canary: \"true\"\n")
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, "    nginx.ingress.kubernetes.io/%s: %q\n", kv[i], kv[i+1])
	}
	b.WriteString("spec:\n  ingressClassName: causeway\n  rules:\n  - host: canary.test\n    http:\n      paths:\n" +
		"      - {path: /, pathType: Prefix, backend: {service: {name: next, port: {number: 80}}}}\n---\n")
	return b.String()
}

// split sends n requests (8 at a time, each on a new connection, so they
// spread over the workers) and counts the Services that answered.
func split(c *controller, n int, header map[string]string) map[string]int {
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	next := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			for range next {
				res, err := harness.Do(net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort)),
					harness.Request{Scheme: "http", Host: "canary.test", Path: "/", Header: header})
				who := res.Reply.Service
				if err != nil {
					who = "error"
				} else if res.Status != 200 {
					who = strconv.Itoa(res.Status)
				}
				mu.Lock()
				seen[who]++
				mu.Unlock()
			}
		})
	}
	for range n {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	return seen
}

// binomialTail bounds the probability that a binomial(n, p) count falls
// outside [lo, hi], by the Chernoff bound exp(-n·D(a‖p)) on each side.
func binomialTail(n int, p float64, lo, hi int) float64 {
	kl := func(a float64) float64 { return a*math.Log(a/p) + (1-a)*math.Log((1-a)/(1-p)) }
	N := float64(n)
	return math.Exp(-N*kl(float64(lo)/N)) + math.Exp(-N*kl(float64(hi)/N))
}

// TestCanaryWeightDistribution sends 2000 requests at weight 20 of 100.
// The canary's count is binomial(2000, 0.2): mean 400, standard deviation
// 17.9. The test accepts 300 to 500 (20 % ± 5 points), outside which a
// correct balancer falls with probability below 1e-6.
func TestCanaryWeightDistribution(t *testing.T) {
	t.Parallel()
	const n, lo, hi = 2000, 300, 500
	if tail := binomialTail(n, 0.2, lo, hi); tail >= 1e-6 {
		t.Fatalf("the tolerance is too tight: a false failure has probability %g", tail)
	}
	stable, next := startBackend(t, "stable"), startBackend(t, "next")
	c := startController(t, map[string]string{
		"app.yaml":    ingressClass + serviceYAML("default", "stable", 80, stable) + serviceYAML("default", "next", 80, next) + ingressYAML("default", "web", "canary.test", "Prefix / stable"),
		"canary.yaml": canaryYAML("canary-weight", "20"),
	})
	seen := split(c, n, nil)
	t.Logf("weight 20: %v", seen)
	if seen["next"] < lo || seen["next"] > hi || seen["stable"]+seen["next"] != n {
		t.Fatalf("served %v; want %d to %d of %d by next, the rest by stable", seen, lo, hi, n)
	}
	// ingress-nginx's request counter names the canary's upstream on the
	// requests the canary served; the others have an empty canary label.
	eventually(t, 10*time.Second, func() error {
		base := []string{`namespace="default"`, `ingress="web"`, `service="stable"`, `path="/"`}
		canary := c.Metric("nginx_ingress_controller_requests", append(base, `canary="default-next-80"`)...)
		main := c.Metric("nginx_ingress_controller_requests", append(base, `canary=""`)...)
		if canary != float64(seen["next"]) || main != float64(seen["stable"]) {
			return fmt.Errorf("requests counted %v with the canary label and %v without, want %d and %d", canary, main, seen["next"], seen["stable"])
		}
		return nil
	})
}

// TestCanaryChangesDoNotReload changes the weight, the header and the
// cookie of a canary in turn: each change is live within seconds and the
// reload counter stays flat. Then the main Ingress goes away: the
// canary's path is no longer served, with a Problem, as in ingress-nginx.
func TestCanaryChangesDoNotReload(t *testing.T) {
	t.Parallel()
	stable, next := startBackend(t, "stable"), startBackend(t, "next")
	c := startController(t, map[string]string{
		"app.yaml":    ingressClass + serviceYAML("default", "stable", 80, stable) + serviceYAML("default", "next", 80, next),
		"main.yaml":   ingressYAML("default", "web", "canary.test", "Prefix / stable"),
		"canary.yaml": canaryYAML("canary-weight", "0"),
	})
	if c.Metric("causeway_dataplane_mode", `mode="lua"`) != 1 {
		t.Fatal("the Lua data plane must be in use")
	}
	reloads := c.Metric("causeway_nginx_reloads_total")
	always := map[string]string{"X-Canary": "always"}
	steps := []struct {
		name   string
		ann    []string
		header map[string]string
		want   string // the Services that answer, comma-separated
	}{
		{"weight 0", []string{"canary-weight", "0"}, nil, "stable"},
		{"weight 100", []string{"canary-weight", "100"}, nil, "next"},
		{"weight back to 0", []string{"canary-weight", "0"}, nil, "stable"},
		{"header added", []string{"canary-by-header", "X-Canary"}, always, "next"},
		{"header renamed", []string{"canary-by-header", "X-Other"}, always, "stable"},
		{"header value", []string{"canary-by-header", "X-Canary", "canary-by-header-value", "v2"}, map[string]string{"X-Canary": "v2"}, "next"},
		{"header pattern", []string{"canary-by-header", "X-Canary", "canary-by-header-pattern", "^v[3-9]"}, map[string]string{"X-Canary": "v3"}, "next"},
		{"cookie", []string{"canary-by-cookie", "canary"}, map[string]string{"Cookie": "canary=always"}, "next"},
		{"weight 100 beside the cookie", []string{"canary-by-cookie", "canary", "canary-weight", "100"}, nil, "next"},
		{"cookie never over weight", []string{"canary-by-cookie", "canary", "canary-weight", "100"}, map[string]string{"Cookie": "canary=never"}, "stable"},
	}
	for _, s := range steps {
		start := time.Now()
		c.WriteManifest("canary.yaml", canaryYAML(s.ann...))
		eventually(t, 5*time.Second, func() error {
			if got := keys(split(c, 16, s.header)); got != s.want {
				return fmt.Errorf("%s: served by %s, want %s", s.name, got, s.want)
			}
			return nil
		})
		t.Logf("%s: live in %s", s.name, time.Since(start).Round(time.Millisecond))
		if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
			t.Fatalf("%s: reloads went from %v to %v", s.name, reloads, got)
		}
	}

	// The main Ingress goes: nothing serves canary.test/ any more, and the
	// canary says why.
	c.WriteManifest("main.yaml", "")
	eventually(t, 5*time.Second, func() error {
		if got := keys(split(c, 4, nil)); got != "404" {
			return fmt.Errorf("without its main: served by %s, want 404", got)
		}
		if got := c.Metric("causeway_object_problems", `reason="CanaryNotApplied"`); got != 1 {
			return fmt.Errorf("causeway_object_problems{reason=\"CanaryNotApplied\"} = %v, want 1", got)
		}
		return nil
	})
	// And comes back: the canary applies again.
	c.WriteManifest("main.yaml", ingressYAML("default", "web", "canary.test", "Prefix / stable"))
	eventually(t, 5*time.Second, func() error {
		if got := keys(split(c, 8, map[string]string{"Cookie": "canary=always"})); got != "next" {
			return fmt.Errorf("main back: served by %s, want next", got)
		}
		if got := c.Metric("causeway_object_problems", `reason="CanaryNotApplied"`); got != 0 {
			return fmt.Errorf("the Problem outlived its cause: %v", got)
		}
		return nil
	})
}

// TestCanaryAffinity: with cookie affinity on the main Ingress, a client
// first sent to the canary keeps going there after its weight drops to 0,
// and a new client goes to the main (ingress-nginx's default canary
// affinity behaviour).
func TestCanaryAffinity(t *testing.T) {
	t.Parallel()
	stable, next := startBackend(t, "stable"), startBackend(t, "next")
	main := strings.Replace(ingressYAML("default", "web", "canary.test", "Prefix / stable"), "metadata: {name: web, namespace: default}",
		"metadata:\n  name: web\n  namespace: default\n  annotations: {nginx.ingress.kubernetes.io/affinity: cookie, nginx.ingress.kubernetes.io/session-cookie-name: route}", 1)
	c := startController(t, map[string]string{
		"app.yaml":    ingressClass + serviceYAML("default", "stable", 80, stable) + serviceYAML("default", "next", 80, next) + main,
		"canary.yaml": canaryYAML("canary-weight", "100"),
	})
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	get := func(cookie string) harness.Result {
		t.Helper()
		h := map[string]string{}
		if cookie != "" {
			h["Cookie"] = cookie
		}
		res, err := harness.Do(addr, harness.Request{Scheme: "http", Host: "canary.test", Path: "/", Header: h})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := get("")
	route := ""
	for _, ck := range (&http.Response{Header: first.Header}).Cookies() {
		if ck.Name == "route" {
			route = "route=" + ck.Value
		}
	}
	if first.Reply.Service != "next" || route == "" {
		t.Fatalf("weight 100: served by %q, cookie %q", first.Reply.Service, route)
	}
	reloads := c.Metric("causeway_nginx_reloads_total")
	c.WriteManifest("canary.yaml", canaryYAML("canary-weight", "0"))
	eventually(t, 5*time.Second, func() error {
		if got := get("").Reply.Service; got != "stable" {
			return fmt.Errorf("weight 0, no cookie: served by %q", got)
		}
		return nil
	})
	for range 8 {
		if got := get(route).Reply.Service; got != "next" {
			t.Fatalf("weight 0, affinitized to the canary: served by %q", got)
		}
	}
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Fatalf("reloads went from %v to %v", reloads, got)
	}
}

// TestCanaryMetricsInSharedServer: alike hosts, each with a canary by
// header, share one server block; the requests their canaries serve are
// counted under each host's own Ingress and Service with the canary's
// upstream in the canary label, the others with an empty one.
func TestCanaryMetricsInSharedServer(t *testing.T) {
	t.Parallel()
	manifests := ingressClass
	for _, h := range []string{"a", "b"} {
		stable, next := startBackend(t, "stable-"+h), startBackend(t, "next-"+h)
		host := h + ".canary-shared.test"
		manifests += serviceYAML("default", "stable-"+h, 80, stable) + serviceYAML("default", "next-"+h, 80, next) +
			ingressYAML("default", h, host, "Prefix / stable-"+h) +
			fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %[1]s-canary
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-by-header: X-Canary}
spec:
  ingressClassName: causeway
  rules:
  - host: %[2]s
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: next-%[1]s, port: {number: 80}}}}
---
`, h, host)
	}
	c := startController(t, map[string]string{"app.yaml": manifests})
	shared, err := filepath.Glob(filepath.Join(c.StateDir, "servers", "_shared-*.conf"))
	if err != nil || len(shared) != 1 {
		t.Fatalf("shared server files %v (%v), want one", shared, err)
	}
	conf, _ := os.ReadFile(shared[0])
	if !strings.Contains(string(conf), `"a.canary-shared.test"`) || !strings.Contains(string(conf), `"b.canary-shared.test"`) {
		t.Fatalf("the hosts do not share a server:\n%s", conf)
	}
	// The shared location sets one literal canary series key, which the
	// controller resolves per host from the line's $host; a map on $host
	// would count alike but cost a lookup per request.
	if !regexp.MustCompile(`(?m)^\s*set \$causeway_metrics_canary "s[0-9a-f]+";$`).Match(conf) || strings.Contains(string(conf), "set $causeway_metrics_canary $") {
		t.Fatalf("the shared location does not set one literal canary series key:\n%s", conf)
	}
	sent := map[[2]string]int{{"a", "canary"}: 3, {"a", ""}: 2, {"b", "canary"}: 1, {"b", ""}: 4}
	for k, n := range sent {
		h, want := k[0], "stable-"+k[0]
		r := harness.Request{Method: "GET", Host: h + ".canary-shared.test", Path: "/"}
		if k[1] != "" {
			r.Header = map[string]string{"X-Canary": "always"}
			want = "next-" + h
		}
		for range n {
			if res := c.do(r); res.Status != 200 || res.Reply.Service != want {
				t.Fatalf("%v: status %d from %q, want 200 from %s", k, res.Status, res.Reply.Service, want)
			}
		}
	}
	eventually(t, 10*time.Second, func() error {
		for k, n := range sent {
			canary := ""
			if k[1] != "" {
				canary = "default-next-" + k[0] + "-80"
			}
			labels := []string{`ingress="` + k[0] + `"`, `service="stable-` + k[0] + `"`, `host="` + k[0] + `.canary-shared.test"`, `canary="` + canary + `"`}
			if got := c.Metric("nginx_ingress_controller_requests", labels...); got != float64(n) {
				return fmt.Errorf("requests%v = %v, want %d", labels, got, n)
			}
		}
		return nil
	})
	if got := c.Metric("causeway_metrics_dropped_requests_total"); got != 0 {
		t.Errorf("%v lines dropped", got)
	}
}
