package build

import (
	"errors"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

// This file resolves externalAuth Policies: the authentication Service
// becomes a backend like any upstream's (balanced over its ready
// endpoints), asked by the auth-url model's subrequest. A Service that
// does not exist, or a CA Secret that cannot be used, makes the routes
// answer 500, never open.

// errNoService marks an authentication Service that cannot be asked.
var errNoService = errors.New("cannot be asked")

// externalAuth resolves an externalAuth Policy into the model's
// external authentication.
func (b *virtualServerProcessor) externalAuth(p *nic.Policy) (*model.ExternalAuth, error) {
	e := p.ExternalAuth
	ns := p.Ref.Namespace
	be, err := b.idx.resolve(ns, &networkingv1.IngressServiceBackend{Name: e.Service,
		Port: networkingv1.ServiceBackendPort{Number: e.Port}})
	if err != nil {
		return nil, fmt.Errorf("authentication Service %s/%s port %d %w: %v", ns, e.Service, e.Port, errNoService, err)
	}
	be = b.addBackend(be)
	out := &model.ExternalAuth{Backend: be.Key, URI: e.URI, SigninURI: e.SigninURI, RedirectParam: "rd"}
	if e.TLS != nil {
		t := *e.TLS
		if e.TrustedSecret != "" {
			if t.CASecret, err = b.caSecret(ns, e.TrustedSecret); err != nil {
				return nil, err
			}
		}
		out.TLS = &t
	}
	if e.SigninURI != "" {
		if b.signinBases == nil {
			b.signinBases = map[*model.ExternalAuth]string{}
		}
		b.signinBases[out] = e.SigninBase
	}
	return out, nil
}

// signinLocation serves the sign-in pages of loc's external
// authentication (authSigninRedirectBasePath, where authSigninURI leads):
// a prefix of the server proxied to the authentication Service without
// authentication, as NGINX Ingress Controller does. A route of the same
// path keeps it, with a Problem.
func (b *virtualServerProcessor) signinLocation(srv *model.Server, owner model.ObjectRef, loc *model.Location) {
	if loc.Policy == nil || loc.Policy.ExternalAuth == nil {
		return
	}
	a := loc.Policy.ExternalAuth
	base, ok := b.signinBases[a]
	if !ok {
		return
	}
	m := model.Match{Type: model.Prefix, Path: base}
	for _, l := range srv.Locations {
		if l.Match == m {
			if l.Action.Proxy == nil || l.Action.Proxy.Backend != a.Backend {
				b.problem(owner, model.ReasonUnsupported, false,
					"route %s: the sign-in path %s of its externalAuth is served by another route, not by the authentication Service", loc.Match.Path, base)
			}
			return
		}
	}
	pol := &model.Policy{}
	if a.TLS != nil {
		pol.Protocol, pol.UpstreamTLS = model.ProtocolHTTPS, a.TLS
	}
	srv.Locations = append(srv.Locations, &model.Location{Match: m, Source: owner, Action: model.ProxyTo(a.Backend), Policy: pol})
}
