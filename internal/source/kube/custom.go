package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// customKind is one resource of a customGroup that the source can watch.
type customKind struct {
	resource string                // plural, as discovery and RBAC name it
	kind     string                // for problems
	new      func() runtime.Object // the typed object informers store
	// cluster is set for a cluster-scoped kind: one informer for the
	// whole cluster whatever the watched namespaces.
	cluster bool
	// references lists the Secrets and ConfigMaps an object names, which
	// are watched by name (customrefs.go); nil when it names none.
	references func(runtime.Object) []model.Reference
	// crossNamespace lets references name objects of other (watched)
	// namespaces: Gateway API's, which a ReferenceGrant may permit. The
	// front-end decides whether one is; the source only caches it.
	crossNamespace bool
}

// customGroup is a group version of custom resources whose CRDs may be
// installed, removed or absent: NGINX Ingress Controller's
// (k8s.nginx.org/v1) and Gateway API's (gateway.networking.k8s.io/v1).
type customGroup struct {
	gv    schema.GroupVersion
	kinds []customKind
	// what names the resources in logs; install says how to install their
	// CRDs.
	what, install string
	// snapshot fills the typed objects of c into snap.
	snapshot func(c *customInformers, snap *source.Snapshot)
	// alongside, when set, adds to crs typed informers of f (of the
	// clientset, cluster-wide) that run while any of the group's kinds is
	// served, started and stopped with them.
	alongside func(s *Source, f informers.SharedInformerFactory, crs *customInformers)
}

// nicGroup is NGINX Ingress Controller's resources.
var nicGroup = &customGroup{
	gv: nicv1.SchemeGroupVersion,
	kinds: []customKind{
		{resource: "virtualservers", kind: "VirtualServer", new: func() runtime.Object { return &nicv1.VirtualServer{} }},
		{resource: "virtualserverroutes", kind: "VirtualServerRoute", new: func() runtime.Object { return &nicv1.VirtualServerRoute{} }},
		{resource: "policies", kind: "Policy", new: func() runtime.Object { return &nicv1.Policy{} },
			references: func(o runtime.Object) []model.Reference { return nic.PolicyReferences(o.(*nicv1.Policy)) }},
		{resource: "transportservers", kind: "TransportServer", new: func() runtime.Object { return &nicv1.TransportServer{} }},
		{resource: "globalconfigurations", kind: "GlobalConfiguration", new: func() runtime.Object { return &nicv1.GlobalConfiguration{} }},
	},
	what:    "custom resources",
	install: "kubectl apply -k deploy/crds",
	snapshot: func(c *customInformers, snap *source.Snapshot) {
		snap.VirtualServers = list[*nicv1.VirtualServer](c.byKind["virtualservers"])
		snap.VirtualServerRoutes = list[*nicv1.VirtualServerRoute](c.byKind["virtualserverroutes"])
		snap.Policies = list[*nicv1.Policy](c.byKind["policies"])
		snap.TransportServers = list[*nicv1.TransportServer](c.byKind["transportservers"])
		snap.GlobalConfigurations = list[*nicv1.GlobalConfiguration](c.byKind["globalconfigurations"])
	},
}

// customKinds are NGINX Ingress Controller's resources.
var customKinds = nicGroup.kinds

// customInformers are the informers of one group's resources that
// discovery found, by resource, one per watched namespace (one in all for
// a cluster-scoped kind).
type customInformers struct {
	group *customGroup
	// kinds are the resources watched, in the group's order.
	kinds []string
	// stop ends the informers (before, or with, the source's context).
	stop      context.CancelFunc
	factories []dynamicinformer.DynamicSharedInformerFactory
	// typed is the factory of the group's alongside informers.
	typed  informers.SharedInformerFactory
	byKind map[string][]cache.SharedIndexInformer
	// handlers are the handlers of the kinds with references
	// (customrefs.go), which have seen every object once synced.
	handlers []cache.ResourceEventHandlerRegistration
}

