package ingress

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

func TestReferences(t *testing.T) {
	backend := func(svc string) networkingv1.IngressBackend {
		return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc}}
	}
	def := backend("fallback")
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "web", Annotations: map[string]string{
			annotations.DefaultPrefix + "/custom-headers": "headers",
		}},
		Spec: networkingv1.IngressSpec{
			DefaultBackend: &def,
			Rules: []networkingv1.IngressRule{{Host: "a.test"}, {Host: "b.test", IngressRuleValue: networkingv1.IngressRuleValue{
				HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
					{Path: "/", Backend: backend("web")},
					{Path: "/r", Backend: networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "b"}}},
				}}}}},
			TLS: []networkingv1.IngressTLS{{Hosts: []string{"b.test"}}, {SecretName: "b-tls"}},
		},
	}
	name := func(n string) model.ObjectName { return model.ObjectName{Namespace: "app", Name: n} }
	want := []model.Reference{
		{Kind: model.KindService, ObjectName: name("fallback"), From: "spec.defaultBackend"},
		{Kind: model.KindService, ObjectName: name("web"), From: "spec.rules[1].http.paths[0].backend"},
		{Kind: model.KindSecret, ObjectName: name("b-tls"), From: "spec.tls[1].secretName"},
		{Kind: model.KindConfigMap, ObjectName: name("headers"), From: annotations.DefaultPrefix + "/custom-headers"},
	}
	if got := References(ing, annotations.DefaultPrefix); !reflect.DeepEqual(got, want) {
		t.Errorf("References:\n got  %v\n want %v", got, want)
	}
}
