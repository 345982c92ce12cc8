package gateway

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

type wantListener struct{ conds, kinds string }

func TestCheckGateway(t *testing.T) {
	notAccepted := func(reason string) string {
		return lconds("False/"+reason, "False/Invalid", "True/ResolvedRefs", "False/NoConflicts")
	}
	unresolved := func(reason string) string {
		return lconds("True/Accepted", "False/Invalid", "False/"+reason, "False/NoConflicts")
	}
	// A conflicted listener is not programmed for the same reason (the
	// ListenerSet conformance tests ask for that reason).
	conflicted := func(reason string) string {
		return lconds("False/"+reason, "False/"+reason, "True/ResolvedRefs", "True/"+reason)
	}
	const http, grpcHTTP = "HTTPRoute,GRPCRoute", "HTTPRoute,GRPCRoute"
	for _, tc := range []struct {
		name      string
		gw        *gwv1.Gateway
		class     *Class
		noGrant   bool
		addresses []string
		gateway   string
		listeners []wantListener
	}{
		{name: "conformance base: same-namespace",
			gw:      gateway("same-namespace", listener("http", 80, "HTTP", from("Same"))),
			gateway: gwReady, listeners: []wantListener{{lReady, http}}},
		{name: "conformance base: all-namespaces",
			gw:      gateway("all-namespaces", listener("http", 80, "HTTP", from("All"))),
			gateway: gwReady, listeners: []wantListener{{lReady, http}}},
		{name: "conformance base: backend-namespaces (Selector)",
			gw:      gateway("backend-namespaces", listener("http", 80, "HTTP", selector(map[string]string{"gateway-conformance": "backend"}))),
			gateway: gwReady, listeners: []wantListener{{lReady, http}}},
		{name: "conformance base: same-namespace-with-https-listener (distinct by hostname, overlapping wildcards are no conflict)",
			gw: gateway("same-namespace-with-https-listener",
				listener("https", 443, "HTTPS", from("Same"), cert("/Secret:"+infra+"/tls-validity-checks-certificate")),
				listener("https-with-hostname", 443, "HTTPS", hostname("second-example.org"), from("Same"), cert("/Secret:"+infra+"/tls-validity-checks-certificate")),
				listener("https-with-wildcard-hostname", 443, "HTTPS", hostname("*.wildcard.org"), from("Same"), cert("/Secret:"+infra+"/tls-validity-checks-certificate")),
				listener("https-with-hostname-matching-wildcard", 443, "HTTPS", hostname("fourth-example.wildcard.org"), from("Same"), cert("/Secret:"+infra+"/tls-validity-checks-certificate"))),
			gateway:   gwReady,
			listeners: []wantListener{{lReady, grpcHTTP}, {lReady, grpcHTTP}, {lReady, grpcHTTP}, {lReady, grpcHTTP}}},
		{name: "Programmed: no address yet is AddressNotAssigned (listeners Pending)",
			gw: gateway("g", listener("http", 80, "HTTP")), addresses: []string{},
			gateway:   "Accepted=True/Accepted Programmed=False/AddressNotAssigned",
			listeners: []wantListener{{lconds("True/Accepted", "False/Pending", "True/ResolvedRefs", "False/NoConflicts"), http}}},
		{name: "GatewayListenerUnsupportedProtocol: only unsupported protocols: Gateway not accepted",
			gw:        gateway("gateway-only-unsupported-protocols", listener("invalid", 1111, "INVALID")),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{notAccepted("UnsupportedProtocol"), ""}}},
		{name: "GatewayListenerUnsupportedProtocol: supported and unsupported: Accepted=True ListenersNotValid",
			gw:        gateway("gateway-supported-and-unsupported-protocols", listener("http", 80, "HTTP"), listener("invalid", 1111, "INVALID")),
			gateway:   "Accepted=True/ListenersNotValid Programmed=True/Programmed",
			listeners: []wantListener{{lReady, http}, {notAccepted("UnsupportedProtocol"), ""}}},
		{name: "ProtocolType: implementation-specific protocol is unsupported",
			gw:        gateway("g", listener("x", 80, "example.com/bar")),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{notAccepted("UnsupportedProtocol"), ""}}},
		{name: "GatewayInvalidRouteKind: only an invalid kind: ResolvedRefs InvalidRouteKinds, no supportedKinds",
			gw:        gateway("gateway-only-invalid-route-kind", listener("http", 80, "HTTP", from("All"), kinds("InvalidRoute"))),
			gateway:   gwReady,
			listeners: []wantListener{{unresolved("InvalidRouteKinds"), ""}}},
		{name: "GatewayInvalidRouteKind: valid and invalid: the valid one is listed",
			gw:        gateway("gateway-supported-and-invalid-route-kind", listener("http", 80, "HTTP", from("All"), kinds("InvalidRoute", "HTTPRoute"))),
			gateway:   gwReady,
			listeners: []wantListener{{unresolved("InvalidRouteKinds"), "HTTPRoute"}}},
		{name: "AllowedRoutes.Kinds: a kind of another group is invalid",
			gw:        gateway("g", listener("http", 80, "HTTP", kinds("HTTPRoute.example.com", "GRPCRoute"))),
			gateway:   gwReady,
			listeners: []wantListener{{unresolved("InvalidRouteKinds"), "GRPCRoute"}}},
		{name: "AllowedRoutes.Kinds: a kind the protocol does not carry is invalid (TCPRoute on HTTP)",
			gw:        gateway("g", listener("http", 80, "HTTP", kinds("TCPRoute"))),
			gateway:   gwReady,
			listeners: []wantListener{{unresolved("InvalidRouteKinds"), ""}}},
		{name: "TLSRouteListenerPassthroughSupportedKinds: TCPRoute is not a TLS listener's kind",
			gw:        gateway("g", listener("tls", 443, "TLS", mode("Passthrough"), kinds("TCPRoute", "TLSRoute"))),
			gateway:   gwReady,
			listeners: []wantListener{{unresolved("InvalidRouteKinds"), "TLSRoute"}}},
		{name: "TLSRouteListenerTerminateSupportedKinds: TLS Terminate takes TLSRoutes",
			gw:        gateway("g", listener("tls", 443, "TLS", mode("Terminate"), cert(infra+"/tls-validity-checks-certificate"))),
			gateway:   gwReady,
			listeners: []wantListener{{lReady, "TLSRoute"}}},
		{name: "TLS Terminate needs its certificate",
			gw:        gateway("g", listener("tls", 443, "TLS", mode("Terminate"))),
			gateway:   gwReady,
			listeners: []wantListener{{unresolved("InvalidCertificateRef"), "TLSRoute"}}},
		{name: "protocols: TCP and UDP with their route kinds",
			gw:        gateway("g", listener("tcp", 5000, "TCP"), listener("udp", 5000, "UDP")),
			gateway:   gwReady,
			listeners: []wantListener{{lReady, "TCPRoute"}, {lReady, "UDPRoute"}}},
		{name: "GatewayInvalidTLSConfiguration: nonexistent secret",
			gw:        gateway("gateway-certificate-nonexistent-secret", listener("https", 443, "HTTPS", from("All"), cert("/Secret:nonexistent-certificate"))),
			gateway:   gwReady,
			listeners: []wantListener{{unresolved("InvalidCertificateRef"), http}}},
		{name: "GatewayInvalidTLSConfiguration: unsupported group",
			gw:        gateway("gateway-certificate-unsupported-group", listener("https", 443, "HTTPS", from("All"), cert("wrong.group.company.io/Secret:tls-validity-checks-certificate"))),
			gateway:   gwReady,
			listeners: []wantListener{{unresolved("InvalidCertificateRef"), http}}},
		{name: "GatewayInvalidTLSConfiguration: unsupported kind",
			gw:        gateway("gateway-certificate-unsupported-kind", listener("https", 443, "HTTPS", from("All"), cert("/WrongKind:tls-validity-checks-certificate"))),
			gateway:   gwReady,
			listeners: []wantListener{{unresolved("InvalidCertificateRef"), http}}},
		{name: "GatewayInvalidTLSConfiguration: malformed secret",
			gw:        gateway("gateway-certificate-malformed-secret", listener("https", 443, "HTTPS", from("All"), cert("/Secret:malformed-certificate"))),
			gateway:   gwReady,
			listeners: []wantListener{{unresolved("InvalidCertificateRef"), http}}},
		{name: "ListenerTLSConfig.CertificateRefs: HTTPS without any",
			gw:        gateway("g", listener("https", 443, "HTTPS")),
			gateway:   gwReady,
			listeners: []wantListener{{unresolved("InvalidCertificateRef"), http}}},
		{name: "GatewaySecretMissingReferenceGrant: RefNotPermitted",
			gw:        gateway("gateway-secret-missing-reference-grant", listener("https", 443, "HTTPS", from("All"), cert("/Secret:gateway-conformance-web-backend/certificate"))),
			noGrant:   true,
			gateway:   gwReady,
			listeners: []wantListener{{unresolved("RefNotPermitted"), http}}},
		{name: "GatewaySecretReferenceGrantSpecific: granted",
			gw:        gateway("gateway-secret-reference-grant-specific", listener("https", 443, "HTTPS", from("All"), cert("/Secret:gateway-conformance-web-backend/certificate"))),
			gateway:   gwReady,
			listeners: []wantListener{{lReady, http}}},
		{name: "ListenerTLSConfig.Mode: Passthrough on HTTPS is UnsupportedValue",
			gw:        gateway("g", listener("https", 443, "HTTPS", mode("Passthrough"))),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{notAccepted("UnsupportedValue"), http}}},
		{name: "Listener.TLS: TLS without a mode is UnsupportedValue",
			gw:        gateway("g", listener("tls", 443, "TLS")),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{notAccepted("UnsupportedValue"), "TLSRoute"}}},
		{name: "Listener.TLS: tls on HTTP is UnsupportedValue",
			gw:        gateway("g", listener("http", 80, "HTTP", mode("Terminate"))),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{notAccepted("UnsupportedValue"), http}}},
		{name: "Listener.Hostname: not for TCP",
			gw:        gateway("g", listener("tcp", 9000, "TCP", hostname("a.example.com"))),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{notAccepted("UnsupportedValue"), "TCPRoute"}}},
		{name: "Listener.Hostname: an IP is UnsupportedValue",
			gw:        gateway("g", listener("http", 80, "HTTP", hostname("10.1.2.3"))),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{notAccepted("UnsupportedValue"), http}}},
		{name: "RouteNamespaces.Selector: required with from Selector",
			gw:        gateway("g", listener("http", 80, "HTTP", from("Selector"))),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{notAccepted("UnsupportedValue"), http}}},
		{name: "RouteNamespaces.Selector: an invalid selector is UnsupportedValue",
			gw: gateway("g", listener("http", 80, "HTTP", func(l *gwv1.Listener) {
				from(gwv1.NamespacesFromSelector)(l)
				l.AllowedRoutes.Namespaces.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Near"}}}
			})),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{notAccepted("UnsupportedValue"), http}}},
		{name: "RouteNamespaces.From: unknown value",
			gw:        gateway("g", listener("http", 80, "HTTP", from("Elsewhere"))),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{notAccepted("UnsupportedValue"), http}}},
		{name: "Distinct Listeners: same port, protocol and hostname: HostnameConflict for both",
			gw:        gateway("g", listener("a", 80, "HTTP", hostname("a.example.com")), listener("b", 80, "HTTP", hostname("a.example.com")), listener("c", 80, "HTTP")),
			gateway:   "Accepted=True/ListenersNotValid Programmed=True/Programmed",
			listeners: []wantListener{{conflicted("HostnameConflict"), http}, {conflicted("HostnameConflict"), http}, {lReady, http}}},
		{name: "Distinct Listeners: same port, no hostname twice",
			gw:        gateway("g", listener("a", 80, "HTTP"), listener("b", 80, "HTTP")),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{conflicted("HostnameConflict"), http}, {conflicted("HostnameConflict"), http}}},
		{name: "Distinct Listeners: HTTP and HTTPS on one port: ProtocolConflict",
			gw:        gateway("g", listener("a", 8443, "HTTP"), listener("b", 8443, "HTTPS", cert("tls-validity-checks-certificate")), listener("c", 80, "HTTP")),
			gateway:   "Accepted=True/ListenersNotValid Programmed=True/Programmed",
			listeners: []wantListener{{conflicted("ProtocolConflict"), http}, {conflicted("ProtocolConflict"), http}, {lReady, http}}},
		{name: "Distinct Listeners: TCP shares a port with HTTP: all conflicted",
			gw:        gateway("g", listener("a", 80, "HTTP", hostname("a.example.com")), listener("t", 80, "TCP")),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{conflicted("ProtocolConflict"), http}, {conflicted("ProtocolConflict"), "TCPRoute"}}},
		{name: "Distinct Listeners: TCP and TCP on one port",
			gw:        gateway("g", listener("a", 9000, "TCP"), listener("b", 9000, "TCP")),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{conflicted("HostnameConflict"), "TCPRoute"}, {conflicted("HostnameConflict"), "TCPRoute"}}},
		{name: "TLSRouteModeMixed: Terminate and Passthrough share a port by hostname",
			gw: gateway("gateway-tlsroute-mixed-termination",
				listener("tls-terminate", 8443, "TLS", hostname("terminate.example.com"), mode("Terminate"), cert("tls-validity-checks-certificate")),
				listener("tls-passthrough", 8443, "TLS", hostname("passthrough.example.com"), mode("Passthrough"))),
			gateway:   gwReady,
			listeners: []wantListener{{lReady, "TLSRoute"}, {lReady, "TLSRoute"}}},
		{name: "TLSRouteModeMixed: one hostname in both modes is a HostnameConflict",
			gw: gateway("g",
				listener("tls-terminate", 8443, "TLS", hostname("a.example.com"), mode("Terminate"), cert("tls-validity-checks-certificate")),
				listener("tls-passthrough", 8443, "TLS", hostname("a.example.com"), mode("Passthrough"))),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{conflicted("HostnameConflict"), "TLSRoute"}, {conflicted("HostnameConflict"), "TLSRoute"}}},
		{name: "Distinct Listeners: an unsupported listener conflicts with nothing",
			gw:        gateway("g", listener("a", 80, "HTTP"), listener("b", 80, "SCTP")),
			gateway:   "Accepted=True/ListenersNotValid Programmed=True/Programmed",
			listeners: []wantListener{{lReady, http}, {notAccepted("UnsupportedProtocol"), ""}}},
		{name: "GatewayStaticAddresses: spec.addresses with a value is UnsupportedAddress",
			gw: func() *gwv1.Gateway {
				g := gateway("g", listener("http", 80, "HTTP"))
				g.Spec.Addresses = []gwv1.GatewaySpecAddress{{Value: "192.0.2.1"}}
				return g
			}(),
			gateway:   "Accepted=False/UnsupportedAddress Programmed=False/Invalid",
			listeners: []wantListener{{lconds("True/Accepted", "False/Invalid", "True/ResolvedRefs", "False/NoConflicts"), http}}},
		{name: "GatewayOptionalAddressValue: an IPAddress without a value is assigned",
			gw: func() *gwv1.Gateway {
				g := gateway("g", listener("http", 80, "HTTP"))
				ip := gwv1.IPAddressType
				g.Spec.Addresses = []gwv1.GatewaySpecAddress{{Type: &ip}}
				return g
			}(),
			gateway: gwReady, listeners: []wantListener{{lReady, http}}},
		{name: "GatewayInfrastructure.ParametersRef: InvalidParameters",
			gw: func() *gwv1.Gateway {
				g := gateway("g", listener("http", 80, "HTTP"))
				g.Spec.Infrastructure = &gwv1.GatewayInfrastructure{ParametersRef: &gwv1.LocalParametersReference{Kind: "ConfigMap", Name: "p"}}
				return g
			}(),
			gateway:   "Accepted=False/InvalidParameters Programmed=False/Invalid",
			listeners: []wantListener{{lconds("True/Accepted", "False/Invalid", "True/ResolvedRefs", "False/NoConflicts"), http}}},
		{name: "GatewayTLSConfig.Frontend without validation: nothing to check",
			gw: func() *gwv1.Gateway {
				g := gateway("g", listener("http", 80, "HTTP"), listener("https", 443, "HTTPS", cert("tls-validity-checks-certificate")))
				g.Spec.TLS = &gwv1.GatewayTLSConfig{Frontend: &gwv1.FrontendTLSConfig{}}
				return g
			}(),
			gateway: gwReady, listeners: []wantListener{{lReady, http}, {lReady, http}}},
		{name: "client validation: the default's CA",
			gw:      clientCA(gateway("g", listener("http", 80, "HTTP"), listener("https", 443, "HTTPS", cert("tls-validity-checks-certificate"))), 0, "ca"),
			gateway: gwReady, listeners: []wantListener{{lReady, http}, {lReady, http}}},
		{name: "client validation: a port's entry before the default",
			gw: clientCA(clientCA(gateway("g", listener("https", 443, "HTTPS", cert("tls-validity-checks-certificate"))),
				0, "no-such-configmap"), 443, "ca"),
			gateway: gwReady, listeners: []wantListener{{lReady, http}}},
		{name: "client validation: no such ConfigMap: the HTTPS listener is not served, the HTTP one is",
			gw:        clientCA(gateway("g", listener("http", 80, "HTTP"), listener("https", 443, "HTTPS", cert("tls-validity-checks-certificate"))), 0, "no-such-configmap"),
			gateway:   "Accepted=True/ListenersNotValid Programmed=True/Programmed",
			listeners: []wantListener{{lReady, http}, {lconds("False/NoValidCACertificate", "False/Invalid", "False/InvalidCACertificateRef", "False/NoConflicts"), http}}},
		{name: "client validation: a Service is no CA",
			gw:        clientCA(gateway("g", listener("https", 443, "HTTPS", cert("tls-validity-checks-certificate"))), 0, "/Service:infra-backend-v2"),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{lconds("False/NoValidCACertificate", "False/Invalid", "False/InvalidCACertificateKind", "False/NoConflicts"), http}}},
		{name: "client validation: another namespace without a ReferenceGrant",
			gw:        clientCA(gateway("g", listener("https", 443, "HTTPS", cert("tls-validity-checks-certificate"))), 0, "gateway-conformance-web-backend/ca"),
			gateway:   "Accepted=False/ListenersNotValid Programmed=False/Invalid",
			listeners: []wantListener{{lconds("False/NoValidCACertificate", "False/Invalid", "False/RefNotPermitted", "False/NoConflicts"), http}}},
		{name: "client validation: two CA references: not served",
			gw:        clientCA(gateway("g", listener("https", 443, "HTTPS", cert("tls-validity-checks-certificate"))), 0, "ca", "other-ca"),
			gateway:   gwReady,
			listeners: []wantListener{{unresolved("InvalidCACertificateRef"), http}}},
		{name: "GatewayBackendClientCertificate: resolved",
			gw:      backendCert(gateway("g", listener("http", 80, "HTTP")), "tls-validity-checks-certificate"),
			gateway: gwReady + " ResolvedRefs=True/ResolvedRefs", listeners: []wantListener{{lReady, http}}},
		{name: "GatewayBackendClientCertificate: no such Secret",
			gw:      backendCert(gateway("g", listener("http", 80, "HTTP")), "nonexistent-certificate"),
			gateway: gwReady + " ResolvedRefs=False/InvalidClientCertificateRef", listeners: []wantListener{{lReady, http}}},
		{name: "GatewayBackendClientCertificate: a malformed Secret",
			gw:      backendCert(gateway("g", listener("http", 80, "HTTP")), "malformed-certificate"),
			gateway: gwReady + " ResolvedRefs=False/InvalidClientCertificateRef", listeners: []wantListener{{lReady, http}}},
		{name: "GatewayBackendClientCertificate: another group",
			gw:      backendCert(gateway("g", listener("http", 80, "HTTP")), "wrong.group.company.io/Secret:tls-validity-checks-certificate"),
			gateway: gwReady + " ResolvedRefs=False/InvalidClientCertificateRef", listeners: []wantListener{{lReady, http}}},
		{name: "GatewayBackendClientCertificate: another kind",
			gw:      backendCert(gateway("g", listener("http", 80, "HTTP")), "/WrongKind:tls-validity-checks-certificate"),
			gateway: gwReady + " ResolvedRefs=False/InvalidClientCertificateRef", listeners: []wantListener{{lReady, http}}},
		{name: "GatewayBackendClientCertificate: another namespace without a ReferenceGrant",
			gw: backendCert(gateway("g", listener("http", 80, "HTTP")), "gateway-conformance-web-backend/certificate"), noGrant: true,
			gateway: gwReady + " ResolvedRefs=False/RefNotPermitted", listeners: []wantListener{{lReady, http}}},
		{name: "GatewayBackendClientCertificate: another namespace with a ReferenceGrant",
			gw:      backendCert(gateway("g", listener("http", 80, "HTTP")), "gateway-conformance-web-backend/certificate"),
			gateway: gwReady + " ResolvedRefs=True/ResolvedRefs", listeners: []wantListener{{lReady, http}}},
		{name: "class not accepted: Gateway not accepted",
			gw: gateway("g", listener("http", 80, "HTTP")), class: &Class{Name: "causeway"},
			gateway:   "Accepted=False/Invalid Programmed=False/Invalid",
			listeners: []wantListener{{lconds("True/Accepted", "False/Invalid", "True/ResolvedRefs", "False/NoConflicts"), http}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := testInputs()
			if !tc.noGrant {
				in.Grants = []*gwv1.ReferenceGrant{grant("gateway-conformance-web-backend", infra, "Gateway", "Secret", "certificate")}
			}
			class := tc.class
			if class == nil {
				class = ourClass
			}
			addrs := tc.addresses
			if addrs == nil {
				addrs = addresses
			}
			g, problems := CheckGateway(tc.gw, class, addrs, in)
			if got := conds(g.Status.Conditions); got != tc.gateway {
				t.Errorf("Gateway conditions\n got %s\nwant %s", got, tc.gateway)
			}
			if resolved := strings.HasSuffix(tc.gateway, "ResolvedRefs=True/ResolvedRefs"); resolved != (g.BackendClientCert != nil) {
				t.Errorf("BackendClientCert %v, want it resolved: %v", g.BackendClientCert, resolved)
			}
			if len(g.Status.Listeners) != len(tc.listeners) {
				t.Fatalf("%d listener statuses, want %d", len(g.Status.Listeners), len(tc.listeners))
			}
			for i, w := range tc.listeners {
				ls := g.Status.Listeners[i]
				if got := conds(ls.Conditions); got != w.conds {
					t.Errorf("listener %s conditions\n got %s\nwant %s", ls.Name, got, w.conds)
				}
				if got := kindNames(ls.SupportedKinds); got != w.kinds || ls.SupportedKinds == nil {
					t.Errorf("listener %s supportedKinds = %q (nil: %v), want %q", ls.Name, got, ls.SupportedKinds == nil, w.kinds)
				}
			}
			checkProblems(t, g, problems)
		})
	}
}

