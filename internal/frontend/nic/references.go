package nic

import (
	"fmt"
	"strings"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// This file lists what NGINX Ingress Controller's resources name: the
// Secrets, Services, Policies and VirtualServerRoutes that the build looks
// up for them. A field naming an object that is not listed here fails
// TestReferencesDeclared. GlobalConfiguration names nothing.

// refs collects the references of one object in namespace ns.
type refs struct {
	ns  string
	out []model.Reference
}

// add lists value, "name" in the object's namespace or "namespace/name",
// as the field at path names it; "" names nothing.
func (r *refs) add(kind, path, value string) {
	if value == "" {
		return
	}
	n := model.ObjectName{Namespace: r.ns, Name: value}
	if before, after, ok := strings.Cut(value, "/"); ok {
		n = model.ObjectName{Namespace: before, Name: after}
	}
	r.out = append(r.out, model.Reference{Kind: kind, ObjectName: n, From: path})
}

func (r *refs) policies(path string, ps []nicv1.PolicyReference) {
	for i, p := range ps {
		ns := p.Namespace
		if ns == "" {
			ns = r.ns
		}
		if p.Name != "" {
			r.out = append(r.out, model.Reference{Kind: model.KindPolicy, ObjectName: model.ObjectName{Namespace: ns, Name: p.Name},
				From: fmt.Sprintf("%s.policies[%d]", path, i)})
		}
	}
}

func (r *refs) upstreams(ups []nicv1.Upstream) {
	for i, u := range ups {
		r.add(model.KindService, fmt.Sprintf("spec.upstreams[%d].service", i), u.Service)
	}
}

// VirtualServerReferences lists what a VirtualServer names: its TLS
// Secret, its upstreams' Services, the Policies of the server and its
// routes, and the VirtualServerRoutes its routes delegate to by name
// (those a routeSelector selects are not named).
func VirtualServerReferences(vs *nicv1.VirtualServer) []model.Reference {
	r := &refs{ns: vs.Namespace}
	if t := vs.Spec.TLS; t != nil {
		r.add(model.KindSecret, "spec.tls.secret", t.Secret)
	}
	r.upstreams(vs.Spec.Upstreams)
	r.policies("spec", vs.Spec.Policies)
	for i, rt := range vs.Spec.Routes {
		r.policies(fmt.Sprintf("spec.routes[%d]", i), rt.Policies)
		r.add(model.KindVirtualServerRoute, fmt.Sprintf("spec.routes[%d].route", i), rt.Route)
	}
	return r.out
}

// VirtualServerRouteReferences lists what a VirtualServerRoute names: its
// upstreams' Services and its subroutes' Policies.
func VirtualServerRouteReferences(vsr *nicv1.VirtualServerRoute) []model.Reference {
	r := &refs{ns: vsr.Namespace}
	r.upstreams(vsr.Spec.Upstreams)
	for i, s := range vsr.Spec.Subroutes {
		r.policies(fmt.Sprintf("spec.subroutes[%d]", i), s.Policies)
	}
	return r.out
}

// TransportServerReferences lists what a TransportServer names: its TLS
// Secret and its upstreams' Services.
func TransportServerReferences(ts *nicv1.TransportServer) []model.Reference {
	r := &refs{ns: ts.Namespace}
	if t := ts.Spec.TLS; t != nil {
		r.add(model.KindSecret, "spec.tls.secret", t.Secret)
	}
	for i, u := range ts.Spec.Upstreams {
		r.add(model.KindService, fmt.Sprintf("spec.upstreams[%d].service", i), u.Service)
	}
	return r.out
}

// PolicyReferences lists the Secrets and Services a Policy names. Those of
// the kinds Causeway refuses (jwt, oidc, waf: NGINX Plus's) are not read
// and not listed.
func PolicyReferences(p *nicv1.Policy) []model.Reference {
	r := &refs{ns: p.Namespace}
	s := &p.Spec
	if a := s.BasicAuth; a != nil {
		r.add(model.KindSecret, "spec.basicAuth.secret", a.Secret)
	}
	if m := s.IngressMTLS; m != nil {
		r.add(model.KindSecret, "spec.ingressMTLS.clientCertSecret", m.ClientCertSecret)
	}
	if m := s.EgressMTLS; m != nil {
		r.add(model.KindSecret, "spec.egressMTLS.tlsSecret", m.TLSSecret)
		r.add(model.KindSecret, "spec.egressMTLS.trustedCertSecret", m.TrustedCertSecret)
	}
	if a := s.APIKey; a != nil {
		r.add(model.KindSecret, "spec.apiKey.clientSecret", a.ClientSecret)
	}
	if e := s.ExternalAuth; e != nil {
		r.add(model.KindService, "spec.externalAuth.authServiceName", e.AuthServiceName)
		r.add(model.KindSecret, "spec.externalAuth.trustedCertSecret", e.TrustedCertSecret)
	}
	return r.out
}
