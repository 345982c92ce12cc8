// Package gatewayapi computes the status Causeway wants of the Gateway API
// objects of its classes, purely: from one sync's Snapshot, the build's
// Resolution (internal/frontend/gateway) and the Problems, the status of
// each GatewayClass, Gateway, ListenerSet and route, merged into what the
// object holds.
// Package status writes it, as the leader only.
//
// What is ours: a GatewayClass whose controllerName is Causeway's, a
// Gateway of such a class and a ListenerSet whose parent is such a
// Gateway are Causeway's alone, so their status is replaced whole. A route may have parents of several controllers: only
// its status.parents entries with Causeway's controllerName are ours; the
// others are kept untouched, in place.
//
// Every condition keeps the lastTransitionTime it has in the stored status
// while its status does not change, as meta.SetStatusCondition does.
package gatewayapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// The kinds whose status Causeway writes, as Problems and keys name them.
const (
	KindGatewayClass = "GatewayClass"
	KindGateway      = "Gateway"
	KindHTTPRoute    = "HTTPRoute"
	KindGRPCRoute    = "GRPCRoute"
	KindTLSRoute     = "TLSRoute"
	KindTCPRoute     = "TCPRoute"
	KindUDPRoute     = "UDPRoute"
)

// Kinds are the kinds whose status Causeway writes, in the order Plan
// lists them.
var Kinds = []string{KindGatewayClass, KindGateway, KindListenerSet, KindHTTPRoute, KindGRPCRoute, KindTLSRoute, KindTCPRoute, KindUDPRoute, KindBackendTLSPolicy}

// Object is a Gateway API object whose status Causeway writes: one of the
// typed objects of Kinds (*gwv1.GatewayClass, *gwv1.Gateway,
// *gwv1.HTTPRoute, ...).
type Object interface {
	metav1.Object
	runtime.Object
}

// Input is what one sync says of Gateway API's objects.
type Input struct {
	// Snapshot holds the objects as stored, with their status.
	Snapshot *source.Snapshot
	// Resolution is the build's: the status of the classes and Gateways
	// of Causeway's and each route's attachments. Nil when there are
	// none: then the only writes are removals of route entries of ours.
	Resolution *gateway.Resolution
	// Problems are the build's; those of routes with a Condition add
	// conditions to the route's entries.
	Problems []model.Problem
}

// Target is an object whose status Causeway has a say in.
type Target struct {
	// Key is "Kind/namespace/name" ("GatewayClass/name").
	Key  string
	Kind string
	// Object is the object as the snapshot holds it.
	Object Object
	Want   Want
}

// Want is the status Causeway wants of one object: Class for a
// GatewayClass, Gateway for a Gateway, ListenerSet for a ListenerSet (each
// the whole status), Parents for a route (its entries of Causeway's; none
// removes them all).
type Want struct {
	Class   *gwv1.GatewayClassStatus
	Gateway *gwv1.GatewayStatus
	// ListenerSet is a ListenerSet's whole status (listenerset.go).
	ListenerSet *gwv1.ListenerSetStatus
	Parents     []gwv1.RouteParentStatus
	// Policy says the Want is a BackendTLSPolicy's, Ancestors its
	// entries of Causeway's (none removes them all; policy.go).
	Policy    bool
	Ancestors []gwv1.PolicyAncestorStatus
	// Now stamps a condition that is new or changed status and has no
	// time of its own.
	Now metav1.Time
}

// Key is the key of an object of kind: "Kind/namespace/name", or
// "Kind/name" for the cluster-scoped GatewayClass.
func Key(kind string, o metav1.Object) string {
	if o.GetNamespace() == "" {
		return kind + "/" + o.GetName()
	}
	return kind + "/" + o.GetNamespace() + "/" + o.GetName()
}

