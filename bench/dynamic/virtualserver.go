package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// Section (l): what a VirtualServer costs nginx per request against the
// Ingresses that say the same with ingress-nginx's annotations, on one
// nginx in the same rounds. Both hosts have four routes, one of them split
// 90/10 between two Services (the Lua balancer's split on both sides), and
// an allow list on every route (a Policy on one side, an annotation on
// the other).
const (
	vsHost      = "vs.bench.test"
	vsIngHost   = "ing.bench.test"
	vsSplitPath = "/api"
	vsLoadPath  = "/api/items"
	vsAllow     = "127.0.0.0/8"
	vsWeight    = 10 // of 100 requests to the split route, to the canary
)

// vsYAML is the VirtualServer, its Policy, and the equivalent Ingresses
// (a main one and a canary).
func vsYAML() string {
	return fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: allow-lan, namespace: %[1]s}
spec:
  accessControl:
    allow: [%[5]q]
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: bench, namespace: %[1]s}
spec:
  ingressClassName: causeway
  host: %[2]s
  policies: [{name: allow-lan}]
  upstreams:
  - {name: main, service: %[3]s, port: 80}
  - {name: canary, service: %[4]s, port: 80}
  routes:
  - path: /
    action: {pass: main}
  - path: %[6]s
    splits:
    - {weight: %[7]d, action: {pass: main}}
    - {weight: %[8]d, action: {pass: canary}}
  - path: /static
    action: {pass: main}
  - path: /admin
    action: {pass: main}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: bench-main
  namespace: %[1]s
  annotations: {nginx.ingress.kubernetes.io/allowlist-source-range: %[5]q}
spec:
  ingressClassName: causeway
  rules:
  - host: %[9]s
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: %[3]s, port: {number: 80}}}}
      - {path: %[6]s, pathType: Prefix, backend: {service: {name: %[3]s, port: {number: 80}}}}
      - {path: /static, pathType: Prefix, backend: {service: {name: %[3]s, port: {number: 80}}}}
      - {path: /admin, pathType: Prefix, backend: {service: {name: %[3]s, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: bench-canary
  namespace: %[1]s
  annotations: {nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-weight: "%[8]d"}
spec:
  ingressClassName: causeway
  rules:
  - host: %[9]s
    http:
      paths:
      - {path: %[6]s, pathType: Prefix, backend: {service: {name: %[4]s, port: {number: 80}}}}
---
`, ns, vsHost, service, canaryService, vsAllow, vsSplitPath, 100-vsWeight, vsWeight, vsIngHost)
}

// runVirtualServer runs section (l): one controller (one worker, access
// log off, metrics on) serving both hosts, loaded in alternating rounds.
func runVirtualServer(ctx context.Context, e *env, c *config, rep *report) error {
	p, bs, err := twoBackends(e)
	if err != nil {
		return err
	}
	defer p.close()
	quiet := map[string]string{"worker-processes": "1", "disable-access-log": "true"}
	app := ingressClassYAML + configMapYAML(quiet) + serviceYAML() + canaryServiceYAML(p.port, bs[1].IP) + vsYAML()
	ctl, err := e.startController(ctx, "virtualserver", map[string]string{"app.yaml": app, "slice.yaml": sliceYAML(p.port, bs[0].IP)}, c)
	if err != nil {
		return err
	}
	defer ctl.stop()
	sides := []side{
		{name: "Ingresses with annotations (main + canary)", httpAddr: ctl.HTTPAddr(), host: vsIngHost, master: ctl.nginxPID},
		{name: "VirtualServer + Policy", httpAddr: ctl.HTTPAddr(), host: vsHost, master: ctl.nginxPID},
	}
	for _, sd := range sides {
		if err := checkSplit(ctx, sd, bs[0].Addr, bs[1].Addr); err != nil {
			return fmt.Errorf("%s: %w", sd.name, err)
		}
	}
	loader := c.resolvedLoader()
	load := func(sd side, d time.Duration) (sample, error) {
		if loader == "wrk" {
			return wrkLoad(ctx, "http://"+sd.httpAddr+vsLoadPath, sd.host, nil, c.conns, d, -1)
		}
		return vegetaLoad(ctx, "http://"+sd.httpAddr+vsLoadPath, sd.host, nil, c.conns, d)
	}
	fmt.Fprintf(os.Stderr, "(l) VirtualServer vs Ingresses: %s, %d rounds of %s per host ...\n", loader, c.rounds, c.tputDuration)
	res, err := abRounds(ctx, c.rounds, sides, time.Second, c.tputDuration, load)
	if err != nil {
		return err
	}
	t := &table{title: "(l) VirtualServer with 4 routes, a split and a Policy vs the equivalent Ingresses", header: []string{"host"}}
	_, cpu := compareTable(t, "req", sides, res, 0, func(int) []string { return nil })
	t.note("One controller (ConfigMap `worker-processes: \"1\"`, `disable-access-log: \"true\"`, metrics on) serves both hosts. `%s`: a VirtualServer with routes `/`, `%s` (splits %d/%d between two Services), `/static` and `/admin`, and an accessControl Policy (allow %s) in `spec.policies`. `%s`: an Ingress with the same four Prefix paths and `allowlist-source-range: %s`, and a canary Ingress on `%s` with `canary-weight: %d`.",
		vsHost, vsSplitPath, 100-vsWeight, vsWeight, vsAllow, vsIngHost, vsAllow, vsSplitPath, vsWeight)
	t.note("Load: `GET %s` (the split route), %s with %d keep-alive connections, %d rounds of %s per host, each round both hosts in turn; Go echo backends, one per Service, not pinned. Before timing, each host answered from both Services.", vsLoadPath, loader, c.conns, c.rounds, c.tputDuration)
	t.note("%s", failureNote(res))
	rep.addTable(t)
	rep.target("(l) VirtualServer (4 routes, a split, a Policy) / equivalent Ingresses, nginx CPU per request", "≤ 1.05×",
		fmt.Sprintf("%.2f×", cpu[1]), pass(cpu[1] <= 1.05))
	return nil
}

// checkSplit waits until a host's split route answers, then checks that
// both Services answer it (at 10%, 200 requests all missing the canary is
// a chance of 7 in 10^10).
func checkSplit(ctx context.Context, sd side, main, canary string) error {
	client := hostClient(sd.httpAddr, sd.host)
	defer client.CloseIdleConnections()
	seen := map[string]int{}
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; n < 200; {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+sd.httpAddr+vsLoadPath, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			if time.Now().After(deadline) {
				return fmt.Errorf("%s not served in time (%v)", vsLoadPath, err)
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		seen[resp.Header.Get("X-Echo-Endpoint")]++
		n++
	}
	if seen[main] == 0 || seen[canary] == 0 || seen[main]+seen[canary] != 200 {
		return fmt.Errorf("200 requests to %s answered by %v, want both %s and %s", vsLoadPath, seen, main, canary)
	}
	return nil
}
