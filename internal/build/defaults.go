package build

import "github.com/causeway/causeway/internal/model"

// This file applies the ConfigMap's defaults of per-location annotations
// (model.Defaults) where no Ingress's annotations do: to the controller's
// default backend. The Ingress front-end starts every Ingress from them,
// the VirtualServer front-end every upstream, and serverPolicy every host.

// defaultBackendPolicy is the policy of the location that proxies to the
// --default-backend-service: the ConfigMap's proxy settings, and its
// custom-http-errors rendered by that same backend, as ingress-nginx's
// default server has them. nil when the ConfigMap sets none.
func (b *builder) defaultBackendPolicy() *model.Policy {
	d := &b.model.Config.Defaults
	p := d.Proxy
	if len(d.ErrorCodes) > 0 {
		p.Errors = &model.ErrorPages{Codes: d.ErrorCodes, Backend: b.globalDefault}
	}
	if isZeroPolicy(&p) {
		return nil
	}
	return &p
}

// defaultErrorsProblem reports, once on the ConfigMap, that its
// custom-http-errors has no backend to render the pages of Ingresses
// without a default-backend annotation.
func (b *builder) defaultErrorsProblem() {
	if len(b.model.Config.Defaults.ErrorCodes) == 0 || b.globalDefault != "" {
		return
	}
	b.problem(b.configMapRef(), model.ReasonInvalidConfig, false,
		`key "custom-http-errors" needs a default backend to render the pages: without the --default-backend-service flag `+
			`(or with one that cannot be used) it applies only to Ingresses with a default-backend annotation`)
}
