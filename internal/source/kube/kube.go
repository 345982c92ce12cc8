// Package kube is the API-server source: client-go informers for the
// objects the model reads, scoped to the watched namespaces, with transforms
// that drop what the model never reads so the caches stay small. Secrets
// are selected by type (kubernetes.io/tls) and ConfigMaps by name (the
// controller's); the ConfigMaps and Secrets that Ingress annotations and
// the controller's ConfigMap reference are watched one by one, by name
// (refs.go).
package kube

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"strings"
	"sync/atomic"
	"time"
	"unique"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	networkinginformers "k8s.io/client-go/informers/networking/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/source"
)

// Options configure the kube source.
type Options struct {
	Client kubernetes.Interface
	// Namespaces to watch; empty means all.
	Namespaces []string
	// NamespaceSelector, when not empty, keeps the served objects to the
	// namespaces whose labels it matches (namespaces.go); it needs list
	// and watch on namespaces.
	NamespaceSelector labels.Selector
	// ConfigMap is the controller's "namespace/name". Besides it, only
	// the ConfigMaps that Ingress annotations reference are cached.
	ConfigMap string
	// AnnotationsPrefix is the prefix of the ingress-nginx annotations,
	// some of which name ConfigMaps and Secrets to watch
	// (annotations.References); empty means DefaultAnnotationsPrefix.
	AnnotationsPrefix string
	// ServiceConfigMaps are further ConfigMaps ("namespace/name") watched
	// by name: ingress-nginx's tcp-services and udp-services.
	ServiceConfigMaps []string
	// CustomResources watches NGINX Ingress Controller's resources
	// (k8s.nginx.org/v1) through Dynamic, those of them whose CRDs the
	// API server serves when Run starts (custom.go).
	CustomResources bool
	// GatewayAPI watches Gateway API's resources
	// (gateway.networking.k8s.io/v1) through Dynamic, those of them whose
	// CRDs the API server serves (gateway.go), rediscovered as the custom
	// resources are.
	GatewayAPI bool
	// ControllerNamespace is the controller's namespace, where the leader
	// keeps the Services of Gateways (package gatewayservice): with
	// GatewayAPI, the Services there labelled
	// app.kubernetes.io/managed-by=causeway-gateway are listed into
	// Snapshot.GatewayServices. Empty lists none.
	ControllerNamespace string
	// Dynamic is the client for the custom resources and Gateway API's;
	// required with CustomResources or GatewayAPI.
	Dynamic dynamic.Interface
	// Metadata is the client for objects read by their metadata alone:
	// Pods, for subselectors; required with CustomResources.
	Metadata metadata.Interface
	// RediscoverEvery is how often discovery is asked again which custom
	// resources (and Gateway API resources) exist, so that CRDs installed or removed while running
	// are noticed. Zero means 30 seconds.
	RediscoverEvery time.Duration
	Log             *slog.Logger
}

// Source caches objects from the API server.
type Source struct {
	opts     Options
	notifier *source.Notifier
	// endpoints collects EndpointSlice changes, which are signalled
	// apart (source.EndpointSource); changes tells Ingress changes from
	// the others (source.ChangeSource).
	endpoints                                                 endpointChanges
	changes                                                   changeLog
	synced                                                    atomic.Bool
	factories                                                 []informers.SharedInformerFactory
	ingresses, classes, services, slices, secrets, configMaps []cache.SharedIndexInformer
	// gatewayServices are the Services of Gateways (GatewayAPI with
	// ControllerNamespace).
	gatewayServices []cache.SharedIndexInformer
	// pods are watched with the custom resources only (subselector), by
	// their metadata (metaFactories).
	pods          []cache.SharedIndexInformer
	metaFactories []metadatainformer.SharedInformerFactory
	// ingressHandlers have seen every Ingress (and the controller's
	// ConfigMap) of the first listing once they have synced, so refs
	// knows what they reference.
	ingressHandlers []cache.ResourceEventHandlerRegistration
	refs            *refs
	// custom holds the custom resources' informers once Run has
	// discovered which exist; nil before, or without CustomResources.
	custom atomic.Pointer[customInformers]
	// gateway is custom for Gateway API's resources (GatewayAPI).
	gateway atomic.Pointer[customInformers]
	// selected caches the namespaces NamespaceSelector selects; nil
	// without one.
	selected cache.SharedIndexInformer
	// discover asks discovery for a group version's resources.
	discover func(groupVersion string) (*metav1.APIResourceList, error)
}

