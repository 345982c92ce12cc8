package build

import (
	"sort"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/source"
)

// ingressProcessor adds the Ingresses of our classes: their paths claim
// host and path (a canary's split those won, once every main Ingress has
// claimed), their rules hosts, their spec.tls a host's certificate.
type ingressProcessor struct {
	*builder
}

func (b *ingressProcessor) objects(snap *source.Snapshot) []object {
	var ours []*networkingv1.Ingress
	for _, ing := range snap.Ingresses {
		if b.classes.IsOurs(ing) {
			ours = append(ours, ing)
		}
	}
	sort.SliceStable(ours, func(i, j int) bool { return ranksFirst(ours[i], ours[j]) })
	b.findMasters(ours)
	out := make([]object, 0, len(ours))
	for _, ing := range ours {
		out = append(out, object{meta: ing, add: func() { b.addIngress(ing) }})
	}
	return out
}

func (b *ingressProcessor) after(*source.Snapshot) { b.addCanaries() }
