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

// runRouteWeight runs section (p).
func runRouteWeight(ctx context.Context, e *env, c *config, rep *report) error {
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
