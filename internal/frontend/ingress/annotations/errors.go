package annotations

import (
	"github.com/causeway/causeway/internal/model"
)

// errorsGroup is custom-http-errors and default-backend: upstream error
// statuses, and paths whose Service has no ready endpoint, are answered by
// a Service that renders error pages. The builder resolves the Service
// and fills ErrorPages.Backend.
var errorsGroup = Group{
	Name: "errors",
	Annotations: supported("errors",
		Annotation{Name: "custom-http-errors", Scope: ScopeLocation, Default: "the ConfigMap's custom-http-errors, else none",
			Grammar:    "a comma-separated list of up to 50 status codes from 400 to 599",
			Difference: "an invalid list drops the setting instead of rejecting the Ingress"},
		Annotation{Name: "default-backend", Names: model.KindService, Scope: ScopeLocation, Default: "none: the controller's default backend",
			Grammar: "the name of a Service in the Ingress's namespace (a DNS-1035 label)",
			Difference: "the Service's first port is used, as in ingress-nginx; the fallback receives the request as is, without the X-Code headers " +
				"that custom-http-errors adds; an invalid name drops the setting instead of rejecting the Ingress"},
	),
	Parse: parseErrors,
}

func parseErrors(r *Reader, res *Result) {
	if codes, ok := Parse(r, "custom-http-errors", model.ParseStatusCodes); ok {
		res.Location.Errors = &model.ErrorPages{Codes: codes}
	}
	SetPtr(r, "default-backend", &res.DefaultBackend, func(s string) (ServiceRef, error) {
		return ServiceRef{Name: s}, model.ValidateServiceName(s)
	})
}
