// Package status writes what the controller owes the Kubernetes API about
// each Ingress: status.loadBalancer.ingress, here, and Events, in package
// events. Only the replica holding the leader Lease (package leader) writes;
// a replica that begins leading asks the controller for a sync and plans
// from its Outcome, so a new leader knows the current state without
// replaying history.
package status

import (
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/status/gatewayapi"
)

// Outcome is one sync's verdict on every Ingress in its snapshot.
type Outcome struct {
	// Applied is true when the configuration built from the snapshot is
	// live in nginx; ApplyError says why not otherwise.
	Applied    bool
	ApplyError string
	Ingresses  []Verdict
	// Resources are the verdicts on the objects of ours of NGINX Ingress
	// Controller's Kinds, kind by kind in snapshot order; those of other
	// classes are left out entirely.
	Resources []ResourceVerdict
	// GatewayAPI is what the GatewayWriter reads: the snapshot, the
	// build's Gateway API Resolution and its Problems. NewOutcome leaves
	// it empty; the caller, who has the Resolution, fills it.
	GatewayAPI gatewayapi.Input
	// Others are the problems of other objects (Services, Secrets, the
	// ConfigMap), grouped by object, in snapshot order.
	Others []ObjectProblems
}

// ObjectProblems are the model's problems with one object that is not an
// Ingress.
type ObjectProblems struct {
	Ref      model.ObjectRef
	Object   runtime.Object
	Problems []model.Problem
}

// Verdict is what a sync made of one Ingress.
type Verdict struct {
	Ingress *networkingv1.Ingress
	// Ours is true when the Ingress's class is served by this controller.
	// Other Ingresses are ignored entirely: no events, no status.
	Ours bool
	// Rejected is true when the whole Ingress was left out of the
	// configuration.
	Rejected bool
	// Problems are the model's problems with this Ingress, in model order.
	Problems []model.Problem
}

// Live reports whether the Ingress is served by the configuration that is
// live in nginx (possibly degraded, see Problems).
func (v Verdict) Live(o Outcome) bool { return o.Applied && v.Ours && !v.Rejected }

// Key is "namespace/name".
func (v Verdict) Key() string { return v.Ingress.Namespace + "/" + v.Ingress.Name }

// NewOutcome joins a sync's snapshot, problems and apply error. A nil
// snapshot yields an empty, unapplied Outcome.
func NewOutcome(snap *source.Snapshot, problems []model.Problem, applyErr error, classOpts class.Options) Outcome {
	o := Outcome{Applied: applyErr == nil && snap != nil}
	if applyErr != nil {
		o.ApplyError = applyErr.Error()
	}
	if snap == nil {
		return o
	}
	byIngress := map[string][]model.Problem{}
	others := map[model.ObjectRef][]model.Problem{}
	for _, p := range problems {
		k := p.Object.Namespace + "/" + p.Object.Name
		if p.Object.Kind == "Ingress" {
			byIngress[k] = append(byIngress[k], p)
		} else {
			ref := model.ObjectRef{Kind: p.Object.Kind, Namespace: p.Object.Namespace, Name: p.Object.Name}
			others[ref] = append(others[ref], p)
		}
	}
	o.Others = otherProblems(snap, others)
	classes := class.NewFilter(classOpts, snap.IngressClasses)
	o.Ingresses = make([]Verdict, 0, len(snap.Ingresses))
	for _, ing := range snap.Ingresses {
		v := Verdict{Ingress: ing, Ours: ingress.Class.IsOurs(classes, ing)}
		if v.Ours {
			for _, p := range byIngress[v.Key()] {
				if p.Object.UID != "" && p.Object.UID != string(ing.UID) {
					continue
				}
				v.Problems = append(v.Problems, p)
				v.Rejected = v.Rejected || p.Rejected
			}
		}
		o.Ingresses = append(o.Ingresses, v)
	}
	o.Resources = resourceVerdicts(snap, others, classes)
	return o
}

