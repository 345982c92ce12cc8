package gateway

import (
	"fmt"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// This file lists what Gateway API's objects name: the Secrets and
// ConfigMaps of certificates and CAs, and the Services of backendRefs.
// A reference says what an object asks for, not what it may have: a name
// in another namespace is listed whether or not a ReferenceGrant permits
// it (the source caches it; the build decides). References to kinds
// Causeway does not read (a backendRef of another group, an extensionRef,
// a GatewayClass's parametersRef) are not listed: the front-end reports
// them. ReferenceGrants, GatewayClasses and TLS-less objects name nothing
// the source caches by name.

// refs collects the references of one object in namespace ns.
type refs struct {
	ns  string
	out []model.Reference
}

// add lists the object of group/kind (kind def when empty) named name in
// namespace (the object's when nil), as the field at path names it, when
// it is one of the core kinds a Reference can name.
func (r *refs) add(group *gwv1.Group, kind *gwv1.Kind, def string, name gwv1.ObjectName, namespace *gwv1.Namespace, path string) {
	k := def
	if kind != nil {
		k = string(*kind)
	}
	if (group != nil && *group != "") || name == "" {
		return // not the core group, or no name
	}
	switch k {
	case model.KindSecret, model.KindConfigMap, model.KindService:
	default:
		return
	}
	ns := r.ns
	if namespace != nil && *namespace != "" {
		ns = string(*namespace)
	}
	r.out = append(r.out, model.Reference{Kind: k, ObjectName: model.ObjectName{Namespace: ns, Name: string(name)}, From: path})
}

func (r *refs) secret(ref gwv1.SecretObjectReference, path string) {
	r.add(ref.Group, ref.Kind, model.KindSecret, ref.Name, ref.Namespace, path)
}

// object lists an ObjectReference, whose group and kind are required.
func (r *refs) object(ref gwv1.ObjectReference, path string) {
	g, k := ref.Group, ref.Kind
	r.add(&g, &k, "", ref.Name, ref.Namespace, path)
}

// backend lists a backendRef, a Service unless it says otherwise.
func (r *refs) backend(ref gwv1.BackendObjectReference, path string) {
	r.add(ref.Group, ref.Kind, model.KindService, ref.Name, ref.Namespace, path)
}

func (r *refs) backends(refs []gwv1.BackendRef, path string) {
	for i, b := range refs {
		r.backend(b.BackendObjectReference, fmt.Sprintf("%s.backendRefs[%d]", path, i))
	}
}

// filters lists the backends of an HTTPRoute's (or a GRPCRoute's) filters:
// RequestMirror's, and ExternalAuth's.
func (r *refs) filters(fs []gwv1.HTTPRouteFilter, path string) {
	for i, f := range fs {
		if m := f.RequestMirror; m != nil {
			r.backend(m.BackendRef, fmt.Sprintf("%s.filters[%d].requestMirror.backendRef", path, i))
		}
		if a := f.ExternalAuth; a != nil {
			r.backend(a.BackendRef, fmt.Sprintf("%s.filters[%d].externalAuth.backendRef", path, i))
		}
	}
}

// tlsValidation lists a frontend TLS validation's CA certificates.
func (r *refs) tlsValidation(v *gwv1.FrontendTLSValidation, path string) {
	if v == nil {
		return
	}
	for i, c := range v.CACertificateRefs {
		r.object(c, fmt.Sprintf("%s.validation.caCertificateRefs[%d]", path, i))
	}
}

// certificates lists a listener's tls.certificateRefs (path is the
// listener's).
func (r *refs) certificates(tls *gwv1.ListenerTLSConfig, path string) {
	if tls == nil {
		return
	}
	for i, c := range tls.CertificateRefs {
		r.secret(c, fmt.Sprintf("%s.tls.certificateRefs[%d]", path, i))
	}
}

// GatewayReferences lists what a Gateway names: its listeners'
// certificateRefs, and in spec.tls the client certificate it presents to
// backends and the CAs that validate client certificates.
func GatewayReferences(g *gwv1.Gateway) []model.Reference {
	r := &refs{ns: g.Namespace}
	for i, l := range g.Spec.Listeners {
		r.certificates(l.TLS, fmt.Sprintf("spec.listeners[%d]", i))
	}
	if t := g.Spec.TLS; t != nil {
		if b := t.Backend; b != nil && b.ClientCertificateRef != nil {
			r.secret(*b.ClientCertificateRef, "spec.tls.backend.clientCertificateRef")
		}
		if f := t.Frontend; f != nil {
			r.tlsValidation(f.Default.Validation, "spec.tls.frontend.default")
			for i, p := range f.PerPort {
				r.tlsValidation(p.TLS.Validation, fmt.Sprintf("spec.tls.frontend.perPort[%d].tls", i))
			}
		}
	}
	return r.out
}

// ListenerSetReferences lists what a ListenerSet names: its listeners'
// certificateRefs. It has no spec.tls of its own: the parent Gateway's
// frontend validation applies to its listeners, and the Gateway's
// references list those CAs.
func ListenerSetReferences(ls *gwv1.ListenerSet) []model.Reference {
	r := &refs{ns: ls.Namespace}
	for i, l := range ls.Spec.Listeners {
		r.certificates(l.TLS, fmt.Sprintf("spec.listeners[%d]", i))
	}
	return r.out
}

// HTTPRouteReferences lists the Services an HTTPRoute's rules send to:
// their backendRefs, and the backends of their filters and of their
// backendRefs' filters.
func HTTPRouteReferences(rt *gwv1.HTTPRoute) []model.Reference {
	r := &refs{ns: rt.Namespace}
	for i, rule := range rt.Spec.Rules {
		path := fmt.Sprintf("spec.rules[%d]", i)
		r.filters(rule.Filters, path)
		for j, b := range rule.BackendRefs {
			bp := fmt.Sprintf("%s.backendRefs[%d]", path, j)
			r.backend(b.BackendObjectReference, bp)
			r.filters(b.Filters, bp)
		}
	}
	return r.out
}

// GRPCRouteReferences is HTTPRouteReferences for a GRPCRoute, whose
// filters can mirror.
func GRPCRouteReferences(rt *gwv1.GRPCRoute) []model.Reference {
	r := &refs{ns: rt.Namespace}
	mirrors := func(fs []gwv1.GRPCRouteFilter, path string) {
		for i, f := range fs {
			if m := f.RequestMirror; m != nil {
				r.backend(m.BackendRef, fmt.Sprintf("%s.filters[%d].requestMirror.backendRef", path, i))
			}
		}
	}
	for i, rule := range rt.Spec.Rules {
		path := fmt.Sprintf("spec.rules[%d]", i)
		mirrors(rule.Filters, path)
		for j, b := range rule.BackendRefs {
			bp := fmt.Sprintf("%s.backendRefs[%d]", path, j)
			r.backend(b.BackendObjectReference, bp)
			mirrors(b.Filters, bp)
		}
	}
	return r.out
}

// TLSRouteReferences lists the Services of a TLSRoute's backendRefs.
func TLSRouteReferences(rt *gwv1.TLSRoute) []model.Reference {
	r := &refs{ns: rt.Namespace}
	for i, rule := range rt.Spec.Rules {
		r.backends(rule.BackendRefs, fmt.Sprintf("spec.rules[%d]", i))
	}
	return r.out
}

// TCPRouteReferences lists the Services of a TCPRoute's backendRefs.
func TCPRouteReferences(rt *gwv1.TCPRoute) []model.Reference {
	r := &refs{ns: rt.Namespace}
	for i, rule := range rt.Spec.Rules {
		r.backends(rule.BackendRefs, fmt.Sprintf("spec.rules[%d]", i))
	}
	return r.out
}

// UDPRouteReferences lists the Services of a UDPRoute's backendRefs.
func UDPRouteReferences(rt *gwv1.UDPRoute) []model.Reference {
	r := &refs{ns: rt.Namespace}
	for i, rule := range rt.Spec.Rules {
		r.backends(rule.BackendRefs, fmt.Sprintf("spec.rules[%d]", i))
	}
	return r.out
}

// BackendTLSPolicyReferences lists the ConfigMaps (or Secrets) of a
// BackendTLSPolicy's caCertificateRefs, in its namespace, and the Services
// it targets.
func BackendTLSPolicyReferences(p *gwv1.BackendTLSPolicy) []model.Reference {
	r := &refs{ns: p.Namespace}
	for i, t := range p.Spec.TargetRefs {
		g, k := t.Group, t.Kind
		r.add(&g, &k, "", t.Name, nil, fmt.Sprintf("spec.targetRefs[%d]", i))
	}
	for i, c := range p.Spec.Validation.CACertificateRefs {
		g, k := c.Group, c.Kind
		r.add(&g, &k, "", c.Name, nil, fmt.Sprintf("spec.validation.caCertificateRefs[%d]", i))
	}
	return r.out
}
