package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

// Section (p): an HTTPRoute weight change, as (h) for a canary: the
// route's two backendRefs alternate between weights 100/0 and 0/100, and
// the time runs from the rename of the route's manifest to the first
// response from the backend the new weights choose. Gateway API's
// weights are the Lua balancer's split state: no reload.

// gatewayRouteYAML is a GatewayClass, a Gateway with an HTTP listener on
// port and an HTTPRoute of the benchmark host splitting between the main
// Service (weight 100-w) and the canary's (w).
func gatewayRouteYAML(port, w int) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: causeway}
spec: {controllerName: causeway.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: causeway
  listeners: [{name: http, port: %[2]d, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: %[1]s}
spec:
  parentRefs: [{name: gw}]
  hostnames: [%[3]q]
  rules:
  - backendRefs:
    - {name: %[7]s, port: 80, weight: %[4]d}
    - {name: %[5]s, port: 80, weight: %[6]d}
---
`, ns, port, httpHost, 100-w, canaryService, w, service)
}

// runRouteWeight runs section (p): the weight changes, then the
// per-request cost.
func runRouteWeight(ctx context.Context, e *env, c *config, rep *report) error {
	if err := routeWeightLatency(ctx, e, c, rep); err != nil {
		return err
	}
	return measureRouteCost(ctx, e, c, rep)
}

// routeWeightLatency times HTTPRoute weight changes.
func routeWeightLatency(ctx context.Context, e *env, c *config, rep *report) error {
	p, bs, err := twoBackends(e)
	if err != nil {
		return err
	}
	defer p.close()
	main, canary := bs[0], bs[1]
	ctl, err := e.startController(ctx, "route-weight", map[string]string{
		"app.yaml":   serviceYAML() + canaryServiceYAML(p.port, canary.IP),
		"slice.yaml": sliceYAML(p.port, main.IP),
	}, c)
	if err != nil {
		return err
	}
	defer ctl.stop()
	port, err := freePort(ctl.IP)
	if err != nil {
		return err
	}
	start, err := ctl.snapshot()
	if err != nil {
		return err
	}
	if _, err := ctl.WriteManifest("route.yaml", gatewayRouteYAML(port, 0)); err != nil {
		return err
	}
	// The Gateway's arrival reloads nginx (a new port); the reload is
	// counted once confirmed, which may come after the first answers:
	// wait for it, so that the changes measured start after it.
	for deadline := time.Now().Add(20 * time.Second); ; {
		now, err := ctl.snapshot()
		if err != nil {
			return err
		}
		if now.reloads > start.reloads {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the Gateway's reload was not counted within 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	workers, _, err := nginxWorkers(ctl.nginxPID())
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "(p) %d HTTPRoute weight changes ...\n", c.latencyIterations)
	r, err := flipWeights(ctx, c, ctl, workers, net.JoinHostPort(ctl.IP, strconv.Itoa(port)), main, canary, func(weight int) (time.Time, error) {
		return ctl.WriteManifest("route.yaml", gatewayRouteYAML(port, weight))
	})
	if err != nil {
		return err
	}
	r.reportWeights(rep, "(p)", "HTTPRoute weight change", "HTTPRoute",
		"Each change rewrites the HTTPRoute (temp file + rename), its two backendRefs' weights alternating between 100/0 and 0/100, so one response tells which weights served it; the time runs from the rename to the first response from the backend the new weights choose.")
	return nil
}

// routeHost is the HTTPRoute's host in the per-request cost comparison.
const routeHost = "route.bench.test"

// gatewayCostYAML is a Gateway with an HTTP listener on port and two
// HTTPRoutes to the Ingress's Service: routeHost with one backendRef, and
// split.bench.test with the canary's Service beside it at weight 0 (a
// split location, the Lua balancer choosing).
func gatewayCostYAML(port int) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: causeway}
spec: {controllerName: causeway.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: causeway
  listeners: [{name: http, port: %[2]d, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: plain, namespace: %[1]s}
spec:
  parentRefs: [{name: gw}]
  hostnames: [%[3]q]
  rules: [{backendRefs: [{name: %[4]s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: split, namespace: %[1]s}
spec:
  parentRefs: [{name: gw}]
  hostnames: [split.bench.test]
  rules: [{backendRefs: [{name: %[4]s, port: 80, weight: 1}, {name: %[5]s, port: 80, weight: 0}]}]
---
`, ns, port, routeHost, service, canaryService)
}

