package gateway

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// Route is what attachment reads of a route of any kind.
type Route interface {
	metav1.Object
	// RouteKind is the route's kind: HTTPRoute, GRPCRoute, TLSRoute,
	// TCPRoute or UDPRoute.
	RouteKind() string
	// ParentRefs is spec.parentRefs.
	ParentRefs() []gwv1.ParentReference
	// Hostnames is spec.hostnames; nil for TCPRoute and UDPRoute.
	Hostnames() []gwv1.Hostname
}

type httpRoute struct{ *gwv1.HTTPRoute }
type grpcRoute struct{ *gwv1.GRPCRoute }
type tlsRoute struct{ *gwv1.TLSRoute }
type tcpRoute struct{ *gwv1.TCPRoute }
type udpRoute struct{ *gwv1.UDPRoute }

// HTTPRouteOf and its siblings make a route of each kind a Route.
func HTTPRouteOf(r *gwv1.HTTPRoute) Route { return httpRoute{r} }
func GRPCRouteOf(r *gwv1.GRPCRoute) Route { return grpcRoute{r} }
func TLSRouteOf(r *gwv1.TLSRoute) Route   { return tlsRoute{r} }
func TCPRouteOf(r *gwv1.TCPRoute) Route   { return tcpRoute{r} }
func UDPRouteOf(r *gwv1.UDPRoute) Route   { return udpRoute{r} }

func (r httpRoute) RouteKind() string                  { return kindHTTPRoute }
func (r httpRoute) ParentRefs() []gwv1.ParentReference { return r.Spec.ParentRefs }
func (r httpRoute) Hostnames() []gwv1.Hostname         { return r.Spec.Hostnames }
func (r grpcRoute) RouteKind() string                  { return kindGRPCRoute }
func (r grpcRoute) ParentRefs() []gwv1.ParentReference { return r.Spec.ParentRefs }
func (r grpcRoute) Hostnames() []gwv1.Hostname         { return r.Spec.Hostnames }
func (r tlsRoute) RouteKind() string                   { return kindTLSRoute }
func (r tlsRoute) ParentRefs() []gwv1.ParentReference  { return r.Spec.ParentRefs }
func (r tlsRoute) Hostnames() []gwv1.Hostname          { return r.Spec.Hostnames }
func (r tcpRoute) RouteKind() string                   { return kindTCPRoute }
func (r tcpRoute) ParentRefs() []gwv1.ParentReference  { return r.Spec.ParentRefs }
func (r tcpRoute) Hostnames() []gwv1.Hostname          { return nil }
func (r udpRoute) RouteKind() string                   { return kindUDPRoute }
func (r udpRoute) ParentRefs() []gwv1.ParentReference  { return r.Spec.ParentRefs }
func (r udpRoute) Hostnames() []gwv1.Hostname          { return nil }

// Attachment is a route's attachment to the parent one of its parentRefs
// names, when that parent is a Gateway Causeway serves.
type Attachment struct {
	// Index is the parentRef's position in spec.parentRefs.
	Index int
	// Gateway is the parent, or the parent's Gateway when the parent is
	// a ListenerSet.
	Gateway *Gateway
	// Set is the parent when it is a ListenerSet, else nil.
	Set *ListenerSet
	// Listeners are the parent's listeners the route attaches to, with
	// the hostnames it serves on each; empty when it is not accepted.
	Listeners []AttachedListener
	// Status is the route's status entry for this parentRef: the
	// parentRef as written, Causeway's controllerName and the Accepted
	// condition. The route translation adds ResolvedRefs (and
	// PartiallyInvalid).
	Status gwv1.RouteParentStatus
}

// Accepted reports whether the route attaches to the parent.
func (a *Attachment) Accepted() bool { return len(a.Listeners) > 0 }

// AttachedListener is a listener a route attaches to.
type AttachedListener struct {
	Listener *Listener
	// Hostnames are the hostnames the route serves on this listener: its
	// hostnames intersected with the listener's (EffectiveHostnames),
	// less Isolated. All (with Hostnames nil) when neither names one: the
	// route serves every host no other listener of the port serves.
	Hostnames []string
	All       bool
	// Isolated are the route's hostnames on this listener that a more
	// specific listener of the same port and protocol serves instead
	// (Listener Isolation: a request matches only its most specific
	// listener). The route stays attached even when every hostname is.
	Isolated []string
}

