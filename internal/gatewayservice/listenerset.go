package gatewayservice

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ListenerSets are the ListenerSets that may add listener ports to the
// Gateways' Services, and the Namespaces whose labels a Gateway's
// spec.allowedListeners selector reads.
//
// A ListenerSet's listeners are served on its parent Gateway's addresses,
// so its ports belong on that Gateway's Service. Which ListenerSets a
// Gateway admits is decided again here, as the front-end decides it
// (spec.allowedListeners.namespaces: Same, All, Selector; None or unset
// admits none): the Service must have a port before the build can serve a
// listener on it. A ListenerSet admitted but not accepted for another
// reason (its listeners all invalid, say) still adds its ports: a
// Service port nginx does not listen on serves nothing, and the ports are
// there the moment the ListenerSet is fixed.
type ListenerSets struct {
	Sets []*gwv1.ListenerSet
	// Namespaces are the cluster's, with their labels. Nil means they are
	// not known: then a Selector admits every namespace (a port too many
	// costs nothing, a port missing leaves a listener unreachable).
	Namespaces []*corev1.Namespace
}

// of returns the ListenerSets of s whose spec.parentRef names gw and that
// gw admits.
func (s ListenerSets) of(gw *gwv1.Gateway, nsLabels map[string]map[string]string) []*gwv1.ListenerSet {
	var out []*gwv1.ListenerSet
	for _, ls := range s.Sets {
		if namesGateway(ls, gw) && admits(gw, ls.Namespace, nsLabels) {
			out = append(out, ls)
		}
	}
	return out
}

// labels are the Namespaces' labels by name, nil when Namespaces is nil.
func (s ListenerSets) labels() map[string]map[string]string {
	if s.Namespaces == nil {
		return nil
	}
	out := make(map[string]map[string]string, len(s.Namespaces))
	for _, n := range s.Namespaces {
		out[n.Name] = n.Labels
	}
	return out
}

// namesGateway reports whether a ListenerSet's spec.parentRef is gw: group
// gateway.networking.k8s.io and kind Gateway (the defaults), namespace
// the ListenerSet's unless given.
func namesGateway(ls *gwv1.ListenerSet, gw *gwv1.Gateway) bool {
	ref := ls.Spec.ParentRef
	if ref.Group != nil && *ref.Group != gwv1.GroupName || ref.Kind != nil && *ref.Kind != "Gateway" {
		return false
	}
	ns := ls.Namespace
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	return ns == gw.Namespace && string(ref.Name) == gw.Name
}

// admits reports whether gw's spec.allowedListeners admits ListenerSets of
// namespace ns. nsLabels nil: labels unknown (see ListenerSets).
func admits(gw *gwv1.Gateway, ns string, nsLabels map[string]map[string]string) bool {
	a := gw.Spec.AllowedListeners
	if a == nil || a.Namespaces == nil || a.Namespaces.From == nil {
		return false
	}
	switch *a.Namespaces.From {
	case gwv1.NamespacesFromAll:
		return true
	case gwv1.NamespacesFromSame:
		return ns == gw.Namespace
	case gwv1.NamespacesFromSelector:
		if a.Namespaces.Selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(a.Namespaces.Selector)
		if err != nil {
			return false
		}
		if nsLabels == nil {
			return true
		}
		// The label the API server sets on every namespace, as the
		// front-end also reads it.
		set := labels.Set(maps.Clone(nsLabels[ns]))
		if set == nil {
			set = labels.Set{}
		}
		set[corev1.LabelMetadataName] = ns
		return sel.Matches(set)
	}
	return false
}
