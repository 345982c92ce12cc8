// Package admission provides the validating admission webhook: it answers
// "would this Ingress (or VirtualServer, VirtualServerRoute, Policy,
// TransportServer) raise a Problem?" before the object is stored, with the
// Problems the controller itself would report.
//
// A review never runs nginx, never writes a file and never loads anything:
// it runs the pure model (build.Build) on a small snapshot made of the
// object under review and the objects it can interact with, looked up in
// indexes of the controller's current snapshot. The interactions are
// exactly the ones the model has across objects: a host (its claims, its
// server-level annotations, use-regex, canaries), its www twin and server
// aliases, the catch-all server of default backends, and the Services
// whose balancing several Ingresses set. Everything else a review needs —
// Services, EndpointSlices, Secrets, ConfigMaps, Policies — is looked up by
// the names the objects use. What an object shares and names is read
// through its front-end, as the build reads it (links.go): an Ingress's
// translation and the references each front-end lists, never raw
// annotations. So a review costs the same with ten Ingresses in
// the cluster as with ten thousand.
//
// review.go holds the Reviewer, index.go the index of the current
// snapshot, context.go the snapshots reviews build, links.go what the
// front-ends say of each object, handler.go the HTTP side.
package admission

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// Fetcher reads, straight from the API, the ConfigMaps and Secrets an
// Ingress's annotations name when the snapshot does not hold them yet
// (the kube source caches a referenced object only once a stored Ingress
// names it).
type Fetcher interface {
	Referenced(ctx context.Context, ing *networkingv1.Ingress) ([]*corev1.ConfigMap, []*corev1.Secret, error)
}

// Scope says which namespaces the controller serves
// (--watch-namespace, --watch-namespace-selector).
type Scope interface {
	Watches(namespace string) bool
}

// Reviewer checks Ingresses and VirtualServers against the current
// snapshot.
type Reviewer struct {
	opts    build.Options
	fetcher Fetcher
	scope   Scope
	now     func() time.Time
	current atomic.Pointer[index]
}

// NewReviewer returns a Reviewer that builds with opts; fetcher may be
// nil, and so may scope (every namespace is served).
func NewReviewer(opts build.Options, fetcher Fetcher, scope Scope) *Reviewer {
	if opts.AnnotationsPrefix == "" {
		opts.AnnotationsPrefix = annotations.DefaultPrefix
	}
	return &Reviewer{opts: opts, fetcher: fetcher, scope: scope, now: time.Now}
}

// watches reports whether the controller serves the objects of namespace:
// one it does not serve is another controller's to review, whatever its
// class (two installations may share a class name, each scoped to its
// own namespaces).
func (r *Reviewer) watches(namespace string) bool {
	return r.scope == nil || r.scope.Watches(namespace)
}

// Update indexes a new snapshot; reviews use it from then on. The
// controller calls it after every sync, with the snapshot it built.
func (r *Reviewer) Update(snap *source.Snapshot) {
	r.current.Store(newIndex(snap, r.opts, r.current.Load()))
}

// Synced reports whether a snapshot was indexed: before that, a review
// would miss every collision.
func (r *Reviewer) Synced() bool { return r.current.Load() != nil }

// ErrNotSynced is returned by Review before the first snapshot.
var ErrNotSynced = fmt.Errorf("the controller has not read the cluster yet")

// Review returns the Problems ing would raise, in the context of the
// current snapshot where it replaces any Ingress of the same namespace and
// name. ours is false when the Ingress belongs to another controller (then
// there is nothing to check). Problems of other objects are not returned.
func (r *Reviewer) Review(ctx context.Context, ing *networkingv1.Ingress) (problems []model.Problem, ours bool, err error) {
	idx := r.current.Load()
	if idx == nil {
		return nil, false, ErrNotSynced
	}
	if !r.watches(ing.Namespace) || !ingress.Class.IsOurs(idx.classes, ing) {
		return nil, false, nil
	}
	cand := ing.DeepCopy()
	// A created object has its UID and creation time by the time
	// validating webhooks see it; these fallbacks only matter to callers
	// that review an object never submitted.
	if cand.CreationTimestamp.IsZero() {
		cand.CreationTimestamp = metav1.NewTime(r.now())
	}
	if cand.UID == "" {
		cand.UID = types.UID("admission-review")
	}
	snap := idx.context(cand)
	if idx.meetsBalancer(cand) {
		snap = idx.whole(func(s *source.Snapshot) { s.Ingresses = replaced(s.Ingresses, cand) })
	}
	if r.fetcher != nil {
		cms, secrets, err := r.fetcher.Referenced(ctx, cand)
		if err != nil {
			return nil, true, err
		}
		snap.ConfigMaps = addMissing(snap.ConfigMaps, cms)
		snap.Secrets = addMissing(snap.Secrets, secrets)
	}
	return r.problemsOf(snap, "Ingress", cand.Namespace, cand.Name), true, nil
}

