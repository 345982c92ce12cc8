package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/causeway/causeway/test/grpcecho"
	"github.com/causeway/causeway/test/testcert"
)

// grpcIngressYAML routes host to service with a backend protocol.
func grpcIngressYAML(name, host, service, protocol string) string {
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %[1]s
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/backend-protocol: %[4]s
spec:
  ingressClassName: causeway
  tls: [{hosts: [%[2]q]}]
  rules:
  - host: %[2]q
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: %[3]s, port: {number: 80}}}}
---
`, name, host, service, protocol)
}

// A gRPC client over TLS with HTTP/2 reaches gRPC backends through the
// Lua-balanced upstream: over cleartext HTTP/2 (backend-protocol GRPC) and
// over TLS (GRPCS), for unary and streaming calls, spread over both
// endpoints, with the forwarded headers nginx adds.
func TestGRPCBackends(t *testing.T) {
	t.Parallel()
	cert, key, err := testcert.SelfSigned(2048, time.Hour, "grpc-backend")
	if err != nil {
		t.Fatal(err)
	}
	backendTLS, err := grpcecho.ServerTLS(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	// serve runs two endpoints of a gRPC Service on one port.
	serve := func(service string, tlsConfig *tls.Config) []*backend {
		var out []*backend
		port := 0
		for i := 0; i < 2; i++ {
			ip := loopbackIP()
			lis, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
			if err != nil {
				t.Fatal(err)
			}
			port = lis.Addr().(*net.TCPAddr).Port
			t.Cleanup(grpcecho.Serve(lis, service, lis.Addr().String(), tlsConfig))
			out = append(out, &backend{Service: service, IP: ip, Port: port})
		}
		return out
	}
	plain := serve("grpc-plain", nil)
	secure := serve("grpc-tls", backendTLS)
	manifests := ingressClass +
		serviceYAML("default", "grpc-plain", 80, plain...) + grpcIngressYAML("plain", "grpc.test", "grpc-plain", "GRPC") +
		serviceYAML("default", "grpc-tls", 80, secure...) + grpcIngressYAML("secure", "grpcs.test", "grpc-tls", "GRPCS")
	c := startController(t, map[string]string{"grpc.yaml": manifests})
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPSPort))
	for _, tc := range []struct{ host, service string }{{"grpc.test", "grpc-plain"}, {"grpcs.test", "grpc-tls"}} {
		t.Run(tc.service, func(t *testing.T) {
			endpoints := map[string]int{}
			for i := 0; i < 8; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				res, err := grpcecho.Check(ctx, addr, tc.host, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if res.Code != codes.OK || res.Status != "SERVING" || res.Service != tc.service {
					t.Fatalf("call %d: code %v status %q from %q (%s), want OK SERVING from %s", i, res.Code, res.Status, res.Service, res.Message, tc.service)
				}
				if res.SeenProto != "https" || res.SeenAuthority != tc.host {
					t.Fatalf("the backend saw x-forwarded-proto %q and :authority %q, want https and %s", res.SeenProto, res.SeenAuthority, tc.host)
				}
				endpoints[res.Endpoint]++
			}
			if len(endpoints) != 2 {
				t.Errorf("calls reached %v, want both endpoints", endpoints)
			}
		})
	}
}
