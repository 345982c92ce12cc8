package build

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

// This file resolves what NGINX Ingress Controller's Policies name in
// other objects (Secrets) into the model values the annotations produce:
// basicAuth's htpasswd file, egressMTLS's client certificate and CA
// (proxy-ssl-*'s UpstreamTLS), ingressMTLS's CA (auth-tls-*'s ClientTLS,
// server level). A security Policy that cannot be enforced makes its
// routes answer 500, as in NGINX Ingress Controller: never open.

// The Secret types NGINX Ingress Controller's Policies ask for.
const (
	secretTypeCA corev1.SecretType = "nginx.org/ca"
)

// errPolicyUse marks a Policy used where it cannot apply.
var errPolicyUse = errors.New("not applicable")

// policyReason is the reason of a Problem with a Policy's use or Secrets.
func policyReason(err error) string {
	if errors.Is(err, errPolicyUse) {
		return model.ReasonInvalid
	}
	if errors.Is(err, errNoService) {
		return model.ReasonMissingService
	}
	return secretReason(err)
}

// routePolicy adds one Policy's values to out. own is whether the route
// names the Policy itself (not through the VirtualServer's). An error
// makes the route answer 500.
func (b *virtualServerProcessor) routePolicy(owner model.ObjectRef, p *nic.Policy, out *model.Policy, own bool) error {
	switch {
	case p.Cache != nil:
		out.Cache = b.responseCache(owner, p)
	case p.Access != nil:
		out.Access = p.Access
	case p.Limits != nil:
		out.Limits = p.Limits
	case p.BasicAuth != nil:
		f := &model.AuthFile{Namespace: p.Ref.Namespace, Name: p.BasicAuth.Secret, HTPasswd: true}
		key, err := b.htpasswdFile(f)
		if err != nil {
			return err
		}
		out.BasicAuth = &model.BasicAuth{Realm: p.BasicAuth.Realm, File: key}
	case p.EgressMTLS != nil:
		t, err := b.egressTLS(p.Ref.Namespace, p.EgressMTLS)
		if err != nil {
			return err
		}
		out.UpstreamTLS = t
	case p.ExternalAuth != nil:
		a, err := b.externalAuth(p)
		if err != nil {
			return err
		}
		out.ExternalAuth = a
	case p.APIKey != nil:
		a, err := b.apiKeyAuth(p)
		if err != nil {
			return err
		}
		out.APIKey = a
	case p.CORS != nil:
		out.CORS = p.CORS
	case p.IngressMTLS != nil && own:
		// The VirtualServer's server applies it (vsClientTLS).
		return fmt.Errorf("%w: ingressMTLS applies to a whole VirtualServer, list it in spec.policies, not a route's", errPolicyUse)
	case p.HSTS != nil && own:
		// The VirtualServer's server applies it (vsHSTS).
		return fmt.Errorf("%w: hsts applies to a whole VirtualServer, list it in spec.policies, not a route's", errPolicyUse)
	}
	return nil
}

// applyRoutePolicy sets the values of a route's Policies on its location.
func (b *builder) applyRoutePolicy(ref model.ObjectRef, loc *model.Location, pols *model.Policy) {
	if loc.Policy == nil {
		loc.Policy = &model.Policy{}
	}
	p := loc.Policy
	p.Access, p.BasicAuth, p.Limits, p.ExternalAuth, p.APIKey = pols.Access, pols.BasicAuth, pols.Limits, pols.ExternalAuth, pols.APIKey
	if pols.Cache != nil {
		p.Cache = pols.Cache
		if p.Buffering.Response != nil && !*p.Buffering.Response {
			b.problem(ref, model.ReasonInvalid, false,
				"route %s: the cache Policy needs buffering, which its upstream turns off (buffering: false): responses are buffered and cached", loc.Match.Path)
		}
	}
	if pols.CORS != nil {
		p.CORS = pols.CORS
	}
	if pols.UpstreamTLS != nil {
		p.UpstreamTLS = pols.UpstreamTLS
		if loc.Action.Proxy != nil && !p.Protocol.TLS() {
			b.problem(ref, model.ReasonUnsupported, false,
				"route %s: egressMTLS has no effect on an upstream without tls.enable (as in NGINX Ingress Controller)", loc.Match.Path)
		}
	}
}