// ReviewVirtualServer returns the Problems vs would raise, in the context
// of the current snapshot where it replaces any VirtualServer of the same
// namespace and name. ours is false when spec.ingressClassName names a
// class that is not ours. Problems of other objects are not returned.
func (r *Reviewer) ReviewVirtualServer(ctx context.Context, vs *nicv1.VirtualServer) (problems []model.Problem, ours bool, err error) {
	idx := r.current.Load()
	if idx == nil {
		return nil, false, ErrNotSynced
	}
	if !r.watches(vs.Namespace) || !nic.VirtualServerClass.IsOurs(idx.classes, vs) {
		return nil, false, nil
	}
	cand := vs.DeepCopy()
	// As for Ingresses: only an object never submitted lacks these.
	if cand.CreationTimestamp.IsZero() {
		cand.CreationTimestamp = metav1.NewTime(r.now())
	}
	if cand.UID == "" {
		cand.UID = types.UID("admission-review")
	}
	snap := idx.virtualServerContext(cand)
	if idx.claimsShared(cand) {
		snap = idx.whole(func(s *source.Snapshot) { s.VirtualServers = replaced(s.VirtualServers, cand) })
	}
	return r.problemsOf(snap, "VirtualServer", cand.Namespace, cand.Name), true, nil
}

// ReviewTransportServer returns the Problems ts would raise, in the
// context of the current snapshot where it replaces any TransportServer of
// the same namespace and name. ours is false when spec.ingressClassName
// names a class that is not ours. Problems of other objects are not
// returned.
func (r *Reviewer) ReviewTransportServer(_ context.Context, ts *nicv1.TransportServer) (problems []model.Problem, ours bool, err error) {
	idx := r.current.Load()
	if idx == nil {
		return nil, false, ErrNotSynced
	}
	if !r.watches(ts.Namespace) || !nic.TransportServerClass.IsOurs(idx.classes, ts) {
		return nil, false, nil
	}
	cand := ts.DeepCopy()
	// As for Ingresses: only an object never submitted lacks these.
	if cand.CreationTimestamp.IsZero() {
		cand.CreationTimestamp = metav1.NewTime(r.now())
	}
	if cand.UID == "" {
		cand.UID = types.UID("admission-review")
	}
	return r.problemsOf(idx.transportServerContext(cand), "TransportServer", cand.Namespace, cand.Name), true, nil
}

// ReviewVirtualServerRoute returns the Problems vsr would raise: it is
// checked in the context of each VirtualServer whose routes delegate to
// it; one that no VirtualServer names is checked beside the VirtualServers
// of its host, which decide whether it is Ignored or finds none. ours is
// false for another class.
func (r *Reviewer) ReviewVirtualServerRoute(ctx context.Context, vsr *nicv1.VirtualServerRoute) (problems []model.Problem, ours bool, err error) {
	idx := r.current.Load()
	if idx == nil {
		return nil, false, ErrNotSynced
	}
	if !r.watches(vsr.Namespace) || !nic.VirtualServerRouteClass.IsOurs(idx.classes, vsr) {
		return nil, false, nil
	}
	key := vsr.Namespace + "/" + vsr.Name
	// Its context is that of every host involved: the VirtualServers
	// that name it (only each host's owner delegates) and those of its
	// own host (which decide whether an unused one is Ignored), each with
	// what decides who owns the host, in one build.
	snap := &source.Snapshot{IngressClasses: idx.snap.IngressClasses}
	hosts := map[string]bool{}
	for _, vs := range idx.snap.VirtualServers {
		if (vs.Spec.Host == vsr.Spec.Host || idx.delegatesTo(vs, key)) && !hosts[vs.Spec.Host] {
			hosts[vs.Spec.Host] = true
			merge(snap, idx.virtualServerContext(vs))
		}
	}
	snap = withRoute(snap, vsr)
	if idx.balancingShared("VirtualServerRoute/"+key, vsr.Namespace, vsr.Spec.Upstreams) ||
		slices.ContainsFunc(idx.delegators[key], idx.claimsShared) {
		snap = idx.whole(func(s *source.Snapshot) { s.VirtualServerRoutes = replaced(s.VirtualServerRoutes, vsr) })
	}
	// Its own upstreams' Services and Policies, as written now.
	n := newNamed()
	idx.add(snap, n, nic.VirtualServerRouteReferences(vsr))
	idx.addReferenced(snap, n)
	return r.problemsOf(snap, "VirtualServerRoute", vsr.Namespace, vsr.Name), true, nil
}