// Attach attaches a route to the Gateways its parentRefs name. gateways
// are the Gateways Causeway serves by "namespace/name"; a parentRef to
// any other parent (another kind, a Gateway of another controller, or
// none) gets no Attachment and no status from Causeway: only a parent's
// controller writes its entry (RouteStatus.Parents).
//
// For a parentRef to a Gateway of Causeway's, the listeners it selects
// (sectionName, port: all of both when unset) are narrowed to those that
// admit the route's kind and namespace (allowedRoutes), then to those
// whose hostname intersects the route's. The first step that leaves none
// is the Accepted=False reason: NoMatchingParent, NotAllowedByListeners,
// NoMatchingListenerHostname. A route hostname that is not a valid
// Hostname is UnsupportedValue.
//
// A parentRef to a ListenerSet of one of those Gateways selects among the
// ListenerSet's listeners only, and a parentRef to a Gateway among the
// Gateway's own (GEP-1713).
func Attach(route Route, res *Resolution, in Inputs) ([]Attachment, []model.Problem) {
	r := &reporter{obj: refOf(route.RouteKind(), route), gen: route.GetGeneration(), now: in.Now}
	var hosts []string
	var badHost error
	for _, h := range route.Hostnames() {
		if err := CheckHostname(string(h)); err != nil {
			badHost = fmt.Errorf("hostname %q: %w", model.Truncate(string(h)), err)
			break
		}
		hosts = append(hosts, string(h))
	}
	var out []Attachment
	for i, ref := range route.ParentRefs() {
		g, set := parentOfRef(ref, route.GetNamespace(), res)
		if g == nil {
			continue
		}
		a := Attachment{Index: i, Gateway: g, Set: set, Status: gwv1.RouteParentStatus{ParentRef: ref, ControllerName: ControllerName}}
		at := where{parent: i + 1}
		typ := string(gwv1.RouteConditionAccepted)
		var cond metav1.Condition
		if badHost != nil {
			cond = r.bad(at, typ, metav1.ConditionFalse, string(gwv1.RouteReasonUnsupportedValue), badHost.Error())
		} else {
			var reason gwv1.RouteConditionReason
			var msg string
			a.Listeners, reason, msg = attachListeners(route, ref, g, set, hosts, in)
			if reason != "" {
				cond = r.bad(at, typ, metav1.ConditionFalse, string(reason), msg)
			} else {
				cond = r.ok(typ, metav1.ConditionTrue, string(gwv1.RouteReasonAccepted), "the route is attached to "+msg)
			}
		}
		a.Status.Conditions = []metav1.Condition{cond}
		out = append(out, a)
	}
	return out, r.problems
}

// parentOfRef returns the parent of Causeway's a parentRef names: a
// Gateway (set nil), or a ListenerSet of one and its Gateway; nil when
// none. Group and kind default to Gateway API's Gateway, the namespace to
// the route's.
func parentOfRef(ref gwv1.ParentReference, routeNS string, res *Resolution) (*Gateway, *ListenerSet) {
	if ref.Group != nil && *ref.Group != group {
		return nil, nil
	}
	ns := routeNS
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	key := ns + "/" + string(ref.Name)
	switch {
	case ref.Kind == nil || *ref.Kind == kindGateway:
		return res.Gateways[key], nil
	case *ref.Kind == kindListenerSet:
		if s := res.ListenerSets[key]; s != nil {
			return s.Parent, s
		}
	}
	return nil, nil
}

