package files

import (
	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/source"
)

// addGateway files one of Gateway API's kinds (gateway.networking.k8s.io/v1)
// into the snapshot; other kinds are ignored.
func addGateway(snap *source.Snapshot, obj runtime.Object) {
	switch o := obj.(type) {
	case *gwv1.GatewayClass:
		snap.GatewayClasses = append(snap.GatewayClasses, o)
	case *gwv1.Gateway:
		snap.Gateways = append(snap.Gateways, o)
	case *gwv1.ListenerSet:
		snap.ListenerSets = append(snap.ListenerSets, o)
	case *gwv1.HTTPRoute:
		snap.HTTPRoutes = append(snap.HTTPRoutes, o)
	case *gwv1.GRPCRoute:
		snap.GRPCRoutes = append(snap.GRPCRoutes, o)
	case *gwv1.TLSRoute:
		snap.TLSRoutes = append(snap.TLSRoutes, o)
	case *gwv1.TCPRoute:
		snap.TCPRoutes = append(snap.TCPRoutes, o)
	case *gwv1.UDPRoute:
		snap.UDPRoutes = append(snap.UDPRoutes, o)
	case *gwv1.ReferenceGrant:
		snap.ReferenceGrants = append(snap.ReferenceGrants, o)
	case *gwv1.BackendTLSPolicy:
		snap.BackendTLSPolicies = append(snap.BackendTLSPolicies, o)
	}
}