// merge adds to dst the objects of src it lacks.
func merge(dst, src *source.Snapshot) {
	dst.Ingresses = addMissing(dst.Ingresses, src.Ingresses)
	dst.Services = addMissing(dst.Services, src.Services)
	dst.EndpointSlices = addMissing(dst.EndpointSlices, src.EndpointSlices)
	dst.Secrets = addMissing(dst.Secrets, src.Secrets)
	dst.ConfigMaps = addMissing(dst.ConfigMaps, src.ConfigMaps)
	dst.VirtualServers = addMissing(dst.VirtualServers, src.VirtualServers)
	dst.VirtualServerRoutes = addMissing(dst.VirtualServerRoutes, src.VirtualServerRoutes)
	dst.Policies = addMissing(dst.Policies, src.Policies)
	dst.TransportServers = addMissing(dst.TransportServers, src.TransportServers)
}

// withRoute puts vsr into snap in place of its namesake.
func withRoute(snap *source.Snapshot, vsr *nicv1.VirtualServerRoute) *source.Snapshot {
	for i, o := range snap.VirtualServerRoutes {
		if o.Namespace == vsr.Namespace && o.Name == vsr.Name {
			snap.VirtualServerRoutes = slices.Delete(snap.VirtualServerRoutes, i, i+1)
			break
		}
	}
	snap.VirtualServerRoutes = append(snap.VirtualServerRoutes, vsr)
	return snap
}

// delegatesTo reports whether a VirtualServer route names or selects the
// VirtualServerRoute "namespace/name".
func (x *index) delegatesTo(vs *nicv1.VirtualServer, key string) bool {
	return slices.Contains(x.delegations(vs), key)
}

// delegations are the VirtualServerRoutes, "namespace/name", that the
// routes of vs name or select.
func (x *index) delegations(vs *nicv1.VirtualServer) []string {
	var out []string
	for i := range vs.Spec.Routes {
		out = append(out, x.routeTargets(vs, &vs.Spec.Routes[i])...)
	}
	return out
}

// ReviewPolicy returns the Problems a Policy raises on its own: whether it
// is valid does not depend on anything else.
func (r *Reviewer) ReviewPolicy(_ context.Context, p *nicv1.Policy) (problems []model.Problem, ours bool, err error) {
	idx := r.current.Load()
	if idx == nil {
		return nil, false, ErrNotSynced
	}
	if !r.watches(p.Namespace) || !nic.PolicyClass.IsOurs(idx.classes, p) {
		return nil, false, nil
	}
	// As one replica would: the count only divides a scaled rate.
	_, problems, err = nic.TranslatePolicy(p, 1)
	if err != nil {
		problems = append(problems, model.Problem{Object: nic.PolicyRef(p), Reason: model.ReasonInvalid, Message: err.Error(), Rejected: true})
	}
	return problems, true, nil
}

// ReviewGlobalConfiguration returns the Problems gc would raise: when it
// is the one --global-configuration names, those of its listeners (name,
// protocol, port, ssl; a port that is the controller's HTTP or HTTPS port
// or another listener's), which depend on nothing else but the options;
// any other GlobalConfiguration is not read and has none. It needs no
// snapshot.
func (r *Reviewer) ReviewGlobalConfiguration(_ context.Context, gc *nicv1.GlobalConfiguration) (problems []model.Problem, ours bool, err error) {
	if gc.Namespace+"/"+gc.Name != r.opts.GlobalConfiguration {
		return nil, true, nil
	}
	snap := &source.Snapshot{GlobalConfigurations: []*nicv1.GlobalConfiguration{gc.DeepCopy()}}
	return r.problemsOf(snap, "GlobalConfiguration", gc.Namespace, gc.Name), true, nil
}

// problemsOf builds snap and returns the Problems of one object.
func (r *Reviewer) problemsOf(snap *source.Snapshot, kind, namespace, name string) (problems []model.Problem) {
	_, all := build.Build(snap, r.opts)
	for _, p := range all {
		if p.Object.Kind == kind && p.Object.Namespace == namespace && p.Object.Name == name {
			problems = append(problems, p)
		}
	}
	return problems
}

// addMissing appends the objects of more that have no namesake in have.
func addMissing[T metav1.Object](have, more []T) []T {
	for _, m := range more {
		found := false
		for _, h := range have {
			if h.GetNamespace() == m.GetNamespace() && h.GetName() == m.GetName() {
				found = true
				break
			}
		}
		if !found {
			have = append(have, m)
		}
	}
	return have
}
