// Package gateway is the Gateway API front-end: it translates
// GatewayClasses, Gateways, their routes (HTTPRoute, GRPCRoute, TLSRoute,
// TCPRoute, UDPRoute), ReferenceGrants and BackendTLSPolicies
// (gateway.networking.k8s.io/v1) into the typed model, and lists what
// those objects reference (references.go).
package gateway
