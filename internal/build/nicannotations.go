package build

import (
	"slices"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/model"
)

// servicePolicy is pol with what NGINX Ingress Controller's per-Service
// annotations (nginx.org/ssl-services, grpc-services, rewrites) say for
// the Service ib routes to: a copy when they say something.
func servicePolicy(t *ingress.Translation, ib *networkingv1.IngressBackend, pol *model.Policy) *model.Policy {
	if ib == nil || ib.Service == nil {
		return pol
	}
	sp := t.Annotations.Services[ib.Service.Name]
	if sp == nil {
		return pol
	}
	out := &model.Policy{}
	if pol != nil {
		*out = *pol
	}
	if sp.Protocol != "" {
		out.Protocol = sp.Protocol
	}
	if sp.Rewrite != nil {
		out.Rewrite = sp.Rewrite
	}
	return out
}

// unroutedServices reports the Services NIC's per-Service annotations
// name that no path of the Ingress routes to.
func (b *builder) unroutedServices(t *ingress.Translation) {
	if len(t.Annotations.Services) == 0 {
		return
	}
	routed := map[string]bool{}
	if d := t.Default; d != nil && d.Service != nil {
		routed[d.Service.Name] = true
	}
	for _, r := range t.Rules {
		for _, p := range r.Paths {
			if p.Backend != nil && p.Backend.Service != nil {
				routed[p.Backend.Service.Name] = true
			}
		}
	}
	for _, name := range sortedKeys(t.Annotations.Services) {
		if !routed[name] {
			b.problem(t.Ref, model.ReasonUnsupportedAnnotation, false,
				"the nginx.org annotations name Service %q, to which no path of this Ingress routes; ignored for it", name)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
