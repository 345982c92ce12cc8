package kube

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/gatewayservice"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// gatewayGroup is Gateway API's resources: the gateway.networking.k8s.io/v1
// kinds of the standard channel of the pinned module (v1.6.3). Each is
// watched when its CRD is installed, so a cluster without TCPRoutes, say,
// serves the others. GatewayClass is cluster-scoped; the others are
// watched per watched namespace. The routes name Services, all cached
// anyway; the Secrets and ConfigMaps Gateways, ListenerSets and
// BackendTLSPolicies name are watched by name (customrefs.go).
var gatewayGroup = &customGroup{
	gv: gwv1.SchemeGroupVersion,
	kinds: []customKind{
		{resource: "gatewayclasses", kind: "GatewayClass", new: func() runtime.Object { return &gwv1.GatewayClass{} }, cluster: true},
		{resource: "gateways", kind: "Gateway", new: func() runtime.Object { return &gwv1.Gateway{} }, crossNamespace: true,
			references: func(o runtime.Object) []model.Reference { return gateway.GatewayReferences(o.(*gwv1.Gateway)) }},
		{resource: "listenersets", kind: "ListenerSet", new: func() runtime.Object { return &gwv1.ListenerSet{} }, crossNamespace: true,
			references: func(o runtime.Object) []model.Reference { return gateway.ListenerSetReferences(o.(*gwv1.ListenerSet)) }},
		{resource: "httproutes", kind: "HTTPRoute", new: func() runtime.Object { return &gwv1.HTTPRoute{} }},
		{resource: "grpcroutes", kind: "GRPCRoute", new: func() runtime.Object { return &gwv1.GRPCRoute{} }},
		{resource: "tlsroutes", kind: "TLSRoute", new: func() runtime.Object { return &gwv1.TLSRoute{} }},
		{resource: "tcproutes", kind: "TCPRoute", new: func() runtime.Object { return &gwv1.TCPRoute{} }},
		{resource: "udproutes", kind: "UDPRoute", new: func() runtime.Object { return &gwv1.UDPRoute{} }},
		{resource: "referencegrants", kind: "ReferenceGrant", new: func() runtime.Object { return &gwv1.ReferenceGrant{} }},
		{resource: "backendtlspolicies", kind: "BackendTLSPolicy", new: func() runtime.Object { return &gwv1.BackendTLSPolicy{} },
			references: func(o runtime.Object) []model.Reference {
				return gateway.BackendTLSPolicyReferences(o.(*gwv1.BackendTLSPolicy))
			}},
	},
	what:    "Gateway API resources",
	install: "kubectl apply --server-side -f the standard channel's CRDs, see docs/kubernetes.md#gateway-api-crds",
	snapshot: func(c *customInformers, snap *source.Snapshot) {
		snap.GatewayClasses = list[*gwv1.GatewayClass](c.byKind["gatewayclasses"])
		snap.Gateways = list[*gwv1.Gateway](c.byKind["gateways"])
		snap.ListenerSets = list[*gwv1.ListenerSet](c.byKind["listenersets"])
		snap.HTTPRoutes = list[*gwv1.HTTPRoute](c.byKind["httproutes"])
		snap.GRPCRoutes = list[*gwv1.GRPCRoute](c.byKind["grpcroutes"])
		snap.TLSRoutes = list[*gwv1.TLSRoute](c.byKind["tlsroutes"])
		snap.TCPRoutes = list[*gwv1.TCPRoute](c.byKind["tcproutes"])
		snap.UDPRoutes = list[*gwv1.UDPRoute](c.byKind["udproutes"])
		snap.ReferenceGrants = list[*gwv1.ReferenceGrant](c.byKind["referencegrants"])
		snap.BackendTLSPolicies = list[*gwv1.BackendTLSPolicy](c.byKind["backendtlspolicies"])
		snap.Namespaces = list[*corev1.Namespace](c.byKind[namespacesKind])
	},
	alongside: watchNamespaces,
}

// namespacesKind holds, among the Gateway API group's informers, the
// Namespaces' (typed, not one of the group's kinds).
const namespacesKind = "namespaces"

// watchNamespaces caches every Namespace's name and labels while Gateway
// API's CRDs are served: a listener's allowedRoutes.namespaces.from=
// Selector selects the routes' namespaces by their labels, and a
// Gateway's allowedListeners.namespaces.from=Selector the ListenerSets'. A change of
// labels signals; nothing else of a Namespace does.
func watchNamespaces(s *Source, f informers.SharedInformerFactory, crs *customInformers) {
	inf := f.Core().V1().Namespaces().Informer()
	if err := inf.SetTransform(func(obj any) (any, error) {
		if n, ok := obj.(*corev1.Namespace); ok {
			return source.TrimNamespace(n), nil
		}
		return obj, nil
	}); err != nil {
		panic("set transform: " + err.Error()) // not started yet
	}
	notify := func(any) { s.notify() }
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: notify, DeleteFunc: notify,
		UpdateFunc: func(old, obj any) {
			a, okA := old.(*corev1.Namespace)
			b, okB := obj.(*corev1.Namespace)
			if !okA || !okB || !maps.Equal(a.Labels, b.Labels) {
				s.notify()
			}
		}})
	crs.byKind[namespacesKind] = append(crs.byKind[namespacesKind], inf)
}

// watchGatewayServices caches the Services the leader keeps for Gateways,
// in the controller's namespace, selected by their label on the server:
// every replica listens on the internal ports they record.
func (s *Source) watchGatewayServices() {
	if !s.opts.GatewayAPI || s.opts.ControllerNamespace == "" {
		return
	}
	f := informers.NewSharedInformerFactoryWithOptions(s.opts.Client, 0, informers.WithNamespace(s.opts.ControllerNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.SelectorFromSet(labels.Set{gatewayservice.LabelManagedBy: gatewayservice.ManagedBy}).String()
		}))
	s.factories = append(s.factories, f)
	s.gatewayServices = append(s.gatewayServices, s.watch(f.Core().V1().Services().Informer()))
}