// New creates the informers; Run starts them.
func New(opts Options) (*Source, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.CustomResources && (opts.Dynamic == nil || opts.Metadata == nil) {
		return nil, fmt.Errorf("kube source: custom resources need a dynamic and a metadata client")
	}
	if opts.GatewayAPI && opts.Dynamic == nil {
		return nil, fmt.Errorf("kube source: Gateway API resources need a dynamic client")
	}
	s := &Source{opts: opts, notifier: source.NewNotifier(), discover: opts.Client.Discovery().ServerResourcesForGroupVersion,
		endpoints: endpointChanges{notifier: source.NewNotifier(), dirty: map[string]bool{}}}
	s.refs = newRefs(opts, s.notify)
	for _, ns := range s.namespaces() {
		// The kinds of which a cluster has thousands come without the
		// namespace index the factory's informers have: the source lists
		// them whole and finds them by its own indexes (hosts, Services),
		// and the index kept a set entry per object.
		f := informers.NewSharedInformerFactoryWithOptions(opts.Client, 0, informers.WithNamespace(ns))
		s.factories = append(s.factories, f)
		s.ingresses = append(s.ingresses, s.watchIngresses(f.InformerFor(&networkingv1.Ingress{},
			func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
				return networkinginformers.NewFilteredIngressInformer(c, ns, resync, cache.Indexers{}, nil)
			})))
		s.services = append(s.services, s.watchServices(f.InformerFor(&corev1.Service{},
			func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
				return coreinformers.NewFilteredServiceInformer(c, ns, resync, cache.Indexers{}, nil)
			})))
		slices, err := s.watchSlices(f.InformerFor(&discoveryv1.EndpointSlice{},
			func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
				return discoveryinformers.NewFilteredEndpointSliceInformer(c, ns, resync, cache.Indexers{}, nil)
			}))
		if err != nil {
			return nil, fmt.Errorf("kube source: %w", err) // not started yet
		}
		s.slices = append(s.slices, slices)
		if opts.CustomResources {
			if err := slices.AddIndexers(cache.Indexers{podIndex: slicePods}); err != nil {
				return nil, fmt.Errorf("kube source: %w", err) // not started yet
			}
			// Only the Pods' metadata: the API server never sends their
			// specs (environment, volumes) or their frequent status.
			mf := metadatainformer.NewFilteredSharedInformerFactory(opts.Metadata, 0, ns, nil)
			s.metaFactories = append(s.metaFactories, mf)
			s.pods = append(s.pods, s.watchPods(mf.ForResource(corev1.SchemeGroupVersion.WithResource("pods")).Informer()))
		}
		// TLS secrets, filtered by type on the server so that others
		// (service-account tokens, Helm releases) never reach memory. The
		// Secrets that annotations reference are watched by name (refs).
		sf := informers.NewSharedInformerFactoryWithOptions(opts.Client, 0, informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("type", string(corev1.SecretTypeTLS)).String()
			}))
		s.factories = append(s.factories, sf)
		s.secrets = append(s.secrets, s.watch(sf.Core().V1().Secrets().Informer()))
	}
	s.watchGatewayServices()
	cluster := informers.NewSharedInformerFactory(opts.Client, 0)
	s.factories = append(s.factories, cluster)
	s.watchNamespaceSelector()
	s.classes = append(s.classes, s.watch(cluster.Networking().V1().IngressClasses().Informer()))
	if ns, name, ok := strings.Cut(opts.ConfigMap, "/"); ok {
		cf := informers.NewSharedInformerFactoryWithOptions(opts.Client, 0, informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
			}))
		s.factories = append(s.factories, cf)
		s.configMaps = append(s.configMaps, s.watchConfig(cf.Core().V1().ConfigMaps().Informer()))
	}
	// ingress-nginx's tcp-services and udp-services ConfigMaps, each by
	// name like the controller's.
	for _, key := range opts.ServiceConfigMaps {
		ns, name, ok := strings.Cut(key, "/")
		if !ok || key == opts.ConfigMap {
			continue
		}
		cf := informers.NewSharedInformerFactoryWithOptions(opts.Client, 0, informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
			}))
		s.factories = append(s.factories, cf)
		s.configMaps = append(s.configMaps, s.watch(cf.Core().V1().ConfigMaps().Informer()))
	}
	return s, nil
}

