package gateway

import (
	"fmt"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// The Service port's appProtocol (GEP-1911) says how a backend wants to
// be spoken to. Causeway's HTTPRoute locations speak HTTP/1.1 to their
// backends, passing WebSocket upgrades through, with TLS when a
// BackendTLSPolicy says so; its GRPCRoute locations speak HTTP/2 (h2c, or
// TLS with a policy). The kubernetes.io protocols a location cannot speak
// are refused with ResolvedRefs UnsupportedProtocol; other values, which
// name no standard protocol, are spoken to as the route's kind speaks.
const (
	appProtocolH2C = "kubernetes.io/h2c"
	appProtocolWS  = "kubernetes.io/ws"
	appProtocolWSS = "kubernetes.io/wss"
)

var routeReasonUnsupportedProtocol = string(gwv1.RouteReasonUnsupportedProtocol)

// protocolRefused is why a route of kind cannot speak to backend b on
// its port of appProtocol p, or "". tls reports whether a
// BackendTLSPolicy applies to b.
func protocolRefused(kind, p string, tls bool) string {
	switch {
	case kind == "GRPCRoute" && (p == appProtocolWS || p == appProtocolWSS):
		return "gRPC is HTTP/2, and a WebSocket backend speaks HTTP/1.1"
	case kind == "HTTPRoute" && p == appProtocolH2C:
		return "Causeway speaks HTTP/1.1 to an HTTPRoute's backends (nginx proxies HTTP/2 to gRPC backends only: use a GRPCRoute)"
	case p == appProtocolWSS && !tls:
		return "WebSocket over TLS needs a BackendTLSPolicy for the Service, which says how the backend's certificate is checked"
	}
	return ""
}

// checkProtocol reports, with a Problem, whether the route can speak to
// backend b as its Service port's appProtocol asks.
func (t *routeTranslator) checkProtocol(field string, b Backend) bool {
	if t.env.AppProtocol == nil || (t.ref.Kind != "HTTPRoute" && t.ref.Kind != "GRPCRoute") {
		return true
	}
	p := t.env.AppProtocol(b.Namespace, b.Service, b.Port)
	if p == "" {
		return true
	}
	tls := t.env.BackendTLS != nil && t.env.BackendTLS(b) != nil
	why := protocolRefused(t.ref.Kind, p, tls)
	if why == "" {
		return true
	}
	t.problem(routeCondResolvedRefs, routeReasonUnsupportedProtocol, fmt.Sprintf("%s: Service %s/%s port %d has appProtocol %q: %s; its share answers 500",
		field, b.Namespace, b.Service, b.Port, model.Truncate(p), why))
	return false
}
