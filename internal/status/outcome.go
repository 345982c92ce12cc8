// Package status writes what the controller owes the Kubernetes API about
// each Ingress: status.loadBalancer.ingress, here, and Events, in package
// events. Only the replica holding the leader Lease (package leader) writes;
// every replica follows each sync's Outcome, so a new leader knows the
// current state without replaying history.
package status

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// Outcome is one sync's verdict on every Ingress in its snapshot.
type Outcome struct {
	// Applied is true when the configuration built from the snapshot is
	// live in nginx; ApplyError says why not otherwise.
	Applied    bool
	ApplyError string
	Ingresses  []Verdict
	// VirtualServers are the verdicts on the VirtualServers of ours, in
	// snapshot order; those of other classes are left out entirely.
	VirtualServers []VirtualServerVerdict
	// TransportServers are the verdicts on the TransportServers of ours,
	// in snapshot order; those of other classes are left out entirely.
	TransportServers []TransportServerVerdict
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

// VirtualServerVerdict is what a sync made of one VirtualServer of ours.
type VirtualServerVerdict struct {
	VirtualServer *nicv1.VirtualServer
	// Rejected is true when the whole VirtualServer was left out of the
	// configuration.
	Rejected bool
	// Problems are the model's problems with this VirtualServer, in model
	// order.
	Problems []model.Problem
}

// Key is "namespace/name".
func (v VirtualServerVerdict) Key() string {
	return v.VirtualServer.Namespace + "/" + v.VirtualServer.Name
}

// TransportServerVerdict is what a sync made of one TransportServer of
// ours.
type TransportServerVerdict struct {
	TransportServer *nicv1.TransportServer
	// Rejected is true when the TransportServer was left out of the
	// configuration (invalid, or its listener belongs to another).
	Rejected bool
	// Problems are the model's problems with this TransportServer, in
	// model order.
	Problems []model.Problem
}

// Key is "namespace/name".
func (v TransportServerVerdict) Key() string {
	return v.TransportServer.Namespace + "/" + v.TransportServer.Name
}

// TransportServerIsOurs reports whether this controller serves ts, as
// VirtualServerIsOurs does for VirtualServers.
func TransportServerIsOurs(classes *ingress.ClassFilter, ts *nicv1.TransportServer) bool {
	return ts.Spec.IngressClass == "" || classes.IsOursName(ts.Spec.IngressClass)
}

// VirtualServerIsOurs reports whether this controller serves vs: one that
// names no class is everyone's (as in NIC), one that names a class is ours
// when that class is. It decides as the configuration builder does.
func VirtualServerIsOurs(classes *ingress.ClassFilter, vs *nicv1.VirtualServer) bool {
	return vs.Spec.IngressClass == "" || classes.IsOursName(vs.Spec.IngressClass)
}

// Live reports whether the Ingress is served by the configuration that is
// live in nginx (possibly degraded, see Problems).
func (v Verdict) Live(o Outcome) bool { return o.Applied && v.Ours && !v.Rejected }

// Key is "namespace/name".
func (v Verdict) Key() string { return v.Ingress.Namespace + "/" + v.Ingress.Name }

// NewOutcome joins a sync's snapshot, problems and apply error. A nil
// snapshot yields an empty, unapplied Outcome.
func NewOutcome(snap *source.Snapshot, problems []model.Problem, applyErr error, class ingress.ClassOptions) Outcome {
	o := Outcome{Applied: applyErr == nil && snap != nil}
	if applyErr != nil {
		o.ApplyError = applyErr.Error()
	}
	if snap == nil {
		return o
	}
	byIngress := map[string][]model.Problem{}
	byVirtualServer := map[string][]model.Problem{}
	byTransportServer := map[string][]model.Problem{}
	others := map[model.ObjectRef][]model.Problem{}
	for _, p := range problems {
		k := p.Object.Namespace + "/" + p.Object.Name
		if p.Object.Kind == "VirtualServer" {
			// Also among Others below, which carry the Events.
			byVirtualServer[k] = append(byVirtualServer[k], p)
		}
		if p.Object.Kind == "TransportServer" {
			byTransportServer[k] = append(byTransportServer[k], p)
		}
		if p.Object.Kind == "Ingress" {
			byIngress[k] = append(byIngress[k], p)
		} else {
			ref := model.ObjectRef{Kind: p.Object.Kind, Namespace: p.Object.Namespace, Name: p.Object.Name}
			others[ref] = append(others[ref], p)
		}
	}
	o.Others = otherProblems(snap, others)
	o.Ingresses = make([]Verdict, 0, len(snap.Ingresses))
	for _, ing := range snap.Ingresses {
		v := Verdict{Ingress: ing, Ours: ingress.IsOurs(class, snap.IngressClasses, ing)}
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
	classes := ingress.NewClassFilter(class, snap.IngressClasses)
	o.VirtualServers = virtualServerVerdicts(snap, byVirtualServer, classes)
	o.TransportServers = transportServerVerdicts(snap, byTransportServer, classes)
	return o
}

func transportServerVerdicts(snap *source.Snapshot, byKey map[string][]model.Problem, classes *ingress.ClassFilter) []TransportServerVerdict {
	var out []TransportServerVerdict
	for _, ts := range snap.TransportServers {
		if !TransportServerIsOurs(classes, ts) {
			continue
		}
		v := TransportServerVerdict{TransportServer: ts}
		for _, p := range byKey[v.Key()] {
			if p.Object.UID != "" && p.Object.UID != string(ts.UID) {
				continue
			}
			v.Problems = append(v.Problems, p)
			v.Rejected = v.Rejected || p.Rejected
		}
		out = append(out, v)
	}
	return out
}

func virtualServerVerdicts(snap *source.Snapshot, byKey map[string][]model.Problem, classes *ingress.ClassFilter) []VirtualServerVerdict {
	var out []VirtualServerVerdict
	for _, vs := range snap.VirtualServers {
		if !VirtualServerIsOurs(classes, vs) {
			continue
		}
		v := VirtualServerVerdict{VirtualServer: vs}
		for _, p := range byKey[v.Key()] {
			if p.Object.UID != "" && p.Object.UID != string(vs.UID) {
				continue
			}
			v.Problems = append(v.Problems, p)
			v.Rejected = v.Rejected || p.Rejected
		}
		out = append(out, v)
	}
	return out
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
	return out
}