// discoverOnce asks the API server once which of g's kinds it serves. A
// missing group (the CRDs are not installed) is not an error: it returns
// none.
func (s *Source) discoverOnce(g *customGroup) ([]customKind, error) {
	list, err := s.discover(g.gv.String())
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	var found []customKind
	for _, k := range g.kinds {
		if slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == k.resource }) {
			found = append(found, k)
		}
	}
	return found, nil
}

// discoverCustomResources is discoverOnce, retried until ctx ends: a
// snapshot taken without resources that do exist would withdraw their
// routes.
func (s *Source) discoverCustomResources(ctx context.Context, g *customGroup) ([]customKind, bool) {
	delay := time.Second
	for {
		found, err := s.discoverOnce(g)
		if err == nil {
			return found, true
		}
		s.opts.Log.Warn("discovering "+g.what+" failed; retrying", "groupVersion", g.gv.String(), "err", err, "retryIn", delay)
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// startCustomResources creates and starts the informers of g's resources
// found, and logs which are watched.
func (s *Source) startCustomResources(ctx context.Context, g *customGroup, found []customKind) *customInformers {
	crs := &customInformers{group: g, byKind: map[string][]cache.SharedIndexInformer{}}
	for _, k := range found {
		crs.kinds = append(crs.kinds, k.resource)
	}
	if len(found) == 0 {
		s.opts.Log.Info(g.what + " off: the " + g.gv.Group + " CRDs are not installed (" + g.install + "; they are noticed within " +
			s.rediscoverEvery().String() + ")")
		return crs
	}
	var missing []string
	for _, k := range g.kinds {
		if !slices.Contains(crs.kinds, k.resource) {
			missing = append(missing, k.resource)
		}
	}
	if len(missing) > 0 {
		s.opts.Log.Info("watching "+g.what, "resources", strings.Join(crs.kinds, ","), "notInstalled", strings.Join(missing, ","))
	} else {
		s.opts.Log.Info("watching "+g.what, "resources", strings.Join(crs.kinds, ","))
	}
	start := func(ns string, cluster bool) {
		var f dynamicinformer.DynamicSharedInformerFactory
		for _, k := range found {
			if k.cluster != cluster {
				continue
			}
			if f == nil {
				f = dynamicinformer.NewFilteredDynamicSharedInformerFactory(s.opts.Dynamic, 0, ns, nil)
				crs.factories = append(crs.factories, f)
			}
			inf := f.ForResource(g.gv.WithResource(k.resource)).Informer()
			crs.byKind[k.resource] = append(crs.byKind[k.resource], s.watchCustom(inf, k))
			if k.references != nil {
				crs.handlers = append(crs.handlers, s.watchReferences(inf, g, k))
			}
		}
	}
	for _, ns := range s.namespaces() {
		start(ns, false)
	}
	start(metav1.NamespaceAll, true)
	if g.alongside != nil {
		crs.typed = informers.NewSharedInformerFactory(s.opts.Client, 0)
		g.alongside(s, crs.typed, crs)
	}
	ctx, crs.stop = context.WithCancel(ctx)
	for _, f := range crs.factories {
		f.Start(ctx.Done())
	}
	if crs.typed != nil {
		crs.typed.Start(ctx.Done())
	}
	return crs
}

// rediscoverEvery is how often the custom resources are discovered again.
func (s *Source) rediscoverEvery() time.Duration {
	if s.opts.RediscoverEvery > 0 {
		return s.opts.RediscoverEvery
	}
	return 30 * time.Second
}

// rediscover discovers the groups' resources again every rediscoverEvery
// until ctx ends. When a group's set changes (CRDs installed or removed),
// it starts informers for the new set, waits until they have listed, puts
// them in place of the old ones, signals a change and stops the old ones.
// A failed discovery changes nothing.
func (s *Source) rediscover(ctx context.Context) {
	t := time.NewTicker(s.rediscoverEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, g := range s.customGroups() {
			if !s.rediscoverGroup(ctx, g) {
				return
			}
		}
	}
}

// rediscoverGroup is one rediscovery of one group's resources. It returns
// false when ctx ended.
func (s *Source) rediscoverGroup(ctx context.Context, w watchedGroup) bool {
	g, old := w.customGroup, w.held.Load()
	found, err := s.discoverOnce(g)
	if err != nil {
		s.opts.Log.Debug("discovering "+g.what+" failed; the watched set stays", "err", err)
		return true
	}
	if slices.EqualFunc(found, old.kinds, func(k customKind, r string) bool { return k.resource == r }) {
		return true
	}
	s.opts.Log.Info("the " + g.gv.Group + " CRDs changed")
	next := s.startCustomResources(ctx, g, found)
	if !cache.WaitForCacheSync(ctx.Done(), next.synced()...) {
		next.shutdown()
		return false
	}
	w.held.Store(next)
	s.notify()
	old.shutdown()
	for _, k := range g.kinds {
		if k.references != nil && !slices.Contains(next.kinds, k.resource) {
			s.refs.dropKind(g, k)
		}
	}
	return true
}

// watchCustom is watch for a custom resource's informer: its transform
// turns the unstructured objects of the dynamic client into typed ones,
// so that the store holds what the Snapshot hands out, sharing what an
// update left unchanged with the cached version (sharing).
func (s *Source) watchCustom(inf cache.SharedIndexInformer, k customKind) cache.SharedIndexInformer {
	if k.references == nil {
		s.handle(inf) // otherwise watchReferences' handler signals
	}
	typed := func(obj any) (any, error) { return s.toTyped(obj, k), nil }
	if err := inf.SetTransform(sharing(inf.GetIndexer(), typed)); err != nil {
		panic(fmt.Sprintf("set transform: %v", err)) // not started yet
	}
	return inf
}

// toTyped converts an unstructured object to k's type and trims its
// metadata. An object that does not convert stays unstructured (and
// untrimmed beyond its metadata), so that the informer keeps working; the
// Snapshot reports it as a problem.
func (s *Source) toTyped(obj any, k customKind) any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj // already converted
	}
	typed := k.new()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), typed); err != nil {
		s.opts.Log.Warn("cannot read custom resource", "kind", k.kind, "namespace", u.GetNamespace(), "name", u.GetName(), "err", err)
		trimMeta(u)
		return u
	}
	trimMeta(typed)
	return typed
}

