package integration

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// frontEndsManifests name one host, shared.test, from all three
// front-ends: an Ingress (the oldest), a VirtualServer (younger) and an
// HTTPRoute on a Gateway listener of port %[1]d. The Gateway's second
// listener asks for the controller's own HTTP port %[2]d.
const frontEndsManifests = gatewayClassYAML + `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  listeners:
  - {name: own, port: %[1]d, protocol: HTTP}
  - {name: on-ingress-port, port: %[2]d, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shared, namespace: default, creationTimestamp: "2026-03-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  hostnames: [shared.test]
  rules:
  - backendRefs: [{name: juice, port: 80}]
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: shared, namespace: default, creationTimestamp: "2026-02-01T00:00:00Z"}
spec:
  host: shared.test
  upstreams: [{name: coffee, service: coffee, port: 80}]
  routes: [{path: /, action: {pass: coffee}}]
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: vs-only, namespace: default, creationTimestamp: "2026-02-01T00:00:00Z"}
spec:
  host: vs.test
  upstreams: [{name: coffee, service: coffee, port: 80}]
  routes: [{path: /, action: {pass: coffee}}]
---
`

// TestFrontEndsShareAHostAgainstNginx: every pair of front-ends naming
// one host, through real nginx. Ingress and VirtualServer meet on the
// controller's ports, where the oldest wins; an HTTPRoute is served on
// its Gateway's own port, where neither reaches, and they do not reach
// it; a Gateway listener asking for the controller's port is refused
// while the Ingress and the VirtualServer keep it.
func TestFrontEndsShareAHostAgainstNginx(t *testing.T) {
	t.Parallel()
	tea, coffee, juice := startBackend(t, "tea"), startBackend(t, "coffee"), startBackend(t, "juice")
	c := startController(t, map[string]string{
		"class.yaml":    ingressClass,
		"services.yaml": serviceYAML("default", "tea", 80, tea) + serviceYAML("default", "coffee", 80, coffee) + serviceYAML("default", "juice", 80, juice),
		"ingress.yaml": strings.Replace(ingressYAML("default", "shared", "shared.test", "Prefix / tea"),
			"metadata: {name: shared, namespace: default}", `metadata: {name: shared, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}`, 1),
	})
	gwPort := freePort(t, c.IP)
	manifests := fmt.Sprintf(frontEndsManifests, gwPort, c.HTTPPort)
	c.WriteManifest("frontends.yaml", manifests)
	gwAddr := net.JoinHostPort(c.IP, strconv.Itoa(gwPort))
	ingressAddr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	rows := []struct {
		what, addr, host string
		status           int
		service          string
	}{
		{"Ingress (older) over VirtualServer on the controller's port", ingressAddr, "shared.test", 200, "tea"},
		{"HTTPRoute on its Gateway's port", gwAddr, "shared.test", 200, "juice"},
		{"a VirtualServer host on the Gateway's port", gwAddr, "vs.test", 404, ""},
		{"the VirtualServer still serves its other host", ingressAddr, "vs.test", 200, "coffee"},
	}
	check := func(i int) error {
		r := rows[i]
		got, err := harness.Do(r.addr, harness.Request{Scheme: "http", Host: r.host, Path: "/x"})
		if err != nil {
			return err
		}
		if got.Status != r.status || got.Reply.Service != r.service {
			return fmt.Errorf("%s: %d %q, want %d %q", r.what, got.Status, got.Reply.Service, r.status, r.service)
		}
		return nil
	}
	// Each row is waited for: the first ones may meet old workers of
	// the reload that brought the Gateway, which still hold the
	// controller's port.
	for i := range rows {
		eventually(t, 20*time.Second, func() error { return check(i) })
	}
	// The refusals are Problems naming the objects, in the log.
	for _, want := range []string{
		`kind=VirtualServer object=default/shared reason=Collision`,
		`kind=Gateway object=default/gw reason=Invalid rejected=false message="listener \"on-ingress-port\": port ` + strconv.Itoa(c.HTTPPort),
	} {
		eventually(t, 10*time.Second, func() error {
			if !strings.Contains(c.log.String(), want) {
				return fmt.Errorf("no Problem %q logged", want)
			}
			return nil
		})
	}
}