// attachListeners returns the listeners a route attaches to through ref,
// to Gateway g or, when set is not nil, to its ListenerSet set, or why
// none.
func attachListeners(route Route, ref gwv1.ParentReference, g *Gateway, set *ListenerSet, hosts []string, in Inputs) ([]AttachedListener, gwv1.RouteConditionReason, string) {
	parent, candidates := "Gateway "+g.Ref.Namespace+"/"+g.Ref.Name, g.Listeners
	if set != nil {
		parent, candidates = "ListenerSet "+set.Ref.Namespace+"/"+set.Ref.Name, set.Listeners
		if !set.Accepted {
			return nil, gwv1.RouteReasonNoMatchingParent, parent + " is not accepted"
		}
	}
	var selected []*Listener
	for _, l := range candidates {
		if ref.SectionName != nil && *ref.SectionName != "" && l.Name != *ref.SectionName {
			continue
		}
		if ref.Port != nil && *ref.Port != 0 && l.Port != *ref.Port {
			continue
		}
		selected = append(selected, l)
	}
	if len(selected) == 0 {
		return nil, gwv1.RouteReasonNoMatchingParent, fmt.Sprintf("%s has no listener%s", parent, selection(ref))
	}
	var allowed []*Listener
	for _, l := range selected {
		if l.allowsKind(route.RouteKind()) && l.allowsNamespace(route.GetNamespace(), in.Namespaces) {
			allowed = append(allowed, l)
		}
	}
	if len(allowed) == 0 {
		return nil, gwv1.RouteReasonNotAllowedByListeners, fmt.Sprintf("no listener%s of %s admits %ss from namespace %s",
			selection(ref), parent, route.RouteKind(), route.GetNamespace())
	}
	var out []AttachedListener
	var names []string
	for _, l := range allowed {
		h, all, ok := EffectiveHostnames(l.Hostname, hosts)
		if ok {
			served, isolated := isolate(g, l, h)
			out = append(out, AttachedListener{Listener: l, Hostnames: served, All: all, Isolated: isolated})
			names = append(names, model.Truncate(string(l.Name)))
		}
	}
	if len(out) == 0 {
		return nil, gwv1.RouteReasonNoMatchingListenerHostname, fmt.Sprintf("no hostname of the route intersects the hostname of a listener%s of %s",
			selection(ref), parent)
	}
	return out, "", fmt.Sprintf("listeners %s of %s", listNames(names), parent)
}

// isolate splits a route's hostnames on listener l into those it serves
// and those a more specific ready listener of g (its own or an attached
// ListenerSet's) on the same port and
// protocol serves entirely (GatewaySpec.Listeners, "Listeners that are
// distinct only by Hostname" and Listener Isolation): requests for those
// match that listener, never l. A hostname the other listener covers only
// in part stays: the data plane's server_name precedence (exact, then the
// longest wildcard, then the catch-all) sends each request to the most
// specific one, as the spec orders listeners.
func isolate(g *Gateway, l *Listener, hosts []string) (served, isolated []string) {
	var narrower []string
	for _, o := range g.AllListeners() {
		if o == l || o.Port != l.Port || o.Protocol != l.Protocol || !o.Ready() || o.Hostname == l.Hostname {
			continue
		}
		if h, ok := IntersectHostnames(l.Hostname, o.Hostname); ok && h == o.Hostname {
			narrower = append(narrower, o.Hostname)
		}
	}
	if len(narrower) == 0 {
		return hosts, nil
	}
	for _, h := range hosts {
		covered := slices.ContainsFunc(narrower, func(n string) bool {
			in, ok := IntersectHostnames(n, h)
			return ok && in == h
		})
		if covered {
			isolated = append(isolated, h)
		} else {
			served = append(served, h)
		}
	}
	return served, isolated
}

// selection says which listeners a parentRef selects, for messages.
func selection(ref gwv1.ParentReference) string {
	s := ""
	if ref.SectionName != nil && *ref.SectionName != "" {
		s += fmt.Sprintf(" named %q", model.Truncate(string(*ref.SectionName)))
	}
	if ref.Port != nil && *ref.Port != 0 {
		s += fmt.Sprintf(" on port %d", *ref.Port)
	}
	return s
}

// SetAttachedRoutes sets each listener's status.attachedRoutes: the number
// of routes attached to it with Accepted=True, whether or not the
// listener itself is accepted (ListenerStatus.AttachedRoutes). A route
// attached through several parentRefs counts once per listener.
func SetAttachedRoutes(gateways []*Gateway, routes [][]Attachment) {
	count := map[*Listener]int32{}
	for _, attachments := range routes {
		var seen []*Listener
		for _, a := range attachments {
			for _, al := range a.Listeners {
				if !slices.Contains(seen, al.Listener) {
					seen = append(seen, al.Listener)
					count[al.Listener]++
				}
			}
		}
	}
	for _, g := range gateways {
		for i, l := range g.Listeners {
			g.Status.Listeners[i].AttachedRoutes = count[l]
		}
		for _, s := range g.Sets {
			for i, l := range s.Listeners {
				s.Status.Listeners[i].AttachedRoutes = count[l]
			}
		}
	}
}
