package kube

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/source"
)

// Source is a source.AheadSource: the Ingresses of a host and the
// EndpointSlices of a Service come from indexes, so that a build of a few
// Ingresses does not list 10,000 of each kind first.
var _ source.AheadSource = (*Source)(nil)

// hostIndex indexes Ingresses by the hosts of their rules, in buckets
// (buckets.go).
const hostIndex = "host"

func ingressHosts(obj any) []string {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(ing.Spec.Rules))
	for _, r := range ing.Spec.Rules {
		out = append(out, r.Host)
	}
	return out
}

// SnapshotAhead is source.Ahead(s.Snapshot(), keys, services), from the
// caches' indexes.
func (s *Source) SnapshotAhead(keys map[string]bool, services func([]*networkingv1.Ingress) map[string]bool) *source.Snapshot {
	snap := source.WithoutServers(s.snapshot(false))
	seen := map[*networkingv1.Ingress]bool{}
	var ings []*networkingv1.Ingress
	add := func(obj any) []string {
		ing, ok := obj.(*networkingv1.Ingress)
		if !ok || seen[ing] || !s.Watches(ing.Namespace) {
			return nil
		}
		seen[ing] = true
		ings = append(ings, ing)
		return ingressHosts(ing)
	}
	hosts := map[string]bool{}
	for key := range keys {
		for _, inf := range s.ingresses {
			if obj, ok, err := inf.GetStore().GetByKey(key); err == nil && ok {
				for _, h := range add(obj) {
					hosts[h] = true
				}
			}
		}
	}
	for h := range hosts {
		for _, inf := range s.ingresses {
			for _, obj := range inBucket(inf.GetIndexer(), hostIndex, h, ingressHosts) {
				add(obj)
			}
		}
	}
	snap.Ingresses = ings
	for key := range services(ings) {
		for _, inf := range s.services {
			if obj, ok, err := inf.GetStore().GetByKey(key); err == nil && ok {
				if svc, ok := obj.(*corev1.Service); ok {
					snap.Services = append(snap.Services, svc)
				}
			}
		}
		for _, inf := range s.slices {
			for _, obj := range inBucket(inf.GetIndexer(), serviceIndex, key, sliceService) {
				if es, ok := obj.(*discoveryv1.EndpointSlice); ok {
					snap.EndpointSlices = append(snap.EndpointSlices, es)
				}
			}
		}
	}
	return snap
}