// egressTLS resolves egressMTLS's Secrets: tlsSecret of type
// kubernetes.io/tls, trustedCertSecret of type nginx.org/ca, both in the
// Policy's namespace.
func (b *builder) egressTLS(ns string, e *nic.EgressMTLS) (*model.UpstreamTLS, error) {
	t := e.TLS
	if e.TLSSecret != "" {
		ps, err := b.typedTLSFiles(ns, e.TLSSecret, corev1.SecretTypeTLS)
		if err != nil {
			return nil, err
		}
		if len(ps.Cert) == 0 {
			return nil, fmt.Errorf("secret %s holds no tls.crt", ps.Key())
		}
		t.Secret = ps.Key()
	}
	if e.TrustedSecret != "" {
		var err error
		if t.CASecret, err = b.caSecret(ns, e.TrustedSecret); err != nil {
			return nil, err
		}
	}
	return &t, nil
}

// caSecret resolves a Secret of type nginx.org/ca into its ProxySecret
// key; it must hold ca.crt.
func (b *builder) caSecret(ns, name string) (string, error) {
	ps, err := b.typedTLSFiles(ns, name, secretTypeCA)
	if err != nil {
		return "", err
	}
	if len(ps.CA) == 0 {
		return "", fmt.Errorf("secret %s holds no ca.crt", ps.Key())
	}
	return ps.Key(), nil
}

// typedTLSFiles is tlsFiles for a Secret that must be of type typ.
func (b *builder) typedTLSFiles(ns, name string, typ corev1.SecretType) (*model.ProxySecret, error) {
	key := ns + "/" + name
	s := b.secretsIn[key]
	if s == nil {
		return nil, fmt.Errorf("secret %s %w", key, errNotFound)
	}
	if s.Type != typ {
		return nil, fmt.Errorf("secret %s is of type %q, not %s", key, s.Type, typ)
	}
	return b.tlsFiles(annotations.ObjectName{Namespace: ns, Name: name})
}

// failRoutes makes every route of a VirtualServer's server answer 500,
// as NGINX Ingress Controller does when a Policy of the VirtualServer
// cannot be applied.
func failRoutes(srv *model.Server) {
	for i, l := range srv.Locations {
		srv.Locations[i] = &model.Location{Match: l.Match, Source: l.Source, Action: model.ReturnStatus(500)}
	}
}

// vsClientTLS applies the ingressMTLS Policy among a VirtualServer's own
// Policies to its server. NGINX Ingress Controller requires the
// VirtualServer to have TLS; without it, or when the CA Secret cannot be
// used, every route answers 500. A missing or invalid Policy already makes
// every route answer 500 (routePolicies).
func (b *virtualServerProcessor) vsClientTLS(srv *model.Server, t *nic.VirtualServer) {
	var m *nic.Policy
	for _, key := range t.Policies {
		if p, why := b.nicPolicy(key); why == "" && p.IngressMTLS != nil {
			m = p
		}
	}
	if m == nil {
		return
	}
	name := m.Ref.Namespace + "/" + m.Ref.Name
	var err error
	var ps *model.ProxySecret
	if t.TLS == nil {
		err = fmt.Errorf("%w: ingressMTLS needs spec.tls", errPolicyUse)
	} else if ps, err = b.typedTLSFiles(m.Ref.Namespace, m.IngressMTLS.CASecret, secretTypeCA); err == nil && len(ps.CA) == 0 {
		err = fmt.Errorf("secret %s holds no ca.crt", ps.Key())
	}
	if err != nil {
		b.problem(t.Ref, policyReason(err), false, "Policy %s: %v; every route answers 500 rather than being served without client certificates", name, err)
		failRoutes(srv)
		return
	}
	srv.ClientTLS = &model.ClientTLS{Secret: ps.Key(), Verify: m.IngressMTLS.Verify, Depth: m.IngressMTLS.Depth, Source: t.Ref}
}
