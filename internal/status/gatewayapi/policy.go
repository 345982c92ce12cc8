package gatewayapi

import (
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
)

// KindBackendTLSPolicy is the policy kind whose status Causeway writes:
// status.ancestors, one entry per Gateway of Causeway's whose routes
// reach a target of the policy (the conformance tests' ancestorRef),
// with its Accepted and ResolvedRefs conditions. A policy may have
// ancestors of several controllers: only the entries with Causeway's
// controllerName are ours; the others are kept untouched, in place.
const KindBackendTLSPolicy = gateway.KindBackendTLSPolicy

// maxAncestors is the API's bound on status.ancestors.
const maxAncestors = 16

// planPolicies adds a Target for every BackendTLSPolicy of the snapshot
// that the build resolved, and for every one still holding an entry of
// ours (to remove it).
func planPolicies(in Input, res *gateway.Resolution, add func(kind string, o Object, w Want)) {
	byKey := make(map[string]*gateway.BackendTLSPolicy, len(res.BackendTLS))
	for _, p := range res.BackendTLS {
		byKey[p.Ref.Namespace+"/"+p.Ref.Name] = p
	}
	for _, o := range in.Snapshot.BackendTLSPolicies {
		p := byKey[o.Namespace+"/"+o.Name]
		if p != nil && !sameUID(p.Ref.UID, o) {
			p = nil
		}
		if p == nil || len(p.Ancestors) == 0 {
			if hasOurAncestor(o.Status.Ancestors) {
				add(KindBackendTLSPolicy, o, Want{Policy: true})
			}
			continue
		}
		add(KindBackendTLSPolicy, o, Want{Policy: true, Ancestors: policyAncestors(p, o.Generation)})
	}
}

// policyAncestors are a policy's entries of ours, one per ancestor
// Gateway, each with the policy's conditions at generation gen.
func policyAncestors(p *gateway.BackendTLSPolicy, gen int64) []gwv1.PolicyAncestorStatus {
	out := make([]gwv1.PolicyAncestorStatus, 0, len(p.Ancestors))
	for _, a := range p.Ancestors {
		out = append(out, gwv1.PolicyAncestorStatus{AncestorRef: gatewayRef(a), ControllerName: gateway.ControllerName,
			Conditions: []metav1.Condition{policyCond(p.Accepted, gen), policyCond(p.ResolvedRefs, gen)}})
	}
	return out
}

func policyCond(c metav1.Condition, gen int64) metav1.Condition {
	c.ObservedGeneration = gen
	c.Message = bound(c.Message)
	return c
}

// gatewayRef is the ParentReference of a Gateway.
func gatewayRef(g model.ObjectRef) gwv1.ParentReference {
	group := gwv1.Group(gwv1.GroupName)
	kind := gwv1.Kind("Gateway")
	ns := gwv1.Namespace(g.Namespace)
	return gwv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: gwv1.ObjectName(g.Name)}
}

func hasOurAncestor(as []gwv1.PolicyAncestorStatus) bool {
	for _, a := range as {
		if a.ControllerName == gateway.ControllerName {
			return true
		}
	}
	return false
}

// applyPolicy is Apply for a BackendTLSPolicy: its ancestors with ours
// merged in, or nil when they are that already.
func (w Want) applyPolicy(o *gwv1.BackendTLSPolicy) Object {
	if !w.Policy {
		return nil
	}
	as := mergeAncestors(o.Status.Ancestors, w.Ancestors, w.Now)
	if equality.Semantic.DeepEqual(as, o.Status.Ancestors) {
		return nil
	}
	c := o.DeepCopy()
	c.Status.Ancestors = as
	return c
}

// mergeAncestors is stored with Causeway's entries replaced by ours, as
// mergeParents does for routes, within the API's bound: ours that do not
// fit are left out.
func mergeAncestors(stored, ours []gwv1.PolicyAncestorStatus, now metav1.Time) []gwv1.PolicyAncestorStatus {
	out := make([]gwv1.PolicyAncestorStatus, 0, len(stored)+len(ours))
	used := make([]bool, len(ours))
	others := 0
	for _, s := range stored {
		if s.ControllerName != gateway.ControllerName {
			others++
		}
	}
	room := maxAncestors - others
	for _, s := range stored {
		if s.ControllerName != gateway.ControllerName {
			out = append(out, s)
			continue
		}
		for j := range ours {
			if !used[j] && room > 0 && sameParent(s.AncestorRef, ours[j].AncestorRef) {
				used[j] = true
				room--
				e := ours[j]
				e.Conditions = keepTimes(s.Conditions, e.Conditions, now)
				out = append(out, e)
				break
			}
		}
	}
	for j, e := range ours {
		if !used[j] && room > 0 {
			room--
			e.Conditions = keepTimes(nil, e.Conditions, now)
			out = append(out, e)
		}
	}
	if len(out) == 0 && stored == nil {
		return nil
	}
	return out
}
