package integration

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/causeway/causeway/test/grpcecho"
	"github.com/causeway/causeway/test/harness"
)

// gatewayGRPCManifests are a Gateway with one cleartext HTTP listener on
// port %[1]d and a GRPCRoute for the health service's Check method.
const gatewayGRPCManifests = gatewayClassYAML + `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  listeners:
  - {name: http, port: %[1]d, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: health, namespace: default}
spec:
  parentRefs: [{name: gw}]
  hostnames: [grpc.test]
  rules:
  - matches: [{method: {service: grpc.health.v1.Health, method: Check}}]
    backendRefs: [{name: grpc-plain, port: 80}]
---
`

// gatewayHTTPRouteOnGRPCPort is an HTTPRoute that shares the port.
const gatewayHTTPRouteOnGRPCPort = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: default}
spec:
  parentRefs: [{name: gw}]
  hostnames: [web.test]
  rules:
  - backendRefs: [{name: web, port: 80}]
---
`

// TestGatewayGRPCRouteAgainstNginx: a GRPCRoute on a cleartext listener
// is served to gRPC clients speaking HTTP/2 by prior knowledge (h2c).
// When an HTTPRoute shares the port, a data plane that tells HTTP/2 from
// HTTP/1 on one port (Angie) serves both; nginx 1.22 serves the
// HTTPRoute and reports that the GRPCRoute's clients are not served.
func TestGatewayGRPCRouteAgainstNginx(t *testing.T) {
	t.Parallel()
	ip := loopbackIP()
	lis, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	port := lis.Addr().(*net.TCPAddr).Port
	t.Cleanup(grpcecho.Serve(lis, "grpc-plain", lis.Addr().String(), nil))
	web := startBackend(t, "web")
	c := startController(t, map[string]string{
		"services.yaml": serviceYAML("default", "grpc-plain", 80, &backend{Service: "grpc-plain", IP: ip, Port: port}) +
			serviceYAML("default", "web", 80, web),
	})
	gwPort := freePort(t, c.IP)
	addr := net.JoinHostPort(c.IP, strconv.Itoa(gwPort))
	call := func() (grpcecho.Result, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return grpcecho.Check(ctx, addr, "grpc.test", nil)
	}
	served := func() error {
		res, err := call()
		if err != nil {
			return err
		}
		if res.Code != codes.OK || res.Service != "grpc-plain" {
			return fmt.Errorf("code %v from %q (%s), want OK from grpc-plain", res.Code, res.Service, res.Message)
		}
		return nil
	}
	c.WriteManifest("gateway.yaml", fmt.Sprintf(gatewayGRPCManifests, gwPort))
	eventually(t, 20*time.Second, served)

	c.WriteManifest("web.yaml", gatewayHTTPRouteOnGRPCPort)
	webServed := func() error {
		r, err := harness.Get("http", addr, "web.test", "/")
		if err != nil {
			return err
		}
		if r.Status != 200 || r.Reply.Service != "web" {
			return fmt.Errorf("web.test: %d from %q, want 200 from web", r.Status, r.Reply.Service)
		}
		return nil
	}
	eventually(t, 20*time.Second, webServed)
	if dataPlaneFlavour.HTTP2Directive() {
		if err := served(); err != nil {
			t.Errorf("gRPC beside an HTTPRoute on %s: %v", dataPlaneFlavour, err)
		}
		return
	}
	if err := served(); err == nil {
		t.Errorf("gRPC beside an HTTPRoute on %s: served, though the port speaks HTTP/1 only", dataPlaneFlavour)
	}
}
