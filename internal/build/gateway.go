package build

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// gatewayProcessor is where Gateway API's kinds become listeners,
// servers and locations (internal/frontend/gateway translates them).
// Until the data plane serves them, it reports every object that names a
// GatewayClass of ours, directly or through a Gateway, so that nothing the
// controller reads goes unsaid; other implementations' objects are not
// ours to report.
type gatewayProcessor struct{ *builder }

func (b *gatewayProcessor) objects(*source.Snapshot) []object { return nil }

// notServed ends every Gateway API Problem until the kinds are served.
const notServed = "Gateway API is read but not served yet by this version of Causeway; no traffic is routed for it and no status is written"

func (b *gatewayProcessor) after(snap *source.Snapshot) {
	classes := map[string]bool{}
	for _, gc := range snap.GatewayClasses {
		if gateway.OurClass(gc) {
			classes[gc.Name] = true
			b.problem(gatewayObject("GatewayClass", gc), model.ReasonUnsupported, true, "controllerName %s: %s", gateway.ControllerName, notServed)
		}
	}
	gateways := map[string]bool{}
	for _, gw := range snap.Gateways {
		if classes[string(gw.Spec.GatewayClassName)] {
			gateways[gw.Namespace+"/"+gw.Name] = true
			b.problem(gatewayObject("Gateway", gw), model.ReasonUnsupported, true, "gatewayClassName %s: %s", gw.Spec.GatewayClassName, notServed)
		}
	}
	report := func(kind string, obj metav1.Object, parents []gwv1.ParentReference) {
		for _, p := range parents {
			if (p.Group != nil && *p.Group != gwv1.GroupName) || (p.Kind != nil && *p.Kind != "Gateway") {
				continue
			}
			ns := obj.GetNamespace()
			if p.Namespace != nil {
				ns = string(*p.Namespace)
			}
			if gateways[ns+"/"+string(p.Name)] {
				b.problem(gatewayObject(kind, obj), model.ReasonUnsupported, true, "parentRef Gateway %s/%s: %s", ns, p.Name, notServed)
				return
			}
		}
	}
	for _, r := range snap.HTTPRoutes {
		report("HTTPRoute", r, r.Spec.ParentRefs)
	}
	for _, r := range snap.GRPCRoutes {
		report("GRPCRoute", r, r.Spec.ParentRefs)
	}
	for _, r := range snap.TLSRoutes {
		report("TLSRoute", r, r.Spec.ParentRefs)
	}
	for _, r := range snap.TCPRoutes {
		report("TCPRoute", r, r.Spec.ParentRefs)
	}
	for _, r := range snap.UDPRoutes {
		report("UDPRoute", r, r.Spec.ParentRefs)
	}
}

func gatewayObject(kind string, o metav1.Object) model.ObjectRef {
	return model.ObjectRef{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName(), UID: string(o.GetUID())}
}