// checkProblems: every condition that says something is wrong is a
// Problem naming the Gateway with the condition's reason, and every
// condition carries the Gateway's generation.
func checkProblems(t *testing.T, g *Gateway, problems []model.Problem) {
	t.Helper()
	want := map[string]bool{}
	bad := func(prefix string, c metav1.Condition) {
		if c.ObservedGeneration != g.Generation {
			t.Errorf("%s%s: observedGeneration %d, want %d", prefix, c.Type, c.ObservedGeneration, g.Generation)
		}
		if (c.Type == "Conflicted") == (c.Status == metav1.ConditionTrue) {
			want[prefix+c.Type+"="+string(c.Status)+"/"+c.Reason] = true
		}
	}
	for _, c := range g.Status.Conditions {
		bad("", c)
	}
	for _, ls := range g.Status.Listeners {
		for _, c := range ls.Conditions {
			bad(string(ls.Name)+":", c)
		}
	}
	got := map[string]bool{}
	for _, p := range problems {
		if p.Object != g.Ref {
			t.Errorf("problem names %v, want %v", p.Object, g.Ref)
		}
		if p.Condition == nil {
			continue
		}
		prefix := ""
		if p.Condition.Listener != "" {
			prefix = p.Condition.Listener + ":"
		}
		if p.Reason != p.Condition.Reason {
			t.Errorf("problem reason %s, condition reason %s", p.Reason, p.Condition.Reason)
		}
		got[prefix+p.Condition.Type+"="+p.Condition.Status+"/"+p.Condition.Reason] = true
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("problems with conditions\n got %v\nwant %v", got, want)
	}
}