// namespaces are the namespaces to create informers for.
func (s *Source) namespaces() []string {
	if len(s.opts.Namespaces) == 0 {
		return []string{metav1.NamespaceAll}
	}
	return s.opts.Namespaces
}

// watch installs the trimming transform and the change handler.
func (s *Source) watch(inf cache.SharedIndexInformer) cache.SharedIndexInformer {
	setTrim(inf)
	return s.handle(inf)
}

// handle installs the change handler.
func (s *Source) handle(inf cache.SharedIndexInformer) cache.SharedIndexInformer {
	notify := func(any) { s.notify() }
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: notify,
		UpdateFunc: func(old, obj any) {
			if !statusOnly(old, obj) {
				s.notify()
			}
		},
		DeleteFunc: notify,
	})
	return inf
}

// watchServices is watch for Services, whose changes it signals by key:
// the controller runs no sync for a Service its last build did not look
// for.
func (s *Source) watchServices(inf cache.SharedIndexInformer) cache.SharedIndexInformer {
	setTrim(inf)
	notify := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			s.notifyService(key)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { notify(obj) },
		DeleteFunc: notify,
	})
	return inf
}

// podIndex indexes EndpointSlices by the Pods ("namespace/name") their
// endpoints name.
const podIndex = "pod"

func slicePods(obj any) ([]string, error) {
	es, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return nil, nil
	}
	var out []string
	for _, ep := range es.Endpoints {
		if r := ep.TargetRef; r != nil && r.Kind == "Pod" {
			out = append(out, es.Namespace+"/"+r.Name)
		}
	}
	return out, nil
}

// named reports whether an endpoint of a cached EndpointSlice names the
// Pod: only then can the Pod's labels change what a subselector selects.
func (s *Source) named(p *corev1.Pod) bool {
	key := p.Namespace + "/" + p.Name
	for _, inf := range s.slices {
		if objs, err := inf.GetIndexer().ByIndex(podIndex, key); err != nil || len(objs) > 0 {
			return true
		}
	}
	return false
}

// watchPods keeps Pods' namespace, name and labels only (from their
// metadata), as *corev1.Pod, and signals a
// change only when those of a Pod an endpoint names change. A Pod's
// status changes often and the model reads none of it; a Pod no endpoint
// names yet (a Job's, or one not ready) cannot change a backend, and the
// EndpointSlice update that names it later signals then.
func (s *Source) watchPods(inf cache.SharedIndexInformer) cache.SharedIndexInformer {
	if err := inf.SetTransform(func(obj any) (any, error) {
		if o, ok := obj.(*metav1.PartialObjectMetadata); ok {
			return source.TrimPod(&corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: o.ObjectMeta}), nil
		}
		return obj, nil
	}); err != nil {
		panic(fmt.Sprintf("set transform: %v", err)) // not started yet
	}
	notify := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if p, ok := obj.(*corev1.Pod); !ok || s.named(p) {
			s.notify()
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: notify,
		UpdateFunc: func(old, obj any) {
			a, okA := old.(*corev1.Pod)
			b, okB := obj.(*corev1.Pod)
			if !okA || !okB || !maps.Equal(a.Labels, b.Labels) {
				notify(obj)
			}
		},
		DeleteFunc: notify,
	})
	return inf
}

