package gateway

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

const infra = "gateway-conformance-infra"

// The conformance base namespaces and their labels (base/manifests.yaml).
var baseNamespaces = map[string]map[string]string{
	infra:                             {"gateway-conformance": "infra"},
	"gateway-conformance-app-backend": {"gateway-conformance": "backend"},
	"gateway-conformance-web-backend": {"gateway-conformance": "backend"},
	"other":                           {},
}

// testSecrets resolves the Secrets the conformance manifests name.
func testSecrets(ns, name string) error {
	switch ns + "/" + name {
	case infra + "/tls-validity-checks-certificate", "gateway-conformance-web-backend/certificate":
		return nil
	case infra + "/malformed-certificate":
		return errors.New("tls.crt is not a PEM certificate")
	}
	return errors.New("not found")
}

func testInputs() Inputs {
	return Inputs{Now: metav1.Now(), Secret: testSecrets, CA: testCA, Namespaces: baseNamespaces}
}

var ourClass = &Class{Name: "causeway", Accepted: true}

func gateway(name string, listeners ...gwv1.Listener) *gwv1.Gateway {
	return &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: name, Generation: 7},
		Spec:       gwv1.GatewaySpec{GatewayClassName: "causeway", Listeners: listeners},
	}
}

func listener(name string, port int32, proto gwv1.ProtocolType, opts ...func(*gwv1.Listener)) gwv1.Listener {
	l := gwv1.Listener{Name: gwv1.SectionName(name), Port: port, Protocol: proto}
	for _, o := range opts {
		o(&l)
	}
	return l
}

func hostname(h string) func(*gwv1.Listener) {
	return func(l *gwv1.Listener) { hn := gwv1.Hostname(h); l.Hostname = &hn }
}

func from(f gwv1.FromNamespaces) func(*gwv1.Listener) {
	return func(l *gwv1.Listener) {
		if l.AllowedRoutes == nil {
			l.AllowedRoutes = &gwv1.AllowedRoutes{}
		}
		l.AllowedRoutes.Namespaces = &gwv1.RouteNamespaces{From: &f}
	}
}

func selector(labels map[string]string) func(*gwv1.Listener) {
	return func(l *gwv1.Listener) {
		from(gwv1.NamespacesFromSelector)(l)
		l.AllowedRoutes.Namespaces.Selector = &metav1.LabelSelector{MatchLabels: labels}
	}
}

func kinds(ks ...string) func(*gwv1.Listener) {
	return func(l *gwv1.Listener) {
		if l.AllowedRoutes == nil {
			l.AllowedRoutes = &gwv1.AllowedRoutes{}
		}
		for _, k := range ks {
			g, kind, ok := strings.Cut(k, ".")
			if !ok {
				l.AllowedRoutes.Kinds = append(l.AllowedRoutes.Kinds, gwv1.RouteGroupKind{Kind: gwv1.Kind(k)})
				continue
			}
			grp := gwv1.Group(kind)
			l.AllowedRoutes.Kinds = append(l.AllowedRoutes.Kinds, gwv1.RouteGroupKind{Group: &grp, Kind: gwv1.Kind(g)})
		}
	}
}

func mode(m gwv1.TLSModeType) func(*gwv1.Listener) {
	return func(l *gwv1.Listener) {
		if l.TLS == nil {
			l.TLS = &gwv1.ListenerTLSConfig{}
		}
		l.TLS.Mode = &m
	}
}

// cert adds a certificateRef "[group/kind:][namespace/]name".
func cert(ref string) func(*gwv1.Listener) {
	return func(l *gwv1.Listener) {
		if l.TLS == nil {
			l.TLS = &gwv1.ListenerTLSConfig{}
		}
		var r gwv1.SecretObjectReference
		if gk, rest, ok := strings.Cut(ref, ":"); ok {
			g, k, _ := strings.Cut(gk, "/")
			grp, kind := gwv1.Group(g), gwv1.Kind(k)
			r.Group, r.Kind = &grp, &kind
			ref = rest
		}
		if ns, name, ok := strings.Cut(ref, "/"); ok {
			n := gwv1.Namespace(ns)
			r.Namespace = &n
			ref = name
		}
		r.Name = gwv1.ObjectName(ref)
		l.TLS.CertificateRefs = append(l.TLS.CertificateRefs, r)
	}
}

// backendCert sets g's spec.tls.backend.clientCertificateRef, written
// as cert's.
func backendCert(g *gwv1.Gateway, ref string) *gwv1.Gateway {
	var l gwv1.Listener
	cert(ref)(&l)
	g.Spec.TLS = &gwv1.GatewayTLSConfig{Backend: &gwv1.GatewayBackendTLS{ClientCertificateRef: &l.TLS.CertificateRefs[0]}}
	return g
}

// clientCA adds client certificate validation against the CA references
// refs ("[group/kind:][namespace/]name", kind ConfigMap by default) to g:
// the default's for port 0, else port's entry.
func clientCA(g *gwv1.Gateway, port gwv1.PortNumber, refs ...string) *gwv1.Gateway {
	v := &gwv1.FrontendTLSValidation{}
	for _, ref := range refs {
		var l gwv1.Listener
		cert(ref)(&l)
		c := l.TLS.CertificateRefs[0]
		o := gwv1.ObjectReference{Kind: kindConfigMap, Name: c.Name, Namespace: c.Namespace}
		if c.Kind != nil {
			o.Group, o.Kind = *c.Group, *c.Kind
		}
		v.CACertificateRefs = append(v.CACertificateRefs, o)
	}
	if g.Spec.TLS == nil {
		g.Spec.TLS = &gwv1.GatewayTLSConfig{}
	}
	if g.Spec.TLS.Frontend == nil {
		g.Spec.TLS.Frontend = &gwv1.FrontendTLSConfig{}
	}
	if port == 0 {
		g.Spec.TLS.Frontend.Default.Validation = v
	} else {
		g.Spec.TLS.Frontend.PerPort = append(g.Spec.TLS.Frontend.PerPort, gwv1.TLSPortConfig{Port: port, TLS: gwv1.TLSConfig{Validation: v}})
	}
	return g
}

// conds abbreviates conditions in order: "Accepted=True/Accepted ...".
func conds(cs []metav1.Condition) string {
	var b []string
	for _, c := range cs {
		b = append(b, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return strings.Join(b, " ")
}

// A listener's four conditions, abbreviated.
func lconds(accepted, programmed, resolved, conflicted string) string {
	return "Accepted=" + accepted + " Programmed=" + programmed + " ResolvedRefs=" + resolved + " Conflicted=" + conflicted
}

var (
	lReady    = lconds("True/Accepted", "True/Programmed", "True/ResolvedRefs", "False/NoConflicts")
	gwReady   = "Accepted=True/Accepted Programmed=True/Programmed"
	addresses = []string{"10.96.0.10"}
)

func kindNames(ks []gwv1.RouteGroupKind) string {
	var b []string
	for _, k := range ks {
		b = append(b, string(k.Kind))
	}
	return strings.Join(b, ",")
}
