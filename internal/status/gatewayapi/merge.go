package gatewayapi

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
)

// Apply returns a copy of obj whose status is w merged into obj's, or nil
// when obj's status is that already (or w is not for obj's kind). obj is
// the stored object, as a snapshot or a fresh read has it; it is never
// changed.
func (w Want) Apply(obj Object) Object {
	switch o := obj.(type) {
	case *gwv1.GatewayClass:
		if w.Class == nil {
			return nil
		}
		st := gwv1.GatewayClassStatus{
			Conditions:        keepTimes(o.Status.Conditions, w.Class.Conditions, w.Now),
			SupportedFeatures: w.Class.SupportedFeatures,
		}
		if equality.Semantic.DeepEqual(st, o.Status) {
			return nil
		}
		c := o.DeepCopy()
		c.Status = st
		return c
	case *gwv1.Gateway:
		if w.Gateway == nil {
			return nil
		}
		st := gatewayStatus(o.Status, *w.Gateway, w.Now)
		if equality.Semantic.DeepEqual(st, o.Status) {
			return nil
		}
		c := o.DeepCopy()
		c.Status = st
		return c
	case *gwv1.ListenerSet:
		return w.applyListenerSet(o)
	case *gwv1.BackendTLSPolicy:
		return w.applyPolicy(o)
	}
	rs := routeStatus(obj)
	if rs == nil {
		return nil
	}
	parents := mergeParents(rs.Parents, w.Parents, w.Now)
	if equality.Semantic.DeepEqual(parents, rs.Parents) {
		return nil
	}
	c := obj.DeepCopyObject().(Object)
	routeStatus(c).Parents = parents
	return c
}

// routeStatus is the RouteStatus of a route of any kind, nil for other
// objects.
func routeStatus(obj Object) *gwv1.RouteStatus {
	switch r := obj.(type) {
	case *gwv1.HTTPRoute:
		return &r.Status.RouteStatus
	case *gwv1.GRPCRoute:
		return &r.Status.RouteStatus
	case *gwv1.TLSRoute:
		return &r.Status.RouteStatus
	case *gwv1.TCPRoute:
		return &r.Status.RouteStatus
	case *gwv1.UDPRoute:
		return &r.Status.RouteStatus
	}
	return nil
}

// gatewayStatus is want, whole, with the lastTransitionTimes of stored's
// conditions (the Gateway's, and each listener's by name) whose status
// did not change.
func gatewayStatus(stored, want gwv1.GatewayStatus, now metav1.Time) gwv1.GatewayStatus {
	return gwv1.GatewayStatus{
		Addresses:            want.Addresses,
		AttachedListenerSets: want.AttachedListenerSets,
		Conditions:           keepTimes(stored.Conditions, want.Conditions, now),
		Listeners: listenerTimes(stored.Listeners, want.Listeners, now,
			func(l *gwv1.ListenerStatus) (gwv1.SectionName, *[]metav1.Condition) { return l.Name, &l.Conditions }),
	}
}

// listenerTimes is want's listener statuses (a Gateway's or a
// ListenerSet's; fields gives one's name and conditions) with keepTimes
// applied to each against stored's listener of the same name.
func listenerTimes[L any](stored, want []L, now metav1.Time, fields func(*L) (gwv1.SectionName, *[]metav1.Condition)) []L {
	var out []L
	for _, l := range want {
		name, conds := fields(&l)
		var before []metav1.Condition
		for i := range stored {
			if n, c := fields(&stored[i]); n == name {
				before = *c
			}
		}
		*conds = keepTimes(before, *conds, now)
		out = append(out, l)
	}
	return out
}

// mergeParents is a route's status.parents with Causeway's entries
// replaced by ours: the entries of other controllers stay as they are and
// where they are; an entry of ours stays in place when ours has its
// parentRef (then with ours' conditions), and goes when ours has not;
// ours' other entries follow, in order.
func mergeParents(stored, ours []gwv1.RouteParentStatus, now metav1.Time) []gwv1.RouteParentStatus {
	out := make([]gwv1.RouteParentStatus, 0, len(stored)+len(ours))
	used := make([]bool, len(ours))
	for _, s := range stored {
		if s.ControllerName != gateway.ControllerName {
			out = append(out, s)
			continue
		}
		for j := range ours {
			if !used[j] && sameParent(s.ParentRef, ours[j].ParentRef) {
				used[j] = true
				e := ours[j]
				e.Conditions = keepTimes(s.Conditions, e.Conditions, now)
				out = append(out, e)
				break
			}
		}
	}
	for j, e := range ours {
		if !used[j] {
			e.Conditions = keepTimes(nil, e.Conditions, now)
			out = append(out, e)
		}
	}
	return out
}

// sameParent reports whether two parentRefs name the same parent, with
// the API's defaults for group and kind.
func sameParent(a, b gwv1.ParentReference) bool {
	str := func(p *string, def string) string {
		if p == nil {
			return def
		}
		return *p
	}
	port := func(p *gwv1.PortNumber) gwv1.PortNumber {
		if p == nil {
			return 0
		}
		return *p
	}
	return str((*string)(a.Group), gwv1.GroupName) == str((*string)(b.Group), gwv1.GroupName) &&
		str((*string)(a.Kind), "Gateway") == str((*string)(b.Kind), "Gateway") &&
		str((*string)(a.Namespace), "") == str((*string)(b.Namespace), "") &&
		a.Name == b.Name &&
		str((*string)(a.SectionName), "") == str((*string)(b.SectionName), "") &&
		port(a.Port) == port(b.Port)
}

// keepTimes is want with, as meta.SetStatusCondition does, each
// condition's lastTransitionTime taken from stored's condition of its
// type when the status is the same; else its own, or now when it has
// none.
func keepTimes(stored, want []metav1.Condition, now metav1.Time) []metav1.Condition {
	if want == nil {
		return nil
	}
	out := make([]metav1.Condition, len(want))
	for i, c := range want {
		if s := meta.FindStatusCondition(stored, c.Type); s != nil && s.Status == c.Status {
			c.LastTransitionTime = s.LastTransitionTime
		} else if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = now
		}
		out[i] = c
	}
	return out
}
