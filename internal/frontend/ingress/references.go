package ingress

import (
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// References lists the objects an Ingress names, in its namespace unless
// an annotation says otherwise: the Services of spec.defaultBackend and of
// every path, the Secrets of spec.tls, and what its annotations name
// (annotations.References, declared in the registry).
func References(ing *networkingv1.Ingress, prefix string) []model.Reference {
	var out []model.Reference
	service := func(b *networkingv1.IngressBackend, from string) {
		if b != nil && b.Service != nil {
			out = append(out, model.Reference{Kind: model.KindService,
				ObjectName: model.ObjectName{Namespace: ing.Namespace, Name: b.Service.Name}, From: from})
		}
	}
	service(ing.Spec.DefaultBackend, "spec.defaultBackend")
	for i, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for j := range r.HTTP.Paths {
			service(&r.HTTP.Paths[j].Backend, fmt.Sprintf("spec.rules[%d].http.paths[%d].backend", i, j))
		}
	}
	for i, t := range ing.Spec.TLS {
		if t.SecretName != "" {
			out = append(out, model.Reference{Kind: model.KindSecret,
				ObjectName: model.ObjectName{Namespace: ing.Namespace, Name: t.SecretName}, From: fmt.Sprintf("spec.tls[%d].secretName", i)})
		}
	}
	return append(out, annotations.References(ing.Namespace, ing.Annotations, prefix)...)
}