// Plan returns a Target for every object of in's snapshot Causeway has a
// say in: its GatewayClasses, their Gateways and the ListenerSets of
// those as the Resolution has them, every route it attaches, and every route still holding an entry of
// Causeway's (to remove it). now stamps new conditions. A Target may ask
// for the status the object already has: Want.Apply tells.
func Plan(in Input, now metav1.Time) []Target {
	snap := in.Snapshot
	if snap == nil {
		return nil
	}
	res := in.Resolution
	if res == nil {
		res = &gateway.Resolution{}
	}
	var out []Target
	add := func(kind string, o Object, w Want) {
		w.Now = now
		out = append(out, Target{Key: Key(kind, o), Kind: kind, Object: o, Want: w})
	}
	for _, gc := range snap.GatewayClasses {
		if c := res.Classes[gc.Name]; c != nil && gateway.OurClass(gc) {
			st := *c.Status.DeepCopy()
			setGeneration(st.Conditions, gc.Generation)
			add(KindGatewayClass, gc, Want{Class: &st})
		}
	}
	for _, gw := range snap.Gateways {
		if g := res.Gateways[gw.Namespace+"/"+gw.Name]; g != nil && sameUID(g.Ref.UID, gw) {
			st := *g.Status.DeepCopy()
			setGeneration(st.Conditions, gw.Generation)
			for i := range st.Listeners {
				setGeneration(st.Listeners[i].Conditions, gw.Generation)
			}
			add(KindGateway, gw, Want{Gateway: &st})
		}
	}
	planListenerSets(snap, res, add)
	attached := make(map[string]gateway.Attached, len(res.Routes))
	for _, a := range res.Routes {
		attached[Key(a.Route.RouteKind(), a.Route)] = a
	}
	problems := routeProblems(in.Problems)
	route := func(kind string, o Object, stored []gwv1.RouteParentStatus) {
		key := Key(kind, o)
		a, ok := attached[key]
		if ok && a.Route.GetUID() != o.GetUID() {
			ok = false
		}
		if !ok {
			if hasOurs(stored) {
				add(kind, o, Want{})
			}
			return
		}
		add(kind, o, Want{Parents: routeEntries(a, problems[key], o, now)})
	}
	for _, r := range snap.HTTPRoutes {
		route(KindHTTPRoute, r, r.Status.Parents)
	}
	for _, r := range snap.GRPCRoutes {
		route(KindGRPCRoute, r, r.Status.Parents)
	}
	for _, r := range snap.TLSRoutes {
		route(KindTLSRoute, r, r.Status.Parents)
	}
	for _, r := range snap.TCPRoutes {
		route(KindTCPRoute, r, r.Status.Parents)
	}
	for _, r := range snap.UDPRoutes {
		route(KindUDPRoute, r, r.Status.Parents)
	}
	planPolicies(in, res, add)
	return out
}

// sameUID reports whether uid, when known, is o's.
func sameUID(uid string, o metav1.Object) bool { return uid == "" || uid == string(o.GetUID()) }

func setGeneration(conds []metav1.Condition, gen int64) {
	for i := range conds {
		conds[i].ObservedGeneration = gen
	}
}

// routeProblems are the Problems of routes that carry a condition, by key.
func routeProblems(problems []model.Problem) map[string][]model.Problem {
	out := map[string][]model.Problem{}
	for _, p := range problems {
		if p.Condition == nil {
			continue
		}
		switch p.Object.Kind {
		case KindHTTPRoute, KindGRPCRoute, KindTLSRoute, KindTCPRoute, KindUDPRoute:
			key := p.Object.Kind + "/" + p.Object.Namespace + "/" + p.Object.Name
			out[key] = append(out[key], p)
		}
	}
	return out
}

// hasOurs reports whether a route's stored status has an entry of
// Causeway's.
func hasOurs(parents []gwv1.RouteParentStatus) bool {
	for _, p := range parents {
		if p.ControllerName == gateway.ControllerName {
			return true
		}
	}
	return false
}
