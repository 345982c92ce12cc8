package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/causeway/causeway/test/grpcecho"
	"github.com/causeway/causeway/test/harness"
)

// backendHeadersManifests: a Gateway listener on port %[1]d and a route
// of headers.test whose one rule adds to X-Rule and X-Add and whose
// two backendRefs, weighted %[2]d and %[3]d, edit the request headers of
// their own requests: "one" sets Backend and adds to X-Add, "two" sets
// Backend and removes X-Gone.
const backendHeadersManifests = gatewayClassYAML + `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  listeners: [{name: http, port: %[1]d, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: headers, namespace: default}
spec:
  parentRefs: [{name: gw}]
  hostnames: [headers.test]
  rules:
  - filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {add: [{name: X-Rule, value: r}, {name: X-Add, value: r}]}
    backendRefs:
    - name: one
      port: 80
      weight: %[2]d
      filters:
      - type: RequestHeaderModifier
        requestHeaderModifier:
          set: [{name: Backend, value: one}]
          add: [{name: X-Add, value: one}]
    - name: two
      port: 80
      weight: %[3]d
      filters:
      - type: RequestHeaderModifier
        requestHeaderModifier:
          set: [{name: Backend, value: %[4]s}]
          remove: [X-Gone]
---
`

// headerEcho answers with its name (X-Service) and, for each header of
// names, every value it got, "|"-joined (X-Seen-<name>, "-" for none).
func headerEcho(name string, names ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Service", name)
		for _, n := range names {
			v := strings.Join(r.Header.Values(n), "|")
			if v == "" {
				v = "-"
			}
			w.Header().Set("X-Seen-"+n, v)
		}
		w.Write([]byte(name + "\n"))
	})
}

// TestGatewayBackendRequestHeaders: an HTTPRoute rule whose backendRefs
// edit request headers of their own (HTTPRouteBackendRequestHeaderModification):
// each answer's backend saw its own edits, after the rule's, and only
// its own, whichever the weighted split picked; a header a backend does
// not edit reaches it as the rule left it. A weight change, and a new
// value of an edit, are pushed without a reload. On the plain data plane
// nothing splits: the first backend serves every request, with its own
// edits.
func TestGatewayBackendRequestHeaders(t *testing.T) {
	t.Parallel()
	seen := []string{"Backend", "X-Add", "X-Gone", "X-Rule"}
	one := startHandlerBackend(t, "one", headerEcho("one", seen...))
	two := startHandlerBackend(t, "two", headerEcho("two", seen...))
	services := map[string]string{"services.yaml": serviceYAML("default", "one", 80, one) + serviceYAML("default", "two", 80, two)}
	client := map[string]string{"Backend": "forged", "X-Add": "c", "X-Gone": "g"}
	t.Run("plain", func(t *testing.T) {
		c := startController(t, services, "--dataplane", "plain")
		port := freePort(t, c.IP)
		c.WriteManifest("gateway.yaml", fmt.Sprintf(backendHeadersManifests, port, 3, 1, "two"))
		addr := net.JoinHostPort(c.IP, strconv.Itoa(port))
		eventually(t, 20*time.Second, func() error {
			for range 4 {
				r, err := harness.Do(addr, harness.Request{Scheme: "http", Host: "headers.test", Path: "/", Header: client})
				if err != nil {
					return err
				}
				if got := r.Header.Get("X-Service") + " " + r.Header.Get("X-Seen-Backend") + " " + r.Header.Get("X-Seen-X-Add"); got != "one one c,r,one" {
					return fmt.Errorf("status %d: got %q, want one one c,r,one", r.Status, got)
				}
			}
			return nil
		})
	})
	c := startController(t, services)
	if c.Metric("causeway_dataplane_mode", `mode="lua"`) != 1 {
		t.Skip("a split by weight needs the Lua balancer")
	}
	port := freePort(t, c.IP)
	c.WriteManifest("gateway.yaml", fmt.Sprintf(backendHeadersManifests, port, 3, 1, "two"))
	addr := net.JoinHostPort(c.IP, strconv.Itoa(port))
	get := func() (harness.Result, error) {
		r, err := harness.Do(addr, harness.Request{Scheme: "http", Host: "headers.test", Path: "/", Header: client})
		if err == nil && r.Status != 200 {
			err = fmt.Errorf("status %d", r.Status)
		}
		return r, err
	}
	want := map[string]map[string]string{
		"one": {"Backend": "one", "X-Add": "c,r,one", "X-Gone": "g", "X-Rule": "r"},
		"two": {"Backend": "two", "X-Add": "c,r", "X-Gone": "-", "X-Rule": "r"},
	}
	check := func(r harness.Result) error {
		svc := r.Header.Get("X-Service")
		w, ok := want[svc]
		if !ok {
			return fmt.Errorf("answered by %q", svc)
		}
		for h, v := range w {
			if got := r.Header.Get("X-Seen-" + h); got != v {
				return fmt.Errorf("%s saw %s %q, want %q", svc, h, got, v)
			}
		}
		return nil
	}
	eventually(t, 20*time.Second, func() error {
		r, err := get()
		if err != nil {
			return err
		}
		return check(r)
	})
	served := map[string]int{}
	for range 80 {
		r, err := get()
		if err != nil {
			t.Fatal(err)
		}
		if err := check(r); err != nil {
			t.Error(err)
		}
		served[r.Header.Get("X-Service")]++
	}
	// Weights 3 and 1 over 80: both serve (one in 10^10 runs would not).
	if served["one"] == 0 || served["two"] == 0 || served["one"] < served["two"] {
		t.Errorf("served %v, want both, one about three times two", served)
	}

	reloads := reloadsAfterGateway(t, c)
	c.WriteManifest("gateway.yaml", fmt.Sprintf(backendHeadersManifests, port, 0, 1, "two"))
	onlyTwo := func() error {
		for range 8 {
			r, err := get()
			if err != nil {
				return err
			}
			if svc := r.Header.Get("X-Service"); svc != "two" {
				return fmt.Errorf("answered by %s at weight 0", svc)
			}
			if err := check(r); err != nil {
				return err
			}
		}
		return nil
	}
	eventually(t, 10*time.Second, onlyTwo)
	// A new value of an edit is pushed too.
	want["two"]["Backend"] = "two-b"
	c.WriteManifest("gateway.yaml", fmt.Sprintf(backendHeadersManifests, port, 0, 1, "two-b"))
	eventually(t, 10*time.Second, onlyTwo)
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Errorf("a weight or header value change reloaded nginx: %v reloads, were %v", got, reloads)
	}
}

