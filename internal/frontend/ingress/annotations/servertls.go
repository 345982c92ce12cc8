package annotations

import "github.com/causeway/causeway/internal/model"

// serverTLSGroup is ingress-nginx's per-host TLS listener settings: the
// cipher list and preference of the host's HTTPS server. nginx picks them
// by the SNI name, so they belong to the host: the oldest Ingress of a
// host that sets them wins.
var serverTLSGroup = Group{
	Name: "server-tls",
	Annotations: supported("server-tls",
		Annotation{Name: "ssl-ciphers", Scope: ScopeServer, Default: "the ConfigMap's ssl-ciphers",
			Grammar: "an OpenSSL cipher list, as the ConfigMap's ssl-ciphers: names and aliases (HIGH), optionally after !, - or +, " +
				"joined with + or :, and @SECLEVEL=0..5 or @STRENGTH; it applies to TLS 1.2 and below of the host's HTTPS connections",
			Difference: "not applied to Ingress rules without a host (the catch-all server's ciphers would be every unknown name's), " +
				"with a Problem; a list naming no cipher OpenSSL knows makes nginx refuse the host's file, and the Ingress is excluded " +
				"until it changes (ingress-nginx's whole configuration fails)"},
		Annotation{Name: "ssl-prefer-server-ciphers", Scope: ScopeServer, Default: "true (the http level's, with ssl-ciphers)",
			Grammar:    "a boolean: true, false, 1, 0, t, f (any case); false lets the client's order choose the cipher",
			Difference: "not applied to Ingress rules without a host, with a Problem"},
	),
	Parse: func(r *Reader, res *Result) {
		s := &res.Server
		if Set(r, "ssl-ciphers", &s.SSLCiphers, model.ParseServerCiphers) {
			r.setKeys(&s.Keys, "ssl-ciphers")
		}
		if SetPtr(r, "ssl-prefer-server-ciphers", &s.PreferServerCiphers, model.ParseBool) {
			r.setKeys(&s.Keys, "ssl-prefer-server-ciphers")
		}
	},
}
