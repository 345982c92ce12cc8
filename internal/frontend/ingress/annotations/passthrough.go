package annotations

import "github.com/causeway/causeway/internal/model"

// passthroughGroup is ssl-passthrough: the Ingress's hosts are passed
// through, TLS and all, to the Service of their "/" path (or the
// Ingress's spec.defaultBackend) by the stream server on the HTTPS port.
// The builder applies it, and only when the controller runs with
// --enable-ssl-passthrough (or --enable-tls-passthrough).
var passthroughGroup = Group{
	Name: "passthrough",
	Annotations: supported("passthrough",
		Annotation{Name: "ssl-passthrough", Scope: ScopeServer, Default: "false",
			Grammar: "a boolean: true, false, 1, 0, t, f (any case); needs --enable-ssl-passthrough (or --enable-tls-passthrough): " +
				"TLS connections for the Ingress's hosts go, still encrypted, to the Service of the rule's / path, else of " +
				"spec.defaultBackend; the Ingress then owns its hosts",
			Difference: "the host belongs to this Ingress alone, oldest first across Ingresses, VirtualServers and " +
				"tls-passthrough TransportServers (ingress-nginx lets other Ingresses add paths to it, which only plain HTTP " +
				"reaches); the passthrough proxy is nginx's stream module, not a Go proxy"},
	),
	Parse: func(r *Reader, res *Result) {
		if v, ok := Parse(r, "ssl-passthrough", model.ParseBool); ok {
			res.SSLPassthrough = v
		}
	},
}
