package ingress

import (
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/class"
)

// LegacyClassAnnotation is the pre-IngressClass way to pick a controller.
const LegacyClassAnnotation = "kubernetes.io/ingress.class"

// Class is how an Ingress names its class (ClassName); one naming none is
// ours only through a default IngressClass of ours or WatchWithoutClass.
var Class = class.Kind[*networkingv1.Ingress]{Of: ClassName, Unnamed: class.ByDefault}

// ClassName is the class an Ingress names: spec.ingressClassName, else the
// legacy annotation; "" for none.
func ClassName(ing *networkingv1.Ingress) string {
	if ing.Spec.IngressClassName != nil {
		return *ing.Spec.IngressClassName
	}
	return ing.Annotations[LegacyClassAnnotation]
}