// resourceVerdicts are the verdicts on the objects of ours of the Kinds,
// from their problems (which stay among Others too: those carry the
// Events).
func resourceVerdicts(snap *source.Snapshot, byRef map[model.ObjectRef][]model.Problem, classes *class.Filter) []ResourceVerdict {
	var out []ResourceVerdict
	add := func(kind Kind, obj metav1.Object, ours bool, st ResourceStatus) {
		if !ours {
			return
		}
		v := ResourceVerdict{Kind: kind, Object: obj, Status: st}
		for _, p := range byRef[model.ObjectRef{Kind: kind.Name, Namespace: obj.GetNamespace(), Name: obj.GetName()}] {
			if p.Object.UID != "" && p.Object.UID != string(obj.GetUID()) {
				continue // an older namesake's
			}
			v.Problems = append(v.Problems, p)
			v.Rejected = v.Rejected || p.Rejected
		}
		out = append(out, v)
	}
	for _, vs := range snap.VirtualServers {
		add(VirtualServers, vs, nic.VirtualServerClass.IsOurs(classes, vs), ResourceStatus{State: vs.Status.State, Reason: vs.Status.Reason,
			Message: vs.Status.Message, ExternalEndpoints: vs.Status.ExternalEndpoints})
	}
	users := vsrUsers(snap, out)
	for _, r := range snap.VirtualServerRoutes {
		n := len(out)
		add(VirtualServerRoutes, r, nic.VirtualServerRouteClass.IsOurs(classes, r), ResourceStatus{State: r.Status.State, Reason: r.Status.Reason,
			Message: r.Status.Message, ReferencedBy: r.Status.ReferencedBy, ExternalEndpoints: r.Status.ExternalEndpoints})
		if len(out) > n && !out[n].Rejected {
			out[n].ReferencedBy = users[r.Namespace+"/"+r.Name]
		}
	}
	for _, ts := range snap.TransportServers {
		add(TransportServers, ts, nic.TransportServerClass.IsOurs(classes, ts), ResourceStatus{State: ts.Status.State, Reason: ts.Status.Reason, Message: ts.Status.Message})
	}
	for _, p := range snap.Policies {
		add(Policies, p, nic.PolicyClass.IsOurs(classes, p), ResourceStatus{State: p.Status.State, Reason: p.Status.Reason, Message: p.Status.Message})
	}
	return out
}

// vsrUsers is the VirtualServer ("namespace/name") that uses each
// VirtualServerRoute: the first served one (of verdicts, neither rejected
// nor beaten to its host) whose route names it and whose host is the
// VirtualServerRoute's.
func vsrUsers(snap *source.Snapshot, verdicts []ResourceVerdict) map[string]string {
	hosts := make(map[string]string, len(snap.VirtualServerRoutes))
	for _, r := range snap.VirtualServerRoutes {
		hosts[r.Namespace+"/"+r.Name] = r.Spec.Host
	}
	users := map[string]string{}
	for _, v := range verdicts {
		vs, ok := v.Object.(*nicv1.VirtualServer)
		if !ok || v.Rejected || slices.ContainsFunc(v.Problems, func(p model.Problem) bool { return p.Reason == model.ReasonCollision }) {
			continue
		}
		for _, r := range vs.Spec.Routes {
			key := r.Route
			if key == "" {
				continue
			}
			if !strings.Contains(key, "/") {
				key = vs.Namespace + "/" + key
			}
			if host, ok := hosts[key]; ok && host == vs.Spec.Host && users[key] == "" {
				users[key] = v.Key()
			}
		}
	}
	return users
}

// otherProblems finds the object each group of problems names, so that an
// Event can be attached to it; problems of objects the snapshot lacks are
// left to the log.
func otherProblems(snap *source.Snapshot, byRef map[model.ObjectRef][]model.Problem) []ObjectProblems {
	if len(byRef) == 0 {
		return nil
	}
	var out []ObjectProblems
	add := func(kind, ns, name string, obj runtime.Object) {
		ref := model.ObjectRef{Kind: kind, Namespace: ns, Name: name}
		if ps, ok := byRef[ref]; ok {
			out = append(out, ObjectProblems{Ref: ref, Object: obj, Problems: ps})
		}
	}
	for _, s := range snap.Services {
		add("Service", s.Namespace, s.Name, s)
	}
	for _, s := range snap.Secrets {
		add("Secret", s.Namespace, s.Name, s)
	}
	for _, c := range snap.ConfigMaps {
		add("ConfigMap", c.Namespace, c.Name, c)
	}
	for _, v := range snap.VirtualServers {
		add("VirtualServer", v.Namespace, v.Name, v)
	}
	for _, r := range snap.VirtualServerRoutes {
		add("VirtualServerRoute", r.Namespace, r.Name, r)
	}
	for _, p := range snap.Policies {
		add("Policy", p.Namespace, p.Name, p)
	}
	for _, t := range snap.TransportServers {
		add("TransportServer", t.Namespace, t.Name, t)
	}
	for _, g := range snap.GlobalConfigurations {
		add("GlobalConfiguration", g.Namespace, g.Name, g)
	}
	for _, g := range snap.GatewayClasses {
		add("GatewayClass", g.Namespace, g.Name, g)
	}
	for _, g := range snap.Gateways {
		add("Gateway", g.Namespace, g.Name, g)
	}
	for _, l := range snap.ListenerSets {
		add("ListenerSet", l.Namespace, l.Name, l)
	}
	for _, r := range snap.HTTPRoutes {
		add("HTTPRoute", r.Namespace, r.Name, r)
	}
	for _, r := range snap.GRPCRoutes {
		add("GRPCRoute", r.Namespace, r.Name, r)
	}
	for _, r := range snap.TLSRoutes {
		add("TLSRoute", r.Namespace, r.Name, r)
	}
	for _, r := range snap.TCPRoutes {
		add("TCPRoute", r.Namespace, r.Name, r)
	}
	for _, r := range snap.UDPRoutes {
		add("UDPRoute", r.Namespace, r.Name, r)
	}
	for _, p := range snap.BackendTLSPolicies {
		add("BackendTLSPolicy", p.Namespace, p.Name, p)
	}
	return out
}
