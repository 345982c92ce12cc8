package gatewayservice

import (
	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
)

// ListenerSets are the ListenerSets that may add listener ports to the
// Gateways' Services, and the Namespaces whose labels a Gateway's
// spec.allowedListeners selector reads.
//
// A ListenerSet's listeners are served on its parent Gateway's addresses,
// so its ports belong on that Gateway's Service. Which ListenerSets a
// Gateway admits is decided here by the front-end's rule
// (spec.allowedListeners.namespaces: Same, All, Selector; None or unset
// admits none): the Service must have a port before the build can serve a
// listener on it. A ListenerSet admitted but not accepted for another
// reason (its listeners all invalid, say) still adds its ports: a
// Service port nginx does not listen on serves nothing, and the ports are
// there the moment the ListenerSet is fixed.
type ListenerSets struct {
	Sets []*gwv1.ListenerSet
	// Namespaces are the cluster's, with their labels (the snapshot's).
	Namespaces []*corev1.Namespace
}

// of returns the ListenerSets of s whose spec.parentRef names gw and that
// gw admits.
func (s ListenerSets) of(gw *gwv1.Gateway, nsLabels map[string]map[string]string) []*gwv1.ListenerSet {
	var out []*gwv1.ListenerSet
	for _, ls := range s.Sets {
		if key, ok := gateway.ListenerSetParentKey(ls); ok && key == gw.Namespace+"/"+gw.Name &&
			gateway.ListenerSetAllowed(gw, ls.Namespace, nsLabels) == "" {
			out = append(out, ls)
		}
	}
	return out
}

// labels are the Namespaces' labels by name.
func (s ListenerSets) labels() map[string]map[string]string {
	out := make(map[string]map[string]string, len(s.Namespaces))
	for _, n := range s.Namespaces {
		out[n.Name] = n.Labels
	}
	return out
}