// measureRouteCost compares nginx's CPU per request through an HTTPRoute
// with the same request through an Ingress, same controller, same
// backend, alternating rounds (issue 34: ≤ 1.05×).
func measureRouteCost(ctx context.Context, e *env, c *config, rep *report) error {
	p, bs, err := twoBackends(e)
	if err != nil {
		return err
	}
	defer p.close()
	quiet := map[string]string{"worker-processes": "1", "disable-access-log": "true"}
	ctl, err := e.startController(ctx, "route-cost", map[string]string{
		"app.yaml":   ingressClassYAML + configMapYAML(quiet) + serviceYAML() + ingressYAML("web", httpHost) + canaryServiceYAML(p.port, bs[1].IP),
		"slice.yaml": sliceYAML(p.port, bs[0].IP),
	}, c)
	if err != nil {
		return err
	}
	defer ctl.stop()
	port, err := freePort(ctl.IP)
	if err != nil {
		return err
	}
	if _, err := ctl.WriteManifest("gateway.yaml", gatewayCostYAML(port)); err != nil {
		return err
	}
	gwAddr := net.JoinHostPort(ctl.IP, strconv.Itoa(port))
	for _, s := range []struct{ addr, host string }{{ctl.HTTPAddr(), httpHost}, {gwAddr, routeHost}, {gwAddr, "split.bench.test"}} {
		if err := waitServedBy(ctx, hostClient(s.addr, s.host), bs[0].Addr, 20*time.Second); err != nil {
			return fmt.Errorf("%s: %w", s.host, err)
		}
	}
	loader := c.resolvedLoader()
	load := func(sd side, d time.Duration) (sample, error) {
		if loader == "wrk" {
			return wrkLoad(ctx, "http://"+sd.httpAddr+"/", sd.host, nil, c.conns, d, -1)
		}
		return vegetaLoad(ctx, "http://"+sd.httpAddr+"/", sd.host, nil, c.conns, d)
	}
	sides := []side{
		{name: "Ingress", httpAddr: ctl.HTTPAddr(), host: httpHost, master: ctl.nginxPID},
		{name: "HTTPRoute, one backendRef", httpAddr: gwAddr, host: routeHost, master: ctl.nginxPID},
		{name: "HTTPRoute, two backendRefs (weights 1 and 0: a split)", httpAddr: gwAddr, host: "split.bench.test", master: ctl.nginxPID},
	}
	fmt.Fprintf(os.Stderr, "(p) per-request cost: %s, %d rounds of %s per location ...\n", loader, c.rounds, c.tputDuration)
	res, err := abRounds(ctx, c.rounds, sides, time.Second, c.tputDuration, load)
	if err != nil {
		return err
	}
	t := &table{title: "(p) nginx CPU per request: an HTTPRoute vs the same Ingress", header: []string{"location"}}
	_, cpu := compareTable(t, "req", sides, res, 0, func(int) []string { return nil })
	t.note("One controller, ConfigMap `worker-processes: \"1\"` and `disable-access-log: \"true\"`, metrics on; one Go echo backend behind both; %s with %d keep-alive connections, %d rounds of %s per location, each round every location in turn. The HTTPRoute is served on its Gateway's own port.", loader, c.conns, c.rounds, c.tputDuration)
	t.note("%s", failureNote(res))
	rep.addTable(t)
	rep.target("(p) nginx CPU per request, HTTPRoute / Ingress", "≤ 1.05×", fmt.Sprintf("%.2f×", cpu[1]), pass(cpu[1] <= 1.05))
	rep.target("(p) nginx CPU per request, HTTPRoute split / Ingress", "informational", fmt.Sprintf("%.2f×", cpu[2]), nil)
	return nil
}