// watchIngresses installs the trimming transform (which also shares what
// an update left unchanged with the cached version: sharing) and a change
// handler that also keeps the informers of referenced objects in step
// with the Ingresses' annotations.
func (s *Source) watchIngresses(inf cache.SharedIndexInformer) cache.SharedIndexInformer {
	if err := inf.SetTransform(sharing(inf.GetIndexer(), trim)); err != nil {
		panic(fmt.Sprintf("set transform: %v", err)) // not started yet
	}
	if err := inf.AddIndexers(cache.Indexers{hostIndex: bucketed(ingressHosts)}); err != nil {
		panic(fmt.Sprintf("add indexers: %v", err)) // not started yet
	}
	changed := func(obj any, annotations map[string]string) {
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			return
		}
		if !s.refs.update(key, annotations) {
			s.notifyIngress(key)
		} // else refs signals once the newly referenced objects are listed
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if ing, ok := obj.(*networkingv1.Ingress); ok {
				changed(obj, ing.Annotations)
			}
		},
		UpdateFunc: func(old, obj any) {
			// A status-only update leaves the annotations as they were.
			if ing, ok := obj.(*networkingv1.Ingress); ok && !statusOnly(old, obj) {
				changed(obj, ing.Annotations)
			}
		},
		DeleteFunc: func(obj any) { changed(obj, nil) },
	})
	if err != nil {
		panic(fmt.Sprintf("add event handler: %v", err)) // not started yet
	}
	s.ingressHandlers = append(s.ingressHandlers, reg)
	return inf
}

// watchConfig is watch for the controller's ConfigMap, whose handler also
// keeps the informers of the objects it names in step with it.
func (s *Source) watchConfig(inf cache.SharedIndexInformer) cache.SharedIndexInformer {
	s.watch(inf)
	key := s.opts.ConfigMap
	changed := func(data map[string]string) {
		if s.refs.updateConfig(key, data) {
			return // refs signals once the newly named objects are listed
		}
		s.notify()
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if cm, ok := obj.(*corev1.ConfigMap); ok {
				changed(cm.Data)
			}
		},
		UpdateFunc: func(_, obj any) {
			if cm, ok := obj.(*corev1.ConfigMap); ok {
				changed(cm.Data)
			}
		},
		DeleteFunc: func(any) { changed(nil) },
	})
	if err != nil {
		panic(fmt.Sprintf("add event handler: %v", err)) // not started yet
	}
	s.ingressHandlers = append(s.ingressHandlers, reg)
	return inf
}

func setTrim(inf cache.SharedIndexInformer) {
	if err := inf.SetTransform(trim); err != nil {
		// Only possible after the informer started, which it has not.
		panic(fmt.Sprintf("set transform: %v", err))
	}
}

// trim drops fields the model never reads: managed fields and the
// last-applied annotation (often the largest part of an object), Service
// status, and Secret data other than the certificate and key.
func trim(obj any) (any, error) {
	trimMeta(obj)
	switch o := obj.(type) {
	case *corev1.Secret:
		for k := range o.Data {
			if k != corev1.TLSCertKey && k != corev1.TLSPrivateKeyKey {
				delete(o.Data, k)
			}
		}
	case *networkingv1.Ingress:
		// Status is kept (a few addresses): the status writer compares it
		// with what it would write, so it writes only what differs.
	case *discoveryv1.EndpointSlice:
		for i := range o.Endpoints {
			o.Endpoints[i].Hints = nil
			o.Endpoints[i].DeprecatedTopology = nil
			o.Endpoints[i].TargetRef = source.TrimTargetRef(o.Endpoints[i].TargetRef)
		}
	}
	return obj, nil
}

