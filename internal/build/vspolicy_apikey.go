package build

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

// This file resolves apiKey Policies into the model's API key
// authentication, whose hashed key file the Local Secret Store writes
// (0600, only while referenced) and the Lua data plane checks; and
// applies hsts Policies to their VirtualServer's server. A Policy that
// cannot be applied makes the routes answer 500, never open.

// secretTypeAPIKey is NGINX Ingress Controller's Secret type of API keys.
const secretTypeAPIKey corev1.SecretType = "nginx.org/apikey"

// errNoLua marks a Policy that needs the Lua data plane.
var errNoLua = errors.New("needs the Lua data plane, which this nginx cannot run")

// apiKeyAuth resolves an apiKey Policy's Secret.
func (b *builder) apiKeyAuth(p *nic.Policy) (*model.APIKeyAuth, error) {
	if !b.opts.LuaAvailable {
		return nil, fmt.Errorf("%w: apiKey %w", errPolicyUse, errNoLua)
	}
	a := p.APIKey
	f := &model.AuthFile{Namespace: p.Ref.Namespace, Name: a.Secret, APIKey: true}
	key := f.Key()
	if _, ok := b.authFiles[key]; !ok {
		name := f.Namespace + "/" + f.Name
		s := b.secretsIn[name]
		if s == nil {
			return nil, fmt.Errorf("secret %s %w", name, errNotFound)
		}
		if s.Type != secretTypeAPIKey {
			return nil, fmt.Errorf("secret %s is of type %q, not %s", name, s.Type, secretTypeAPIKey)
		}
		data, err := model.ParseAPIKeys(s.Data)
		if err != nil {
			return nil, fmt.Errorf("secret %s: %w", name, err)
		}
		f.Data = data
		b.authFiles[key] = f
	}
	return &model.APIKeyAuth{Headers: a.Headers, Query: a.Query, File: key}, nil
}

// vsHSTS applies the hsts Policy among a VirtualServer's own Policies to
// its server, in place of the ConfigMap's HSTS. As in NGINX Ingress
// Controller it needs spec.tls unless behindProxy is set; without, every
// route answers 500.
// vsGunzip applies spec.gunzip to the VirtualServer's server, or reports
// that nginx lacks the gunzip filter (the responses then reach clients
// still compressed, as from the backend).
func (b *builder) vsGunzip(srv *model.Server, t *nic.VirtualServer) {
	if !t.Gunzip {
		return
	}
	if !b.opts.GunzipAvailable {
		b.problem(t.Ref, model.ReasonUnsupported, false,
			"spec.gunzip: nginx has no gunzip filter (--with-http_gunzip_module); responses are passed on as the backend sends them")
		return
	}
	if srv.Policy == nil {
		srv.Policy = &model.ServerPolicy{Source: t.Ref}
	}
	srv.Policy.Gunzip = true
}

func (b *builder) vsHSTS(srv *model.Server, t *nic.VirtualServer) {
	var h *nic.Policy
	for _, key := range t.Policies {
		if p, why := b.nicPolicy(key); why == "" && p.HSTS != nil {
			h = p
		}
	}
	if h == nil {
		return
	}
	name := h.Ref.Namespace + "/" + h.Ref.Name
	if t.TLS == nil && !h.HSTS.BehindProxy {
		b.problem(t.Ref, model.ReasonInvalid, false,
			"Policy %s: hsts needs spec.tls unless behindProxy is set; every route answers 500, as in NGINX Ingress Controller", name)
		failRoutes(srv)
		return
	}
	for _, ah := range b.model.Config.AddHeaders {
		if strings.EqualFold(ah.Name, "Strict-Transport-Security") {
			b.problem(t.Ref, model.ReasonUnsupported, false,
				"Policy %s: the ConfigMap's add-headers sets Strict-Transport-Security for every host; the hsts Policy is not applied", name)
			return
		}
	}
	if srv.Policy == nil {
		srv.Policy = &model.ServerPolicy{Source: t.Ref}
	}
	srv.Policy.HSTS = h.HSTS
}
