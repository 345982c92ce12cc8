package gateway

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

func wantRef(kind, ns, name, from string) model.Reference {
	return model.Reference{Kind: kind, ObjectName: model.ObjectName{Namespace: ns, Name: name}, From: from}
}

func backend(name string, ns *string) gwv1.BackendObjectReference {
	return gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Namespace: (*gwv1.Namespace)(ns)}
}

func TestReferences(t *testing.T) {
	meta := metav1.ObjectMeta{Namespace: "app", Name: "x"}
	other := ptr.To("other")
	mirror := gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestMirror, RequestMirror: &gwv1.HTTPRequestMirrorFilter{BackendRef: backend("mirror", nil)}}
	for _, tc := range []struct {
		name string
		got  []model.Reference
		want []model.Reference
	}{
		{"Gateway", GatewayReferences(&gwv1.Gateway{ObjectMeta: meta, Spec: gwv1.GatewaySpec{
			Listeners: []gwv1.Listener{
				{Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 80},
				{Name: "https", Protocol: gwv1.HTTPSProtocolType, Port: 443, TLS: &gwv1.ListenerTLSConfig{CertificateRefs: []gwv1.SecretObjectReference{
					{Name: "cert"},
					{Name: "shared", Namespace: (*gwv1.Namespace)(other), Kind: ptr.To(gwv1.Kind("Secret")), Group: ptr.To(gwv1.Group(""))},
					{Name: "vault", Kind: ptr.To(gwv1.Kind("Certificate")), Group: ptr.To(gwv1.Group("example.com"))}, // not read: not listed
				}}},
			},
			TLS: &gwv1.GatewayTLSConfig{
				Backend: &gwv1.GatewayBackendTLS{ClientCertificateRef: &gwv1.SecretObjectReference{Name: "client"}},
				Frontend: &gwv1.FrontendTLSConfig{
					Default: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{CACertificateRefs: []gwv1.ObjectReference{{Kind: "ConfigMap", Name: "ca"}}}},
					PerPort: []gwv1.TLSPortConfig{{Port: 8443, TLS: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{
						CACertificateRefs: []gwv1.ObjectReference{{Kind: "Secret", Name: "ca2", Namespace: (*gwv1.Namespace)(other)}}}}}},
				},
			},
		}}), []model.Reference{
			wantRef("Secret", "app", "cert", "spec.listeners[1].tls.certificateRefs[0]"),
			wantRef("Secret", "other", "shared", "spec.listeners[1].tls.certificateRefs[1]"),
			wantRef("Secret", "app", "client", "spec.tls.backend.clientCertificateRef"),
			wantRef("ConfigMap", "app", "ca", "spec.tls.frontend.default.validation.caCertificateRefs[0]"),
			wantRef("Secret", "other", "ca2", "spec.tls.frontend.perPort[0].tls.validation.caCertificateRefs[0]"),
		}},
		{"ListenerSet", ListenerSetReferences(&gwv1.ListenerSet{ObjectMeta: meta, Spec: gwv1.ListenerSetSpec{
			ParentRef: gwv1.ParentGatewayReference{Name: "gw", Namespace: (*gwv1.Namespace)(other)}, // not a Secret: not listed
			Listeners: []gwv1.ListenerEntry{
				{Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 80},
				{Name: "https", Protocol: gwv1.HTTPSProtocolType, Port: 443, TLS: &gwv1.ListenerTLSConfig{CertificateRefs: []gwv1.SecretObjectReference{
					{Name: "cert"},
					{Name: "shared", Namespace: (*gwv1.Namespace)(other)},
					{Name: "vault", Kind: ptr.To(gwv1.Kind("Certificate")), Group: ptr.To(gwv1.Group("example.com"))}, // not read: not listed
				}}},
				{Name: "tls", Protocol: gwv1.TLSProtocolType, Port: 8443, TLS: &gwv1.ListenerTLSConfig{Mode: ptr.To(gwv1.TLSModePassthrough)}},
				{Name: "https-2", Protocol: gwv1.HTTPSProtocolType, Port: 8444, TLS: &gwv1.ListenerTLSConfig{CertificateRefs: []gwv1.SecretObjectReference{
					{Name: "cert-2", Kind: ptr.To(gwv1.Kind("Secret"))},
				}}},
			},
		}}), []model.Reference{
			wantRef("Secret", "app", "cert", "spec.listeners[1].tls.certificateRefs[0]"),
			wantRef("Secret", "other", "shared", "spec.listeners[1].tls.certificateRefs[1]"),
			wantRef("Secret", "app", "cert-2", "spec.listeners[3].tls.certificateRefs[0]"),
		}},
		{"ListenerSet without TLS", ListenerSetReferences(&gwv1.ListenerSet{ObjectMeta: meta, Spec: gwv1.ListenerSetSpec{
			Listeners: []gwv1.ListenerEntry{{Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 80}},
		}}), nil},
		{"HTTPRoute", HTTPRouteReferences(&gwv1.HTTPRoute{ObjectMeta: meta, Spec: gwv1.HTTPRouteSpec{Rules: []gwv1.HTTPRouteRule{
			{Filters: []gwv1.HTTPRouteFilter{mirror}, BackendRefs: []gwv1.HTTPBackendRef{
				{BackendRef: gwv1.BackendRef{BackendObjectReference: backend("web", nil)}},
				{BackendRef: gwv1.BackendRef{BackendObjectReference: backend("web", other)}, Filters: []gwv1.HTTPRouteFilter{mirror}},
				{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: "bucket", Group: ptr.To(gwv1.Group("example.com")), Kind: ptr.To(gwv1.Kind("Bucket"))}}},
			}},
			{Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterExternalAuth, ExternalAuth: &gwv1.HTTPExternalAuthFilter{BackendRef: backend("auth", nil)}}}},
		}}}), []model.Reference{
			wantRef("Service", "app", "mirror", "spec.rules[0].filters[0].requestMirror.backendRef"),
			wantRef("Service", "app", "web", "spec.rules[0].backendRefs[0]"),
			wantRef("Service", "other", "web", "spec.rules[0].backendRefs[1]"),
			wantRef("Service", "app", "mirror", "spec.rules[0].backendRefs[1].filters[0].requestMirror.backendRef"),
			wantRef("Service", "app", "auth", "spec.rules[1].filters[0].externalAuth.backendRef"),
		}},
		{"GRPCRoute", GRPCRouteReferences(&gwv1.GRPCRoute{ObjectMeta: meta, Spec: gwv1.GRPCRouteSpec{Rules: []gwv1.GRPCRouteRule{{
			Filters:     []gwv1.GRPCRouteFilter{{Type: gwv1.GRPCRouteFilterRequestMirror, RequestMirror: &gwv1.HTTPRequestMirrorFilter{BackendRef: backend("mirror", other)}}},
			BackendRefs: []gwv1.GRPCBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: backend("grpc", nil)}}},
		}}}}), []model.Reference{
			wantRef("Service", "other", "mirror", "spec.rules[0].filters[0].requestMirror.backendRef"),
			wantRef("Service", "app", "grpc", "spec.rules[0].backendRefs[0]"),
		}},
		{"TLSRoute", TLSRouteReferences(&gwv1.TLSRoute{ObjectMeta: meta, Spec: gwv1.TLSRouteSpec{Rules: []gwv1.TLSRouteRule{{
			BackendRefs: []gwv1.BackendRef{{BackendObjectReference: backend("tls", nil)}}}}}}),
			[]model.Reference{wantRef("Service", "app", "tls", "spec.rules[0].backendRefs[0]")}},
		{"TCPRoute", TCPRouteReferences(&gwv1.TCPRoute{ObjectMeta: meta, Spec: gwv1.TCPRouteSpec{Rules: []gwv1.TCPRouteRule{{
			BackendRefs: []gwv1.BackendRef{{BackendObjectReference: backend("tcp", other)}}}}}}),
			[]model.Reference{wantRef("Service", "other", "tcp", "spec.rules[0].backendRefs[0]")}},
		{"UDPRoute", UDPRouteReferences(&gwv1.UDPRoute{ObjectMeta: meta, Spec: gwv1.UDPRouteSpec{Rules: []gwv1.UDPRouteRule{{
			BackendRefs: []gwv1.BackendRef{{BackendObjectReference: backend("dns", nil)}}}}}}),
			[]model.Reference{wantRef("Service", "app", "dns", "spec.rules[0].backendRefs[0]")}},
		{"BackendTLSPolicy", BackendTLSPolicyReferences(&gwv1.BackendTLSPolicy{ObjectMeta: meta, Spec: gwv1.BackendTLSPolicySpec{
			TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Kind: "Service", Name: "web"}}},
			Validation: gwv1.BackendTLSPolicyValidation{CACertificateRefs: []gwv1.LocalObjectReference{{Kind: "ConfigMap", Name: "ca"}, {Kind: "Secret", Name: "ca-secret"}}},
		}}), []model.Reference{
			wantRef("Service", "app", "web", "spec.targetRefs[0]"),
			wantRef("ConfigMap", "app", "ca", "spec.validation.caCertificateRefs[0]"),
			wantRef("Secret", "app", "ca-secret", "spec.validation.caCertificateRefs[1]"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !slices.Equal(tc.got, tc.want) {
				t.Errorf("got  %v\nwant %v", tc.got, tc.want)
			}
		})
	}
}