// grpcBackendHeadersManifests: a GRPCRoute on a listener of port %[1]d of
// its own whose two backendRefs set the backend metadata each to its
// own name.
const grpcBackendHeadersManifests = gatewayClassYAML + `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  listeners: [{name: grpc, port: %[1]d, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: health, namespace: default}
spec:
  parentRefs: [{name: gw}]
  hostnames: [grpc.test]
  rules:
  - backendRefs:
    - name: grpc-a
      port: 80
      filters:
      - type: RequestHeaderModifier
        requestHeaderModifier: {set: [{name: backend, value: grpc-a}]}
    - name: grpc-b
      port: 80
      filters:
      - type: RequestHeaderModifier
        requestHeaderModifier: {set: [{name: backend, value: grpc-b}]}
---
`

// TestGatewayGRPCBackendRequestHeaders: a GRPCRoute's backendRefs edit
// the metadata of their own calls as an HTTPRoute's do (grpc_set_header
// from the variables the access hook sets): each call's backend saw its
// own value, once.
func TestGatewayGRPCBackendRequestHeaders(t *testing.T) {
	t.Parallel()
	services := ""
	for _, name := range []string{"grpc-a", "grpc-b"} {
		ip := loopbackIP()
		lis, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(grpcecho.Serve(lis, name, lis.Addr().String(), nil))
		services += serviceYAML("default", name, 80, &backend{Service: name, IP: ip, Port: lis.Addr().(*net.TCPAddr).Port})
	}
	c := startController(t, map[string]string{"services.yaml": services})
	if c.Metric("causeway_dataplane_mode", `mode="lua"`) != 1 {
		t.Skip("a split by weight needs the Lua balancer")
	}
	port := freePort(t, c.IP)
	c.WriteManifest("gateway.yaml", fmt.Sprintf(grpcBackendHeadersManifests, port))
	addr := net.JoinHostPort(c.IP, strconv.Itoa(port))
	call := func() (grpcecho.Result, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := grpcecho.Check(ctx, addr, "grpc.test", nil)
		if err == nil && (res.Code != codes.OK || res.SeenBackend != res.Service) {
			err = fmt.Errorf("code %v from %q (%s) that saw backend %q", res.Code, res.Service, res.Message, res.SeenBackend)
		}
		return res, err
	}
	eventually(t, 20*time.Second, func() error { _, err := call(); return err })
	served := map[string]int{}
	for range 24 {
		res, err := call()
		if err != nil {
			t.Fatal(err)
		}
		served[res.Service]++
	}
	if served["grpc-a"] == 0 || served["grpc-b"] == 0 {
		t.Errorf("served %v, want both", served)
	}
}
