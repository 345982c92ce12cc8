package gateway

import (
	"cmp"
	"slices"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// Attached is a route and its attachments to Causeway's Gateways.
type Attached struct {
	Route       Route
	Attachments []Attachment
}

// Resolution is who attaches to what: the GatewayClasses and Gateways
// Causeway serves, checked, and every route with a parentRef to one of
// those Gateways.
type Resolution struct {
	// Classes are Causeway's GatewayClasses by name.
	Classes map[string]*Class
	// Gateways are the Gateways of Causeway's classes by
	// "namespace/name", attachedRoutes counted.
	Gateways map[string]*Gateway
	// ListenerSets are the ListenerSets whose parent is one of Gateways,
	// by "namespace/name", checked: the status Causeway writes.
	ListenerSets map[string]*ListenerSet
	// Routes are the routes with at least one status entry from
	// Causeway, in the order given.
	Routes []Attached
	// BackendTLS are the BackendTLSPolicies, each with its conditions
	// and ancestors (the build fills it: backendtls.go).
	BackendTLS []*BackendTLSPolicy
}

// Resolve checks the GatewayClasses that name Causeway, the Gateways of
// those classes, the ListenerSets of those Gateways and the routes'
// parentRefs to them, in that order, and
// counts each listener's attachedRoutes. features are the data plane's
// supported features (GatewayClass supportedFeatures); addresses returns
// a Gateway's data-plane addresses. Objects of other controllers get
// nothing: no status, no Problem.
func Resolve(classes []*gwv1.GatewayClass, gateways []*gwv1.Gateway, sets []*gwv1.ListenerSet, routes []Route,
	features []gwv1.FeatureName, addresses func(namespace, name string) []string, in Inputs) (*Resolution, []model.Problem) {
	res := &Resolution{Classes: map[string]*Class{}, Gateways: map[string]*Gateway{}}
	var problems []model.Problem
	for _, gc := range classes {
		c, ps := CheckClass(gc, features, in.Now)
		problems = append(problems, ps...)
		if c != nil {
			res.Classes[c.Name] = c
		}
	}
	var list []*Gateway
	for _, gw := range gateways {
		class := res.Classes[string(gw.Spec.GatewayClassName)]
		if class == nil {
			continue
		}
		var addrs []string
		if addresses != nil {
			addrs = addresses(gw.Namespace, gw.Name)
		}
		g, ps := CheckGateway(gw, class, addrs, in)
		problems = append(problems, ps...)
		res.Gateways[gw.Namespace+"/"+gw.Name] = g
		list = append(list, g)
	}
	var ps []model.Problem
	res.ListenerSets, ps = checkListenerSets(sets, res.Gateways, in)
	problems = append(problems, ps...)
	var all [][]Attachment
	for _, r := range routes {
		as, ps := Attach(r, res, in)
		problems = append(problems, ps...)
		if len(as) > 0 {
			res.Routes = append(res.Routes, Attached{Route: r, Attachments: as})
			all = append(all, as)
		}
	}
	slices.SortFunc(list, func(a, b *Gateway) int { return cmp.Compare(a.Ref.Key(), b.Ref.Key()) })
	SetAttachedRoutes(list, all)
	return res, problems
}
