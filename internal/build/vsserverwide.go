package build

import (
	"strings"

	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

// This file applies a VirtualServer's server-wide settings: its hsts
// Policy and spec.gunzip.

// vsHeaderInherit applies spec.add-header-inherit to the server.
func (b *builder) vsHeaderInherit(srv *model.Server, t *nic.VirtualServer) {
	if t.HeaderInherit == "" {
		return
	}
	if srv.Policy == nil {
		srv.Policy = &model.ServerPolicy{Source: t.Ref}
	}
	srv.Policy.HeaderInherit = t.HeaderInherit
}

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

// vsHSTS applies the hsts Policy among a VirtualServer's own Policies to
// its server, in place of the ConfigMap's HSTS. As in NGINX Ingress
// Controller it needs spec.tls unless behindProxy is set; without, every
// route answers 500.
func (b *virtualServerProcessor) vsHSTS(srv *model.Server, t *nic.VirtualServer) {
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
