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
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/source"
)

// customKind is one of NGINX Ingress Controller's resources
// (k8s.nginx.org/v1) that the source can watch.
type customKind struct {
	resource string                // plural, as discovery and RBAC name it
	kind     string                // for problems
	new      func() runtime.Object // the typed object informers store
}

var customKinds = []customKind{
	{"virtualservers", "VirtualServer", func() runtime.Object { return &nicv1.VirtualServer{} }},
	{"virtualserverroutes", "VirtualServerRoute", func() runtime.Object { return &nicv1.VirtualServerRoute{} }},
	{"policies", "Policy", func() runtime.Object { return &nicv1.Policy{} }},
	{"transportservers", "TransportServer", func() runtime.Object { return &nicv1.TransportServer{} }},
	{"globalconfigurations", "GlobalConfiguration", func() runtime.Object { return &nicv1.GlobalConfiguration{} }},
}

// customInformers are the informers of the custom resources discovery
// found, by resource, one per watched namespace.
type customInformers struct {
	// kinds are the resources watched, in customKinds order.
	kinds []string
	// stop ends the informers (before, or with, the source's context).
	stop      context.CancelFunc
	factories []dynamicinformer.DynamicSharedInformerFactory
	byKind    map[string][]cache.SharedIndexInformer
	// handlers are the Policy informers' handlers of references
	// (policyrefs.go), which have seen every Policy once synced.
	handlers []cache.ResourceEventHandlerRegistration
}

// policies is the resource whose objects name Secrets to watch.
const policies = "policies"

// discoverOnce asks the API server once which of customKinds it serves.
// A missing group (the CRDs are not installed) is not an error: it
// returns none.
func (s *Source) discoverOnce() ([]customKind, error) {
	list, err := s.discover(nicv1.SchemeGroupVersion.String())
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	var found []customKind
	for _, k := range customKinds {
		if slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == k.resource }) {
			found = append(found, k)
		}
	}
	return found, nil
}

// discoverCustomResources is discoverOnce, retried until ctx ends: a
// snapshot taken without resources that do exist would withdraw their
// routes.
func (s *Source) discoverCustomResources(ctx context.Context) ([]customKind, bool) {
	delay := time.Second
	for {
		found, err := s.discoverOnce()
		if err == nil {
			return found, true
		}
		s.opts.Log.Warn("discovering custom resources failed; retrying", "groupVersion", nicv1.SchemeGroupVersion.String(), "err", err, "retryIn", delay)
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// startCustomResources creates and starts the informers of the custom
// resources found, and logs which are watched.
func (s *Source) startCustomResources(ctx context.Context, found []customKind) *customInformers {
	crs := &customInformers{byKind: map[string][]cache.SharedIndexInformer{}}
	for _, k := range found {
		crs.kinds = append(crs.kinds, k.resource)
	}
	if len(found) == 0 {
		s.opts.Log.Info("custom resources off: the k8s.nginx.org CRDs are not installed (kubectl apply -k deploy/crds; they are noticed within " +
			s.rediscoverEvery().String() + ")")
		return crs
	}
	var missing []string
	for _, k := range customKinds {
		if !slices.Contains(crs.kinds, k.resource) {
			missing = append(missing, k.resource)
		}
	}
	if len(missing) > 0 {
		s.opts.Log.Info("watching custom resources", "resources", strings.Join(crs.kinds, ","), "notInstalled", strings.Join(missing, ","))
	} else {
		s.opts.Log.Info("watching custom resources", "resources", strings.Join(crs.kinds, ","))
	}
	for _, ns := range s.namespaces() {
		f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(s.opts.Dynamic, 0, ns, nil)
		crs.factories = append(crs.factories, f)
		for _, k := range found {
			inf := f.ForResource(nicv1.SchemeGroupVersion.WithResource(k.resource)).Informer()
			crs.byKind[k.resource] = append(crs.byKind[k.resource], s.watchCustom(inf, k))
			if k.resource == policies {
				crs.handlers = append(crs.handlers, s.watchPolicies(inf))
			}
		}
	}
	ctx, crs.stop = context.WithCancel(ctx)
	for _, f := range crs.factories {
		f.Start(ctx.Done())
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

// rediscover discovers the custom resources again every rediscoverEvery
// until ctx ends. When the set changes (CRDs installed or removed), it
// starts informers for the new set, waits until they have listed, puts
// them in place of the old ones, signals a change and stops the old ones. A
// failed discovery changes nothing.
func (s *Source) rediscover(ctx context.Context) {
	t := time.NewTicker(s.rediscoverEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		found, err := s.discoverOnce()
		if err != nil {
			s.opts.Log.Debug("discovering custom resources failed; the watched set stays", "err", err)
			continue
		}
		old := s.custom.Load()
		if slices.EqualFunc(found, old.kinds, func(k customKind, r string) bool { return k.resource == r }) {
			continue
		}
		s.opts.Log.Info("the k8s.nginx.org CRDs changed")
		next := s.startCustomResources(ctx, found)
		if !cache.WaitForCacheSync(ctx.Done(), next.synced()...) {
			next.shutdown()
			return
		}
		s.custom.Store(next)
		s.notifier.Notify()
		old.shutdown()
		if !slices.Contains(next.kinds, policies) {
			s.refs.dropPolicies()
		}
	}
}

// watchCustom is watch for a custom resource's informer: its transform
// turns the unstructured objects of the dynamic client into typed ones,
// so that the store holds what the Snapshot hands out.
func (s *Source) watchCustom(inf cache.SharedIndexInformer, k customKind) cache.SharedIndexInformer {
	if k.resource != policies {
		s.handle(inf) // a Policy's handler is watchPolicies'
	}
	if err := inf.SetTransform(func(obj any) (any, error) { return s.toTyped(obj, k), nil }); err != nil {
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

// snapshot fills the custom resources into snap.
func (c *customInformers) snapshot(snap *source.Snapshot) {
	if c == nil {
		return
	}
	snap.VirtualServers = list[*nicv1.VirtualServer](c.byKind["virtualservers"])
	snap.VirtualServerRoutes = list[*nicv1.VirtualServerRoute](c.byKind["virtualserverroutes"])
	snap.Policies = list[*nicv1.Policy](c.byKind["policies"])
	snap.TransportServers = list[*nicv1.TransportServer](c.byKind["transportservers"])
	snap.GlobalConfigurations = list[*nicv1.GlobalConfiguration](c.byKind["globalconfigurations"])
	for _, k := range customKinds {
		for _, u := range list[*unstructured.Unstructured](c.byKind[k.resource]) {
			err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), k.new())
			snap.Problems = append(snap.Problems, source.Problem{
				Where:   fmt.Sprintf("%s/%s/%s", k.kind, u.GetNamespace(), u.GetName()),
				Message: fmt.Sprintf("cannot be read as %s: %v", nicv1.SchemeGroupVersion.WithKind(k.kind), err),
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
}