// trimMeta drops managed fields and the last-applied annotation, and
// interns the namespace and the labels' and annotations' keys and short
// values (intern).
func trimMeta(obj any) {
	if acc, ok := obj.(metav1.ObjectMetaAccessor); ok {
		meta := acc.GetObjectMeta()
		meta.SetManagedFields(nil)
		if a := meta.GetAnnotations(); a != nil {
			delete(a, corev1.LastAppliedConfigAnnotation)
		}
		meta.SetNamespace(intern(meta.GetNamespace()))
		meta.SetAnnotations(internMap(meta.GetAnnotations()))
		meta.SetLabels(internMap(meta.GetLabels()))
	}
}

// internMax is the longest label or annotation value interned: longer
// ones (snippets, configuration blocks) are seldom shared by objects.
const internMax = 64

// intern returns the one copy of s that every cached object shares. The
// API's decoder gives each object its own copy of every string: at
// 10,000 Ingresses with the same five annotations, their keys and values
// alone were 3 MiB, the namespace of 30,000 objects half a MiB more.
func intern(s string) string {
	return unique.Make(s).Value()
}

// internMap is m with its keys interned, and its values as intern says.
func internMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if len(v) <= internMax {
			v = intern(v)
		}
		out[intern(k)] = v
	}
	return out
}

// statusOnly reports an update of an object with a status (an Ingress, or
// one of NGINX Ingress Controller's resources with a status subresource)
// that changed nothing the model reads: our own status writes (and
// resyncs) would otherwise trigger a full rebuild each, thousands of them
// after a first start at scale. The status writer compares against the
// cached status itself, so it still sees them. The API server bumps the
// generation of these kinds on every change to anything but metadata and
// status, so an unchanged generation with unchanged labels, annotations
// and deletion means only the status (or irrelevant metadata) changed.
func statusOnly(old, obj any) bool {
	if reflect.TypeOf(old) != reflect.TypeOf(obj) {
		return false
	}
	var a, b metav1.Object
	switch obj.(type) {
	case *networkingv1.Ingress, *nicv1.VirtualServer, *nicv1.VirtualServerRoute, *nicv1.Policy, *nicv1.TransportServer,
		*gwv1.GatewayClass, *gwv1.Gateway, *gwv1.ListenerSet, *gwv1.HTTPRoute, *gwv1.GRPCRoute, *gwv1.TLSRoute, *gwv1.TCPRoute, *gwv1.UDPRoute,
		*gwv1.BackendTLSPolicy:
		a, b = old.(metav1.Object), obj.(metav1.Object)
	default:
		// GlobalConfiguration and ReferenceGrant have no status;
		// Services, EndpointSlices, Secrets and ConfigMaps are read whole.
		return false
	}
	return a.GetGeneration() == b.GetGeneration() && a.GetGeneration() != 0 &&
		maps.Equal(a.GetAnnotations(), b.GetAnnotations()) && maps.Equal(a.GetLabels(), b.GetLabels()) &&
		a.GetDeletionTimestamp().Equal(b.GetDeletionTimestamp())
}

// Run starts the informers and blocks until ctx is done.
func (s *Source) Run(ctx context.Context) error {
	s.refs.start(ctx)
	defer func() {
		s.refs.close()
		for _, f := range s.factories {
			f.Shutdown() // after it, no Ingress handler can start an informer
		}
		for _, f := range s.metaFactories {
			f.Shutdown()
		}
		s.custom.Load().shutdown()
		s.gateway.Load().shutdown()
		s.refs.wait()
	}()
	for _, f := range s.factories {
		f.Start(ctx.Done())
	}
	for _, f := range s.metaFactories {
		f.Start(ctx.Done())
	}
	var all []cache.InformerSynced
	for _, g := range s.customGroups() {
		// Which custom resources exist is asked here, and then every
		// RediscoverEvery (see rediscover).
		found, ok := s.discoverCustomResources(ctx, g.customGroup)
		if !ok {
			return nil // ctx ended
		}
		custom := s.startCustomResources(ctx, g.customGroup, found)
		g.held.Store(custom)
		all = append(all, custom.synced()...)
	}
	if s.selected != nil {
		all = append(all, s.selected.HasSynced)
	}
	for _, group := range [][]cache.SharedIndexInformer{s.ingresses, s.classes, s.services, s.slices, s.secrets, s.configMaps, s.pods, s.gatewayServices} {
		for _, inf := range group {
			all = append(all, inf.HasSynced)
		}
	}
	for _, reg := range s.ingressHandlers {
		all = append(all, reg.HasSynced)
	}
	start := time.Now()
	if !cache.WaitForCacheSync(ctx.Done(), all...) {
		return nil // ctx ended
	}
	// Then the objects the listed Ingresses reference, so that the first
	// snapshot has them too.
	if !cache.WaitForCacheSync(ctx.Done(), s.refs.synced) {
		return nil
	}
	s.opts.Log.Info("informer caches synced", "took", time.Since(start).Round(time.Millisecond))
	s.synced.Store(true)
	s.notify()
	if len(s.customGroups()) > 0 {
		s.rediscover(ctx)
	}
	<-ctx.Done()
	return nil
}

