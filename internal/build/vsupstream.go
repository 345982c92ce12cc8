package build

import (
	"sort"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

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
		if u.ClusterIP {
			be = b.clusterIPBackend(owner, be, "upstream "+name+" use-cluster-ip")
		}
		be = b.addBackend(be)
		if u.Balance != nil {
			b.claimBalance(owner, "upstream "+name+" lb-method or sessionCookie", be, *u.Balance)
		}
		if u.Limits != nil {
			b.claimLimits(owner, "upstream "+name+" max-fails, fail-timeout and max-conns", be, *u.Limits)
		}
		backends[name] = be.Key
	}
	return backends
}
