package gateway

import (
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// TestAppProtocol: a Service port's appProtocol the route can speak is
// served; one it cannot is a ResolvedRefs UnsupportedProtocol Problem and
// a 500 share, per route kind (GEP-1911; httproute-backend-protocol-*).
func TestAppProtocol(t *testing.T) {
	for _, row := range []struct {
		kind, protocol string
		tls            bool
		refused        string // in the Problem's message; "" when served
	}{
		{"HTTPRoute", "", false, ""},
		{"HTTPRoute", "http", false, ""},
		{"HTTPRoute", "example.com/custom", false, ""},
		{"HTTPRoute", appProtocolWS, false, ""},
		{"HTTPRoute", appProtocolWSS, true, ""},
		{"HTTPRoute", appProtocolWSS, false, "needs a BackendTLSPolicy"},
		{"HTTPRoute", appProtocolH2C, false, "HTTP/1.1 to an HTTPRoute's backends"},
		{"HTTPRoute", appProtocolH2C, true, "HTTP/1.1 to an HTTPRoute's backends"},
		{"GRPCRoute", appProtocolH2C, false, ""},
		{"GRPCRoute", "grpc", false, ""},
		{"GRPCRoute", appProtocolWS, false, "gRPC is HTTP/2"},
		{"GRPCRoute", appProtocolWSS, true, "gRPC is HTTP/2"},
	} {
		t.Run(row.kind+" "+row.protocol, func(t *testing.T) {
			env := testEnv
			env.AppProtocol = func(ns, name string, port int32) string {
				if ns != "infra" || name != "ws" || port != 8080 {
					t.Fatalf("asked the appProtocol of %s/%s port %d", ns, name, port)
				}
				return row.protocol
			}
			if row.tls {
				env.BackendTLS = func(Backend) *BackendTLSPolicy { return &BackendTLSPolicy{TLS: &model.UpstreamTLS{Name: "ws.example"}} }
			}
			var rr *RouteRules
			var ps []model.Problem
			if row.kind == "HTTPRoute" {
				rr, ps = TranslateHTTPRoute(newHTTPRoute("r", toBackend("ws", proxyRule(pathMatch(gwv1.PathMatchPathPrefix, "/")))), env)
			} else {
				rule := grpcMethodRule(gwv1.GRPCMethodMatchExact, "a.B", "")
				rule.BackendRefs[0].Name = "ws"
				rr, ps = TranslateGRPCRoute(newGRPCRoute(rule), env)
			}
			r := onlyRule(t, rr)
			if len(r.Targets) != 1 {
				t.Fatalf("targets %+v", r.Targets)
			}
			got := r.Targets[0]
			if row.refused == "" {
				for _, p := range ps {
					if p.Condition != nil && p.Condition.Reason == routeReasonUnsupportedProtocol {
						t.Errorf("refused: %v", p)
					}
				}
				if got.Backend == nil || got.Backend.Service != "ws" {
					t.Errorf("target %+v, want Service ws", got)
				}
				return
			}
			hasProblem(t, ps, routeCondResolvedRefs, routeReasonUnsupportedProtocol, row.refused)
			if got.Backend != nil || got.Status != 500 {
				t.Errorf("target %+v, want a 500 share", got)
			}
		})
	}
}
