package kube

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/causeway/causeway/internal/source"
)

// watchNamespaceSelector caches the namespaces that NamespaceSelector
// selects, selected by the API server (which sends a namespace gaining or
// losing a matching label as an add or a delete). Nothing happens without
// a selector.
func (s *Source) watchNamespaceSelector() {
	sel := s.opts.NamespaceSelector
	if sel == nil || sel.Empty() {
		return
	}
	f := informers.NewSharedInformerFactoryWithOptions(s.opts.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel.String() }))
	s.factories = append(s.factories, f)
	inf := f.Core().V1().Namespaces().Informer()
	setTrim(inf)
	notify := func(any) { s.notify() }
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: notify, DeleteFunc: notify,
		UpdateFunc: func(old, obj any) {
			a, okA := old.(*corev1.Namespace)
			b, okB := obj.(*corev1.Namespace)
			if !okA || !okB || !maps.Equal(a.Labels, b.Labels) {
				s.notify()
			}
		}})
	s.selected = inf
}

// selectNamespaces keeps, of what a snapshot serves, the objects in the
// namespaces NamespaceSelector selects: Ingresses and NGINX Ingress
// Controller's VirtualServers, VirtualServerRoutes, TransportServers and
// Policies, and Gateway API's namespaced kinds (GatewayClasses are
// cluster-scoped), as ingress-nginx's --watch-namespace-selector does for
// Ingresses. The objects they reference (Services, Secrets, ConfigMaps)
// are in their namespaces anyway, and the ones flags name (the default
// certificate, the GlobalConfiguration) stay wherever they are.
func (s *Source) selectNamespaces(snap *source.Snapshot) {
	if s.selected == nil {
		return
	}
	in := func(o metav1.Object) bool { return s.Watches(o.GetNamespace()) }
	snap.Ingresses = keep(snap.Ingresses, in)
	snap.VirtualServers = keep(snap.VirtualServers, in)
	snap.VirtualServerRoutes = keep(snap.VirtualServerRoutes, in)
	snap.TransportServers = keep(snap.TransportServers, in)
	snap.Policies = keep(snap.Policies, in)
	snap.Gateways = keep(snap.Gateways, in)
	snap.ListenerSets = keep(snap.ListenerSets, in)
	snap.HTTPRoutes = keep(snap.HTTPRoutes, in)
	snap.GRPCRoutes = keep(snap.GRPCRoutes, in)
	snap.TLSRoutes = keep(snap.TLSRoutes, in)
	snap.TCPRoutes = keep(snap.TCPRoutes, in)
	snap.UDPRoutes = keep(snap.UDPRoutes, in)
	snap.ReferenceGrants = keep(snap.ReferenceGrants, in)
	snap.BackendTLSPolicies = keep(snap.BackendTLSPolicies, in)
}

// Watches reports whether the objects of namespace ns are served: every
// namespace without --watch-namespace or --watch-namespace-selector, else
// those listed, or selected now. The admission webhook asks it, so that it
// leaves the objects of other namespaces to the controllers serving them.
func (s *Source) Watches(ns string) bool {
	if s.selected != nil {
		obj, ok, err := s.selected.GetStore().GetByKey(ns)
		n, isNS := obj.(*corev1.Namespace)
		return ok && err == nil && isNS && s.opts.NamespaceSelector.Matches(labels.Set(n.Labels))
	}
	return len(s.opts.Namespaces) == 0 || slices.Contains(s.opts.Namespaces, ns)
}

// keep returns the objects for which in is true, in their order.
func keep[T metav1.Object](objs []T, in func(metav1.Object) bool) []T {
	return slices.DeleteFunc(objs, func(o T) bool { return !in(o) })
}
