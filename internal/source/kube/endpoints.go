package kube

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/causeway/causeway/internal/source"
)

// Source is a source.EndpointSource: EndpointSlice changes, the most
// frequent in a cluster, are told apart by Service so that the controller
// can push them without a build.
var _ source.EndpointSource = (*Source)(nil)

// serviceIndex indexes EndpointSlices by their Service
// ("namespace/name", from the kubernetes.io/service-name label), in
// buckets (buckets.go).
const serviceIndex = "service"

func sliceService(obj any) []string {
	es, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok || es.Labels[discoveryv1.LabelServiceName] == "" {
		return nil
	}
	return []string{es.Namespace + "/" + es.Labels[discoveryv1.LabelServiceName]}
}

// endpointChanges are the Services whose EndpointSlices changed since the
// controller last took them.
type endpointChanges struct {
	notifier *source.Notifier
	mu       sync.Mutex
	dirty    map[string]bool
}

func (e *endpointChanges) add(keys ...string) {
	if len(keys) == 0 {
		return
	}
	e.mu.Lock()
	for _, k := range keys {
		e.dirty[k] = true
	}
	e.mu.Unlock()
	e.notifier.Notify()
}

// watchSlices installs the trimming transform, the index by Service and a
// handler that records the Service of each changed slice (before and
// after, should its label change). A slice without the label belongs to
// no Service and changes nothing (the build ignores it too).
func (s *Source) watchSlices(inf cache.SharedIndexInformer) (cache.SharedIndexInformer, error) {
	setTrim(inf)
	if err := inf.AddIndexers(cache.Indexers{serviceIndex: bucketed(sliceService)}); err != nil {
		return nil, err
	}
	keys := func(objs ...any) []string {
		var out []string
		for _, obj := range objs {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			out = append(out, sliceService(obj)...)
		}
		return out
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.endpoints.add(keys(obj)...) },
		UpdateFunc: func(old, obj any) { s.endpoints.add(keys(old, obj)...) },
		DeleteFunc: func(obj any) { s.endpoints.add(keys(obj)...) },
	})
	return inf, err
}

// EndpointsChanged signals EndpointSlice changes (TakeEndpointChanges).
func (s *Source) EndpointsChanged() <-chan struct{} { return s.endpoints.notifier.C() }

// TakeEndpointChanges returns the Services whose EndpointSlices changed
// since the last call and forgets them.
func (s *Source) TakeEndpointChanges() map[string]bool {
	e := &s.endpoints
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.dirty
	e.dirty = map[string]bool{}
	return out
}

// ServiceEndpoints returns Service namespace/name and its EndpointSlices
// from the caches.
func (s *Source) ServiceEndpoints(namespace, name string) (*corev1.Service, []*discoveryv1.EndpointSlice) {
	key := namespace + "/" + name
	var svc *corev1.Service
	for _, inf := range s.services {
		if obj, ok, err := inf.GetIndexer().GetByKey(key); err == nil && ok {
			svc, _ = obj.(*corev1.Service)
			break
		}
	}
	var out []*discoveryv1.EndpointSlice
	for _, inf := range s.slices {
		for _, o := range inBucket(inf.GetIndexer(), serviceIndex, key, sliceService) {
			if es, ok := o.(*discoveryv1.EndpointSlice); ok {
				out = append(out, es)
			}
		}
	}
	return svc, out
}