// watchedGroup is a group of custom resources watched, and where its
// current informers are held.
type watchedGroup struct {
	*customGroup
	held *atomic.Pointer[customInformers]
}

// customGroups are the groups of custom resources watched.
func (s *Source) customGroups() []watchedGroup {
	var out []watchedGroup
	if s.opts.CustomResources {
		out = append(out, watchedGroup{nicGroup, &s.custom})
	}
	if s.opts.GatewayAPI {
		out = append(out, watchedGroup{gatewayGroup, &s.gateway})
	}
	return out
}

// HasSynced reports whether every informer has listed once.
func (s *Source) HasSynced() bool { return s.synced.Load() }

// Changed signals any change in a watched object.
func (s *Source) Changed() <-chan struct{} { return s.notifier.C() }

// Snapshot lists the caches.
func (s *Source) Snapshot() *source.Snapshot { return s.snapshot(true) }

// snapshot is Snapshot, without Ingresses, Services and EndpointSlices
// unless all (SnapshotAhead fills them).
func (s *Source) snapshot(all bool) *source.Snapshot {
	snap := &source.Snapshot{}
	if all {
		snap.Ingresses = list[*networkingv1.Ingress](s.ingresses)
		snap.Services = list[*corev1.Service](s.services)
		snap.EndpointSlices = list[*discoveryv1.EndpointSlice](s.slices)
	}
	snap.IngressClasses = list[*networkingv1.IngressClass](s.classes)
	snap.Pods = list[*corev1.Pod](s.pods)
	snap.GatewayServices = list[*corev1.Service](s.gatewayServices)
	refConfigMaps, refSecrets := s.refs.lists()
	// An object both cached for itself and referenced appears once: the
	// referenced copy, whose Secret data is whole.
	snap.Secrets = merge(list[*corev1.Secret](s.secrets), refSecrets)
	snap.ConfigMaps = merge(list[*corev1.ConfigMap](s.configMaps), refConfigMaps)
	s.custom.Load().snapshot(snap)
	s.gateway.Load().snapshot(snap)
	s.selectNamespaces(snap)
	return snap
}

// merge appends to own the objects of referenced, replacing those of own
// with the same namespace and name.
func merge[T metav1.Object](own, referenced []T) []T {
	if len(referenced) == 0 {
		return own
	}
	seen := make(map[string]bool, len(referenced))
	for _, o := range referenced {
		seen[o.GetNamespace()+"/"+o.GetName()] = true
	}
	out := make([]T, 0, len(own)+len(referenced))
	for _, o := range own {
		if !seen[o.GetNamespace()+"/"+o.GetName()] {
			out = append(out, o)
		}
	}
	return append(out, referenced...)
}

func list[T any](infs []cache.SharedIndexInformer) []T {
	var out []T
	for _, inf := range infs {
		for _, o := range inf.GetStore().List() {
			if t, ok := o.(T); ok {
				out = append(out, t)
			}
		}
	}
	return out
}
