package build

import (
	"sort"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

// subsetBackend returns the backend of the endpoints of all's Pods that
// sel selects (subselector), with a Problem when it selects none of
// them: the routes then answer 503.
func (b *builder) subsetBackend(owner model.ObjectRef, name, ns string, ref *networkingv1.IngressServiceBackend,
	all *model.Backend, sel map[string]string) *model.Backend {
	be, err := b.idx.resolveSubset(ns, ref, sel)
	if err != nil { // resolve succeeded on the same reference
		b.problem(owner, model.ReasonMissingService, false, "upstream %q: %v; its routes answer 503", name, err)
		return all
	}
	if len(be.Endpoints) == 0 && len(all.Endpoints) > 0 {
		b.problem(owner, model.ReasonMissingService, false,
			"upstream %q: subselector %s selects none of the %d ready endpoints of Service %s/%s (by the labels of the Pods they name); its routes answer 503",
			name, labels.SelectorFromSet(sel), len(all.Endpoints), ns, ref.Name)
	}
	return be
}

// vsBackends resolves the upstreams of a VirtualServer (or
// VirtualServerRoute) owner into backend keys by upstream name. An
// upstream whose Service cannot serve is left out with a Problem (its
// routes answer 503). use-cluster-ip proxies to the Service's cluster IP,
// as the service-upstream annotation does, and lb-method or sessionCookie
// set the backend's balancing as the balancing annotations do: the oldest
// object asking wins for a backend. max-fails, fail-timeout and max-conns
// set its peer limits the same way.
func (b *builder) vsBackends(owner model.ObjectRef, ns string, upstreams map[string]*nic.Upstream) map[string]string {
	names := make([]string, 0, len(upstreams))
	for name := range upstreams {
		names = append(names, name)
	}
	// Sorted, so that two upstreams of one owner that disagree on a
	// backend's balancing always resolve the same way.
	sort.Strings(names)
	backends := map[string]string{}
	for _, name := range names {
		u := upstreams[name]
		ref := &networkingv1.IngressServiceBackend{Name: u.Service, Port: networkingv1.ServiceBackendPort{Number: u.Port}}
		be, err := b.idx.resolve(ns, ref)
		if err != nil {
			b.problem(owner, model.ReasonMissingService, false, "upstream %q: %v; its routes answer 503", name, err)
			continue
		}
		switch {
		case u.ClusterIP:
			if len(u.Subselector) > 0 {
				b.problem(owner, model.ReasonUnsupported, false,
					"upstream %q: subselector has no effect with use-cluster-ip (kube-proxy spreads the connections over every Pod)", name)
			}
			be = b.clusterIPBackend(owner, be, "upstream "+name+" use-cluster-ip")
		case len(u.Subselector) > 0:
			be = b.subsetBackend(owner, name, ns, ref, be, u.Subselector)
		}
		be = b.addBackend(be)
		if u.Balance != nil {
			b.claimBalance(owner, "upstream "+name+" lb-method or sessionCookie", be, *u.Balance)
		}
		if u.Limits != nil {
			b.claimLimits(owner, "upstream "+name+" max-fails, fail-timeout and max-conns", be, *u.Limits)
		}
		if u.Keepalive != nil {
			b.claimKeepalive(owner, "upstream "+name+" keepalive", be, *u.Keepalive)
		}
		backends[name] = be.Key
	}
	return backends
}
