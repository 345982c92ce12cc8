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

// customInformers are the informers of the custom resources found at
// start, by resource, one per watched namespace.
type customInformers struct {
	factories []dynamicinformer.DynamicSharedInformerFactory
	byKind    map[string][]cache.SharedIndexInformer
}

// discoverCustomResources asks the API server which of customKinds it
// serves. A missing group (the CRDs are not installed) is not an error:
// it returns none. Other errors are retried until ctx ends, since a
// snapshot taken without resources that do exist would withdraw their
// routes. Discovery happens once, at start: CRDs installed later are
// picked up by a restart.
func (s *Source) discoverCustomResources(ctx context.Context) ([]customKind, bool) {
	gv := nicv1.SchemeGroupVersion.String()
	delay := time.Second
	for {
		list, err := s.opts.Client.Discovery().ServerResourcesForGroupVersion(gv)
		switch {
		case err == nil:
			var found []customKind
			for _, k := range customKinds {
				if slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == k.resource }) {
					found = append(found, k)
				}
			}
			return found, true
		case apierrors.IsNotFound(err):
			return nil, true
		}
		s.opts.Log.Warn("discovering custom resources failed; retrying", "groupVersion", gv, "err", err, "retryIn", delay)
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// startCustomResources discovers the custom resources, logs which are
// watched, and creates and starts their informers. It returns false if
// ctx ended first.
func (s *Source) startCustomResources(ctx context.Context) (*customInformers, bool) {
	found, ok := s.discoverCustomResources(ctx)
	if !ok {
		return nil, false
	}
	crs := &customInformers{byKind: map[string][]cache.SharedIndexInformer{}}
	if len(found) == 0 {
		s.opts.Log.Info("custom resources off: the k8s.nginx.org CRDs are not installed (kubectl apply -k deploy/crds, then restart the controller)")
		return crs, true
	}
	var watched, missing []string
	for _, k := range customKinds {
		if slices.ContainsFunc(found, func(f customKind) bool { return f.resource == k.resource }) {
			watched = append(watched, k.resource)
		} else {
			missing = append(missing, k.resource)
		}
	}
	if len(missing) > 0 {
		s.opts.Log.Info("watching custom resources", "resources", strings.Join(watched, ","), "notInstalled", strings.Join(missing, ","))
	} else {
		s.opts.Log.Info("watching custom resources", "resources", strings.Join(watched, ","))
	}
	for _, ns := range s.namespaces() {
		f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(s.opts.Dynamic, 0, ns, nil)
		crs.factories = append(crs.factories, f)
		for _, k := range found {
			inf := f.ForResource(nicv1.SchemeGroupVersion.WithResource(k.resource)).Informer()
			crs.byKind[k.resource] = append(crs.byKind[k.resource], s.watchCustom(inf, k))
		}
	}
	for _, f := range crs.factories {
		f.Start(ctx.Done())
	}
	return crs, true
}

// watchCustom is watch for a custom resource's informer: its transform
// turns the unstructured objects of the dynamic client into typed ones,
// so that the store holds what the Snapshot hands out.
func (s *Source) watchCustom(inf cache.SharedIndexInformer, k customKind) cache.SharedIndexInformer {
	s.handle(inf)
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
	return out
}

func (c *customInformers) shutdown() {
	if c == nil {
		return
	}
	for _, f := range c.factories {
		f.Shutdown()
	}
}