func grant(ns, fromNS, fromKind, toKind, toName string) *gwv1.ReferenceGrant {
	g := &gwv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "grant"}}
	fromGroup := gwv1.Group(group)
	g.Spec.From = []gwv1.ReferenceGrantFrom{{Group: fromGroup, Kind: gwv1.Kind(fromKind), Namespace: gwv1.Namespace(fromNS)}}
	to := gwv1.ReferenceGrantTo{Kind: gwv1.Kind(toKind)}
	if toName != "" {
		n := gwv1.ObjectName(toName)
		to.Name = &n
	}
	g.Spec.To = []gwv1.ReferenceGrantTo{to}
	return g
}

// TestThousandListeners: 1,000 listeners, half of them pairwise
// conflicting, are checked in one pass with every status in place.
func TestThousandListeners(t *testing.T) {
	var ls []gwv1.Listener
	for i := range 1000 {
		port := int32(10000 + i)
		if i%2 == 1 {
			port-- // shares the previous listener's port and (absent) hostname
		}
		ls = append(ls, listener(fmt.Sprintf("l%d", i), port, "HTTP"))
	}
	g, problems := CheckGateway(gateway("big", ls...), ourClass, addresses, testInputs())
	if len(g.Status.Listeners) != 1000 || g.Accepted || len(problems) == 0 {
		t.Fatalf("%d statuses, accepted %v, %d problems", len(g.Status.Listeners), g.Accepted, len(problems))
	}
	for _, l := range g.Listeners {
		if !l.Conflicted || l.conflict.reason != "HostnameConflict" {
			t.Fatalf("listener %s not conflicted: %+v", l.Name, l.conflict)
		}
	}
	if got := conds(g.Status.Conditions); !strings.HasPrefix(got, "Accepted=False/ListenersNotValid") {
		t.Errorf("Gateway: %s", got)
	}
	if msg := g.Status.Conditions[0].Message; len(msg) > 400 {
		t.Errorf("message grows with the listeners: %d bytes", len(msg))
	}
}