// snapshot fills the group's resources into snap, and a problem for each
// object that could not be read as its kind.
func (c *customInformers) snapshot(snap *source.Snapshot) {
	if c == nil {
		return
	}
	c.group.snapshot(c, snap)
	for _, k := range c.group.kinds {
		for _, u := range list[*unstructured.Unstructured](c.byKind[k.resource]) {
			err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), k.new())
			where := fmt.Sprintf("%s/%s/%s", k.kind, u.GetNamespace(), u.GetName())
			if k.cluster {
				where = k.kind + "/" + u.GetName()
			}
			snap.Problems = append(snap.Problems, source.Problem{
				Where:   where,
				Message: fmt.Sprintf("cannot be read as %s: %v", c.group.gv.WithKind(k.kind), err),
			})
		}
	}
}

func (c *customInformers) synced() []cache.InformerSynced {
	var out []cache.InformerSynced
	for _, infs := range c.byKind {
		for _, inf := range infs {
			out = append(out, inf.HasSynced)
		}
	}
	for _, reg := range c.handlers {
		out = append(out, reg.HasSynced)
	}
	return out
}

func (c *customInformers) shutdown() {
	if c == nil {
		return
	}
	if c.stop != nil {
		c.stop()
	}
	for _, f := range c.factories {
		f.Shutdown()
	}
	if c.typed != nil {
		c.typed.Shutdown()
	}
}
