package kube

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// The Secrets and ConfigMaps that custom resources name are watched by
// name, as those of Ingress annotations are: NGINX Ingress Controller's
// Policies (basicAuth's nginx.org/htpasswd, apiKey's nginx.org/apikey,
// the nginx.org/ca ones of ingressMTLS, egressMTLS and externalAuth: types
// the TLS informer never lists), Gateway API's Gateways (listener
// certificates, client CAs), ListenerSets (listener certificates) and
// BackendTLSPolicies (backend CAs). What
// each kind names is its front-end's to say (customKind.references). A
// Policy reads Secrets of its own namespace only; Gateway API objects may
// name objects of other namespaces, which a ReferenceGrant may permit:
// those are cached too when their namespace is watched, and the build
// decides whether the reference is permitted.

// customKey is the refs key of a custom resource ("namespace/name", or
// "name" when cluster-scoped); Ingress keys never hold ":".
func customKey(g string, k customKind, key string) string {
	return g + "/" + k.resource + ":" + key
}

// updateCustom records the objects obj names (key is its
// "namespace/name"; obj nil when it was deleted or is unreadable), as
// update does for an Ingress.
func (r *refs) updateCustom(g string, k customKind, key string, obj runtime.Object) (deferred bool) {
	var wanted map[refKey]refState
	if obj != nil {
		namespace, _, _ := strings.Cut(key, "/")
		for _, ref := range k.references(obj) {
			kind, ok := watched[ref.Kind]
			if !ok {
				continue
			}
			from := namespace
			if k.crossNamespace {
				from = ref.Namespace
			}
			rk, st := r.check(kind, from, ref.ObjectName)
			if wanted == nil {
				wanted = map[refKey]refState{}
			}
			wanted[rk] = st
		}
	}
	return r.apply(customKey(g, k, key), wanted)
}

// dropKind forgets the references of every object of k: its informer is
// gone (the CRD was removed).
func (r *refs) dropKind(g *customGroup, k customKind) {
	prefix := customKey(g.gv.Group, k, "")
	r.mu.Lock()
	var keys []string
	for key := range r.byIngress {
		if strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
	}
	r.mu.Unlock()
	for _, key := range keys {
		r.apply(key, nil)
	}
}

// watchReferences installs the change handler of an informer of a kind
// with references, which keeps the informers of the objects they name in
// step, and signals a change once those are listed (or at once when there
// is nothing new to list).
func (s *Source) watchReferences(inf cache.SharedIndexInformer, g *customGroup, k customKind) cache.ResourceEventHandlerRegistration {
	changed := func(obj any) {
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			return
		}
		o, _ := obj.(runtime.Object)
		if _, unreadable := obj.(*unstructured.Unstructured); unreadable {
			o = nil // it names nothing (the snapshot reports it)
		}
		if !s.refs.updateCustom(g.gv.Group, k, key, o) {
			s.notify()
		}
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: changed,
		UpdateFunc: func(old, obj any) {
			if !statusOnly(old, obj) {
				changed(obj)
			}
		},
		DeleteFunc: func(obj any) {
			key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
			if err != nil {
				return
			}
			if !s.refs.updateCustom(g.gv.Group, k, key, nil) {
				s.notify()
			}
		},
	})
	if err != nil {
		panic(fmt.Sprintf("add event handler: %v", err)) // not started yet
	}
	return reg
}
