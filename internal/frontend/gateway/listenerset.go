package gateway

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// kindListenerSet is ListenerSet's kind (gateway.networking.k8s.io/v1).
const kindListenerSet = "ListenerSet"

// ListenerSet is a ListenerSet whose parent is a Gateway Causeway serves,
// checked: its listeners join the parent's when the parent admits it
// (spec.allowedListeners) and are served on the parent's addresses.
type ListenerSet struct {
	Ref        model.ObjectRef
	Generation int64
	// Parent is the Gateway of spec.parentRef.
	Parent *Gateway
	// Accepted is the Accepted condition's status: the parent admits
	// the ListenerSet, is accepted, and at least one of its listeners
	// is ready.
	Accepted bool
	// Listeners are spec.listeners in order, checked; Status.Listeners[i]
	// is Listeners[i]'s status.
	Listeners []*Listener
	// Status is what Causeway writes: the conditions and each
	// listener's.
	Status gwv1.ListenerSetStatus
}
