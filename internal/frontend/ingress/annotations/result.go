package annotations

import "github.com/causeway/causeway/internal/model"

// Result is what one Ingress's annotations say, as typed values. The
// Ingress front-end applies Location to every path of the Ingress, offers
// Server to each of its hosts (the oldest Ingress of a host wins a
// disagreement), and lets the builder resolve the object references
// (Services, Secrets, ConfigMaps) that annotations name.
type Result struct {
	// Location is the policy for every location the Ingress contributes.
	Location model.Policy
	// Server holds the host-level settings the Ingress asks for.
	Server ServerSettings
	// UseRegex turns every path of the Ingress's hosts into a
	// case-insensitive regular expression (use-regex; implied by a
	// rewrite-target that rewrites).
	UseRegex bool
	// Redirect replaces the Ingress's proxy action (permanent-redirect,
	// temporal-redirect).
	Redirect *model.Redirect
	// Balance overrides the backend's balancing (load-balance,
	// upstream-hash-by, affinity ...) for the Services this Ingress routes
	// to. Nil when none is set.
	Balance *BalanceSettings
	// ServiceUpstream sends requests to the Service's cluster IP instead
	// of its endpoints.
	ServiceUpstream bool
	// DefaultBackend names a Service (same namespace) that answers for
	// paths whose own Service has no ready endpoint, and renders
	// custom-http-errors.
	DefaultBackend *ServiceRef
	// CustomHeaders names the ConfigMap whose entries are added to every
	// response (custom-headers), resolved by the builder.
	CustomHeaders *ObjectName
	// UpstreamTLSSecret names the Secret with the client certificate and
	// CA for HTTPS/GRPCS backends (proxy-ssl-secret).
	UpstreamTLSSecret *ObjectName
	// BasicAuthSecret names the Secret with the users of basic
	// authentication (auth-secret); the builder reads it into
	// Location.BasicAuth.File.
	BasicAuthSecret *AuthSecret
	// SSLPassthrough passes TLS connections for the Ingress's hosts,
	// still encrypted, to a Service (ssl-passthrough).
	SSLPassthrough bool
	// Canary is set when the Ingress is a canary (canary "true"): its
	// paths add no locations but split those of a main Ingress.
	Canary *model.CanaryRule
	// AuthProxySetHeaders names the ConfigMap of headers sent to the
	// external authentication service (auth-proxy-set-headers); the
	// builder reads it into Location.ExternalAuth.ProxySetHeaders.
	AuthProxySetHeaders *ObjectName
	// Services are what NGINX Ingress Controller's per-Service
	// annotations (nginx.org/ssl-services, grpc-services, rewrites) add to
	// the paths routing to each Service, by its name.
	Services map[string]*ServicePolicy
	// PeerLimits are the backends' passive health checks
	// (nginx.org/max-fails, fail-timeout); nil when not set.
	PeerLimits *model.PeerLimits
	// NoGlobalAuth exempts the Ingress's paths from the ConfigMap's
	// global-auth-url (enable-global-auth "false").
	NoGlobalAuth bool
	// FailClosed lists the full keys of security annotations that cannot
	// be enforced: every path of the Ingress answers 503.
	FailClosed []string
	// Defaulted are the ConfigMap keys (model.Defaults.Keys) whose values
	// the Ingress uses, since it sets no valid annotation of the same
	// name: a Problem about such a setting names the key.
	Defaulted []string
	// ModSecurity is what the ModSecurity annotations say (modsecurity.go);
	// nil when none is set.
	ModSecurity *ModSecuritySettings

	// --- snippets ---

	// Snippets are the snippet annotations set; Location.Snippet and
	// Server.Snippet hold what they parsed into.
	Snippets SnippetSettings
	// authSnippet is auth-snippet as parsed, before it joins
	// Location.ExternalAuth.
	authSnippet *model.Snippet
}

// SnippetSettings are the snippet annotations of an Ingress. The builder
// applies them, and reports Problems, only when the ConfigMap's
// allow-snippet-annotations is true; otherwise it refuses each key.
type SnippetSettings struct {
	// Keys are the full keys of the snippet annotations set.
	Keys []string
	// Problems are why snippets were refused.
	Problems []model.Problem
	// Denying are the keys whose text looks meant to refuse requests
	// (snippet.Denies): refused, they close the Ingress's paths.
	Denying []string
	// failed are the denying keys that did not parse.
	failed []string
	// closed are the locations of a refused server-snippet whose denying
	// lines all sit in location blocks that only refuse
	// (snippet.DenyingLocations): refused, it closes only those.
	closed []model.ClosedLocation
}

// ServerSettings are the host-level annotations. A nil field is not set by
// this Ingress.
type ServerSettings struct {
	Aliases               []string
	WWWRedirect           *bool
	AppRoot               *string
	SSLRedirect           *bool
	ForceSSLRedirect      *bool
	PreserveTrailingSlash *bool
	// ClientTLS is client certificate authentication (auth-tls-*).
	ClientTLS *ClientTLSSettings
	// HTTPSRedirect is NGINX Ingress Controller's redirect of plain HTTP
	// (nginx.org/redirect-to-https).
	HTTPSRedirect *model.HTTPSRedirect
	// ServerTokens sends nginx's version (nginx.org/server-tokens).
	ServerTokens *bool
	// HSTS replaces the ConfigMap's Strict-Transport-Security
	// (nginx.org/hsts*).
	HSTS *model.ServerHSTS
	// Snippet is what server-snippet parsed into.
	Snippet *model.Snippet
	// SSLCiphers and PreferServerCiphers are the host's HTTPS cipher
	// list and preference (ssl-ciphers, ssl-prefer-server-ciphers).
	SSLCiphers          string
	PreferServerCiphers *bool
	// Closed are the locations of a refused server-snippet that only
	// refuse requests, which answer 503 on every host of the Ingress.
	Closed []model.ClosedLocation
	// Keys are the full annotation keys that set the fields, sorted, for
	// Problems when Ingresses of one host disagree.
	Keys []string
}

// BalanceSettings are ingress-nginx's balancing annotations, resolved
// against the Service's own settings by the builder.
type BalanceSettings struct {
	Method  model.BalanceMethod
	HashKey string
	Sticky  *model.StickyCookie
	// Keys are the full annotation keys that were set.
	Keys []string
}

// ServiceRef names a Service port in the Ingress's namespace.
type ServiceRef struct {
	Name string
	// Port is a number or name; "" means the Service's only port.
	Port string
}

// AuthSecret is a Secret with the users of basic authentication: an
// htpasswd file under its key auth, or (Map) one user per key.
type AuthSecret struct {
	ObjectName
	Map bool
	// Digest reads the key auth as an htdigest file of the realm.
	Digest bool
}

// ObjectName is "namespace/name" of an object an annotation refers to.
type ObjectName struct{ Namespace, Name string }

func (n ObjectName) String() string { return n.Namespace + "/" + n.Name }
