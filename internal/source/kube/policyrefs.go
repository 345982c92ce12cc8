package kube

import (
	"fmt"
	"strings"

	"k8s.io/client-go/tools/cache"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/frontend/nic"
)

// The Secrets that NGINX Ingress Controller's Policies name (basicAuth's
// nginx.org/htpasswd, apiKey's nginx.org/apikey, the nginx.org/ca ones of
// ingressMTLS, egressMTLS and externalAuth) are of types the TLS informer
// never lists: they are watched by name, as those of Ingress annotations
// are, from nic.PolicyReferences. A Policy reads Secrets of its own
// namespace only.

// policyPrefix starts the refs keys of Policies; Ingress keys never hold
// ":".
const policyPrefix = "policy:"

// updatePolicy records the Secrets a Policy names ("namespace/name" key;
// p nil when it was deleted), as update does for an Ingress.
func (r *refs) updatePolicy(key string, p *nicv1.Policy) (deferred bool) {
	var wanted map[refKey]refState
	if p != nil {
		for _, ref := range nic.PolicyReferences(p) {
			kind, ok := watched[ref.Kind]
			if !ok {
				continue
			}
			k, st := r.check(kind, p.Namespace, ref.ObjectName)
			if wanted == nil {
				wanted = map[refKey]refState{}
			}
			wanted[k] = st
		}
	}
	return r.apply(policyPrefix+key, wanted)
}

// dropPolicies forgets the references of every Policy: their informer is
// gone (the CRD was removed).
func (r *refs) dropPolicies() {
	r.mu.Lock()
	var keys []string
	for k := range r.byIngress {
		if strings.HasPrefix(k, policyPrefix) {
			keys = append(keys, k)
		}
	}
	r.mu.Unlock()
	for _, k := range keys {
		r.apply(k, nil)
	}
}

// watchPolicies installs the Policy informer's change handler, which keeps
// the informers of the Secrets Policies name in step, and signals a change
// once those are listed (or at once when there is nothing new to list).
func (s *Source) watchPolicies(inf cache.SharedIndexInformer) cache.ResourceEventHandlerRegistration {
	changed := func(obj any, p *nicv1.Policy) {
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			return
		}
		if !s.refs.updatePolicy(key, p) {
			s.notifier.Notify()
		}
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			p, _ := obj.(*nicv1.Policy) // nil when unreadable: it names nothing
			changed(obj, p)
		},
		UpdateFunc: func(old, obj any) {
			if !statusOnly(old, obj) {
				p, _ := obj.(*nicv1.Policy)
				changed(obj, p)
			}
		},
		DeleteFunc: func(obj any) { changed(obj, nil) },
	})
	if err != nil {
		panic(fmt.Sprintf("add event handler: %v", err)) // not started yet
	}
	return reg
}
