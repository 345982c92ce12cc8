package admission

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// Gateway API's kinds are reviewed, never refused: the API's own
// convention is that an object is accepted by the API server and its
// status says what the implementation made of it (its conformance suite
// creates invalid routes and reads their conditions). The webhook answers
// the Problems the object would raise as warnings, so `kubectl apply`
// shows them at once.

// ReviewGatewayAPI returns the Problems a Gateway, ListenerSet, route or
// BackendTLSPolicy of kind would raise in the context of the current
// snapshot, where it replaces its namesake (a ListenerSet is checked
// against its parent Gateway there, as a route is). ours is false when it raises none: another controller's
// object, or one of ours without a Problem.
func (r *Reviewer) ReviewGatewayAPI(_ context.Context, kind string, obj metav1.Object) (problems []model.Problem, ours bool, err error) {
	idx := r.current.Load()
	if idx == nil {
		return nil, false, ErrNotSynced
	}
	if !r.watches(obj.GetNamespace()) {
		return nil, false, nil
	}
	if ts := obj.GetCreationTimestamp(); ts.IsZero() {
		obj.SetCreationTimestamp(metav1.NewTime(r.now()))
	}
	if obj.GetUID() == "" {
		obj.SetUID(types.UID("admission-review"))
	}
	snap := idx.whole(func(s *source.Snapshot) {
		switch o := obj.(type) {
		case *gwv1.Gateway:
			s.Gateways = replaced(s.Gateways, o)
		case *gwv1.ListenerSet:
			s.ListenerSets = replaced(s.ListenerSets, o)
		case *gwv1.HTTPRoute:
			s.HTTPRoutes = replaced(s.HTTPRoutes, o)
		case *gwv1.GRPCRoute:
			s.GRPCRoutes = replaced(s.GRPCRoutes, o)
		case *gwv1.TLSRoute:
			s.TLSRoutes = replaced(s.TLSRoutes, o)
		case *gwv1.TCPRoute:
			s.TCPRoutes = replaced(s.TCPRoutes, o)
		case *gwv1.UDPRoute:
			s.UDPRoutes = replaced(s.UDPRoutes, o)
		case *gwv1.BackendTLSPolicy:
			s.BackendTLSPolicies = replaced(s.BackendTLSPolicies, o)
		}
	})
	problems = r.problemsOf(snap, kind, obj.GetNamespace(), obj.GetName())
	return problems, len(problems) > 0, nil
}
