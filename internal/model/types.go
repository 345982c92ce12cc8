// Package model is the typed, proxy-neutral description of what the data
// plane serves: servers and their locations (Match, Action, Policy),
// backends, stream servers, the controller's Config, and the Problems
// found on the objects they came from. The front-ends (internal/frontend)
// translate their kinds into it, internal/build assembles one Model from a
// source.Snapshot, and internal/render prints it.
//
// It holds parsed values, never raw user strings: the grammars that decide
// what may reach nginx live here (values.go, validate.go and one file per
// policy), and every user string in a Model has passed one of them. It is
// pure (no filesystem, no API, no clock) and imports nothing of Causeway's,
// so every other package can depend on it.
package model

import (
	"fmt"
	"slices"
	"strings"
)

// Model is everything the data plane needs, in deterministic order.
type Model struct {
	Config Config
	// Servers are sorted by host; the catch-all server (Host "") is first.
	Servers []*Server
	// Backends are sorted by Key.
	Backends []*Backend
	// Secrets are the TLS secrets referenced by live servers, sorted by key.
	Secrets []*TLSSecret
	// ProxySecrets are the client certificates and CA bundles for TLS to
	// backends (UpstreamTLS.Secret), sorted by key.
	ProxySecrets []*ProxySecret
	// ProxyCAs are the CA bundles of ConfigMaps that verify backends
	// (UpstreamTLS.CAConfigMap), sorted by key.
	ProxyCAs []*ProxyCA
	// DHParam is the validated DH parameters Secret that ssl-dh-param
	// names; nil leaves DHE cipher suites off.
	DHParam *DHParam
	// TicketKeys are the TLS session ticket keys every replica shares
	// (ssl-session-ticket-key, ssl-session-ticket-key-secret), each 48 or
	// 80 bytes: the first encrypts new tickets, the others only decrypt.
	// Empty: nginx makes its own at each start.
	TicketKeys [][]byte
	// AuthFiles are the password files of basic authentication
	// (BasicAuth.File), sorted by key.
	AuthFiles []*AuthFile
	// CacheZones are the response caches locations use
	// (ResponseCache.Zone), sorted by name.
	CacheZones []*CacheZone
	// DefaultCertificate is the key of the TLSSecret in Secrets that
	// --default-ssl-certificate names, presented for unknown SNI and hosts
	// without a certificate of their own; "" means the self-generated one.
	DefaultCertificate string
	// Streams are the TCP and UDP servers, sorted by listener name.
	Streams []*StreamServer
	// Passthrough is TLS passthrough on the HTTPS port; nil when it is
	// off, and the HTTPS port is the http servers' own.
	Passthrough *Passthrough
	// SNIListeners are the ports that pass TLS connections by server
	// name (Gateway TLS listeners), sorted by name.
	SNIListeners []*SNIListener
	// HTTPListeners are the GlobalConfiguration's HTTP listeners that a
	// server uses, sorted by name; each answers hosts it does not serve
	// with 404.
	HTTPListeners []*HTTPListener
}

// Server is one virtual host.
type Server struct {
	// Host is a lower-case DNS name, "*.suffix" for a wildcard, or "" for the
	// catch-all server that answers unmatched hosts.
	Host string
	// Locations are sorted by path, then type (Exact first).
	Locations []*Location
	// Default answers requests no location matches: an Ingress's
	// spec.defaultBackend, or the controller's own 404.
	Default *Location
	// TLS is nil when the host is not listed in any Ingress's spec.tls.
	TLS *ServerTLS
	// SSLRedirect makes plain-HTTP requests redirect to HTTPS (308).
	SSLRedirect bool
	// HTTPSRedirect, when set with SSLRedirect, is how the redirect is
	// made in place of the ConfigMap's shape (a VirtualServer's
	// tls.redirect).
	HTTPSRedirect *HTTPSRedirect
	// Sources are the objects that contributed to this server (sorted).
	Sources []ObjectRef
	// Regex makes every location a case-insensitive regular expression
	// anchored at the start of the path, tried in the order of Locations
	// (ingress-nginx's use-regex); the builder sorts them.
	Regex bool
	// Policy holds the host-level settings; nil when none is set.
	Policy *ServerPolicy
	// ClientTLS asks HTTPS clients for a certificate (auth-tls-*); nil
	// when the host does not.
	ClientTLS *ClientTLS
	// Listeners, when set, replace the controller's HTTP and HTTPS ports
	// (a VirtualServer's spec.listener, a Gateway's listener port).
	Listeners *ServerListeners
	// Scope tells apart servers of one Host on different Listeners (a
	// Gateway's port, "" for every other server): Host and Scope together
	// name a server. With Listeners, a Host "" server is the default
	// server of its listeners, in place of their 404.
	Scope string
	// AnyDepth makes a wildcard Host match any number of labels before
	// its suffix ("*.example.com" matches "a.b.example.com"), as Gateway
	// API's hostnames do; Ingress wildcards match exactly one.
	AnyDepth bool
	// Closed are the deny-only location blocks of refused server
	// snippets: the requests they match answer 503.
	Closed []ClosedLocation
}

// Wildcard reports whether the host is "*.suffix".
func (s *Server) Wildcard() bool { return len(s.Host) > 2 && s.Host[:2] == "*." }

// PathType is how a location's path is matched.
type PathType string

const (
	// Exact matches the URL path exactly, case-sensitively.
	Exact PathType = "Exact"
	// Prefix matches element-wise on "/": Path "/a/b" matches "/a/b" and
	// "/a/b/..." but not "/a/bc". Path is stored without a trailing slash;
	// the root prefix is "/".
	Prefix PathType = "Prefix"
	// Regex matches when the case-insensitive regular expression Path
	// matches at the start of the URL path (ingress-nginx's use-regex).
	// Path is a validated Regexp source (see ParseRegex).
	Regex PathType = "Regex"
	// StringPrefix matches when the URL path starts with Path as a string:
	// "/tea" matches "/tea", "/tea/cup" and "/teapot" (nginx's own prefix
	// location, which a VirtualServer route's path means). On a server
	// with StringPrefix locations, Regex locations follow nginx's order:
	// Exact first, then the first Regex that matches, then the longest
	// StringPrefix.
	StringPrefix PathType = "StringPrefix"
)

// Match says which requests a location serves.
type Match struct {
	Type PathType
	Path string
}

// Location is a match, what to do with the requests it matches, and the
// policy applied on the way.
type Location struct {
	Match  Match
	Action Action
	// Policy is nil when nothing is set beyond the server's defaults.
	Policy *Policy
	// Source is the object the location came from (zero for the
	// controller's own default).
	Source ObjectRef
}

// Action is what a location does: exactly one field is set.
type Action struct {
	// Proxy sends requests to a backend.
	Proxy *Proxy
	// Return answers with a fixed status: 503 when the backend cannot
	// serve (a missing Service, a security setting that cannot be
	// enforced), 404 for the controller's own default.
	Return *Return
	// Redirect answers with a redirect.
	Redirect *Redirect
}

// Proxy names the backend requests go to.
type Proxy struct {
	// Backend is the key of a Backend in Model.Backends.
	Backend string
	// Fallback, when set, is the key of the Backend that answers instead
	// while Backend has no ready endpoint (ingress-nginx's
	// default-backend annotation).
	Fallback string
	// Split, when set, picks the backend (or answer) per request: a
	// canary Ingress on the same host and path, a VirtualServer route's
	// splits and matches. Backend is then the one whose settings the
	// location uses (a canary's Primary), "" when the split picks only
	// answers (AnswersOnly).
	Split *Split
}

// Return is a fixed response.
type Return struct {
	Status int
	// Body, when set, is the response text (ParseVariableTemplate, with
	// the variables a return body may use); Status is then not a redirect.
	Body Template
	// Type is the body's MIME type (ParseReturnType); "" for the
	// server's default_type.
	Type string
}

// Redirect is a redirect response to a validated absolute URL.
type Redirect struct {
	// Code is 301, 302, 303, 307 or 308.
	Code int
	// URL is an absolute http(s) URL that passed ParseRedirectURL.
	URL string
	// Template, when set instead of URL, is a URL with variables that
	// passed ParseRedirectTemplate.
	Template Template
	// Prefix, when set with Template, is Gateway API's ReplacePrefixMatch:
	// Template is the URL before its path, and the path is Prefix.With
	// followed by the rest of the request's path after Prefix.Path, then
	// the query.
	Prefix *RedirectPrefix
}

// RedirectPrefix replaces the path prefix Path, matched element by
// element, with With (both validated paths; With "/" leaves the rest).
type RedirectPrefix struct {
	Path, With string
}

// ProxyTo is a location action that proxies to backend key.
func ProxyTo(key string) Action { return Action{Proxy: &Proxy{Backend: key}} }

// ReturnStatus is a location action that answers with a fixed status.
func ReturnStatus(code int) Action { return Action{Return: &Return{Status: code}} }

// Backend is the key of the backend the location proxies to, or "".
func (l *Location) Backend() string {
	if l.Action.Proxy == nil {
		return ""
	}
	return l.Action.Proxy.Backend
}

// ServerTLS says which certificate a host presents.
type ServerTLS struct {
	// Secret is the key ("namespace/name") of a TLSSecret in Model.Secrets,
	// or "" to use the default certificate (Model.DefaultCertificate, or
	// the controller's self-generated one).
	Secret string
}

// TLSSecret is a validated kubernetes.io/tls secret.
type TLSSecret struct {
	Namespace, Name string
	// PEM is the certificate chain followed by the private key.
	PEM []byte
	// OCSP is the DER OCSP response stapled to the certificate
	// (enable-ocsp); the controller fetches it, the build never does.
	OCSP []byte
}

// Key is "namespace/name".
func (s *TLSSecret) Key() string { return s.Namespace + "/" + s.Name }

// ProxySecret is a validated Secret for TLS to backends: an optional
// client certificate and key, and an optional CA bundle to verify the
// backend with.
type ProxySecret struct {
	Namespace, Name      string
	Cert, PrivateKey, CA []byte
	// CRL is the Secret's ca.crl: PEM X509 CRLs that ClientTLS checks
	// client certificates against.
	CRL []byte
}

// Key is "namespace/name".
func (s *ProxySecret) Key() string { return s.Namespace + "/" + s.Name }

// ProxyCA is a ConfigMap's ca.crt: PEM certificates, and nothing else,
// that verify backends.
type ProxyCA struct {
	Namespace, Name string
	CA              []byte
}

// Key is "namespace/name".
func (c *ProxyCA) Key() string { return c.Namespace + "/" + c.Name }

// DHParam is a Secret's dhparam.pem: one PEM "DH PARAMETERS" block that
// ParseDHParams accepted.
type DHParam struct {
	Namespace, Name string
	PEM             []byte
}

// Key is "namespace/name".
func (d *DHParam) Key() string { return d.Namespace + "/" + d.Name }

// AuthFile is a password file for basic authentication read from a
// Secret: its "auth" key as an htpasswd file, or (Map) one user per key.
// Data is what ParseHtpasswd returned: one "user:hash" line per user.
// A Digest file is the "auth" key read as an htdigest file instead: what
// ParseHtdigest returned, one "user:realm:HA1" line per user.
type AuthFile struct {
	Namespace, Name string
	Map             bool
	Digest          bool
	// HTPasswd is a Secret of NGINX Ingress Controller's type
	// nginx.org/htpasswd, whose file is under the key htpasswd.
	HTPasswd bool
	// APIKey is an nginx.org/apikey Secret of API keys: what
	// ParseAPIKeys returned, one "client:sha256hex" line per client.
	APIKey bool
	Data   []byte
}

// Kind is "auth" for an htpasswd file, "authmap" for a Secret read as
// one user per key, "htdigest" for digest authentication's file and
// "apikey" for API key hashes; the same Secret may be read in several
// ways.
func (f *AuthFile) Kind() string {
	switch {
	case f.Digest:
		return "htdigest"
	case f.Map:
		return "authmap"
	case f.HTPasswd:
		return "htpasswd"
	case f.APIKey:
		return "apikey"
	}
	return "auth"
}

// Key is "namespace/name/kind".
func (f *AuthFile) Key() string { return f.Namespace + "/" + f.Name + "/" + f.Kind() }

// Backend is a Service port and its ready endpoints.
type Backend struct {
	// Key is "namespace/service/port", the port being the Service port's
	// number or name exactly as the Ingress referenced it.
	Key       string
	Namespace string
	Service   string
	Port      string
	// Endpoints are the ready, non-terminating endpoints, sorted.
	Endpoints []Endpoint
	// External is set for an ExternalName Service: the controller resolves
	// its name and fills Endpoints with the addresses (the build never
	// resolves a name; it only fills them for an IP address).
	External *ExternalName
	// Balance is how requests are spread over Endpoints.
	Balance Balance
	// Limits bound the use of each endpoint (passive health checks and
	// connections); the zero value sets none.
	Limits PeerLimits
	// Keepalive, when set, sizes the backend's own pool of idle
	// connections; else the ConfigMap's pool serves it.
	Keepalive Keepalive
}

// ExternalName is an ExternalName Service's name and the port its
// backend reaches it on.
type ExternalName struct {
	// Host is a lower-case DNS name (with a trailing dot when it is
	// absolute), or an IPv4 address (ParseExternalName).
	Host string
	Port int32
}

// Endpoint is one address a backend can send traffic to.
type Endpoint struct {
	Address string // a literal IPv4 or IPv6 address
	Port    int32
	Zone    string
}

// ObjectRef names a Kubernetes object.
type ObjectRef struct {
	Kind, Namespace, Name string
	UID                   string
}

// Key is "Kind/namespace/name": unique across kinds, stable across
// re-creation (unlike the UID).
func (r ObjectRef) Key() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// SortRefs sorts refs by String and removes duplicates.
func SortRefs(refs []ObjectRef) []ObjectRef {
	slices.SortFunc(refs, func(a, b ObjectRef) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(refs)
}

func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return fmt.Sprintf("%s %s", r.Kind, r.Name)
	}
	return fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name)
}

// Problem is a reason an object (or part of it) was not used as written.
type Problem struct {
	Object ObjectRef
	// Reason is a short CamelCase word suited to a Kubernetes Event reason.
	Reason  string
	Message string
	// Rejected is true when the whole object was excluded from the Model;
	// false when it is live with a degradation (a missing Service, a
	// default certificate in place of a missing secret).
	Rejected bool
	// Condition, when set, is the Gateway API status condition this
	// Problem implies (Gateway API objects only), so that one list feeds
	// logs, Events and the status writer. Reason then equals
	// Condition.Reason.
	Condition *StatusCondition
}

// StatusCondition is a Gateway API status condition a Problem implies: its
// type, status and reason as the spec names them, and which part of the
// object it is set on.
type StatusCondition struct {
	// Type is the condition type: "Accepted", "ResolvedRefs",
	// "Programmed", "Conflicted", ...
	Type string
	// Status is "False" for a positive-polarity condition that failed,
	// "True" for a negative-polarity one that holds (Conflicted).
	Status string
	// Reason is the spec's reason: "UnsupportedProtocol",
	// "NotAllowedByListeners", ...
	Reason string
	// Listener names the Gateway listener the condition is on; empty for
	// the Gateway's own conditions and for other kinds.
	Listener string
	// Parent is the 1-based position, in the route's spec.parentRefs, of
	// the parent whose status entry the condition is on; 0 for the
	// route's own conditions and for other kinds.
	Parent int
}

func (p Problem) String() string {
	return fmt.Sprintf("%s: %s: %s", p.Object, p.Reason, p.Message)
}

// Problem reasons.
const (
	ReasonInvalid        = "Invalid"
	ReasonCollision      = "Collision"
	ReasonMissingService = "MissingService"
	ReasonMissingSecret  = "MissingSecret"
	// ReasonMissingConfigMap: a ConfigMap an annotation names does not
	// exist (yet).
	ReasonMissingConfigMap = "MissingConfigMap"
	ReasonInvalidSecret    = "InvalidSecret"
	ReasonInvalidConfig    = "InvalidConfig"
	ReasonUnsupported      = "Unsupported"
	ReasonExcluded         = "ReloadFailed"
	// ReasonUnknownAnnotation: an annotation under one of our prefixes
	// that Causeway does not know.
	ReasonUnknownAnnotation = "UnknownAnnotation"
	// ReasonUnsupportedAnnotation: a known annotation that is not
	// implemented yet, is read from another kind of object, or has no
	// effect with the other annotations set.
	ReasonUnsupportedAnnotation = "UnsupportedAnnotation"
	// ReasonInvalidAnnotation: a supported annotation with a bad value.
	ReasonInvalidAnnotation = "InvalidAnnotation"
	// ReasonSecurityAnnotation: a security annotation that is not
	// implemented; the Ingress's paths answer 503 (fail closed).
	ReasonSecurityAnnotation = "SecurityAnnotationUnsupported"
	// ReasonDroppedEndpoints: EndpointSlice addresses that cannot be used
	// as written and are left out.
	ReasonDroppedEndpoints = "DroppedEndpoints"
	// ReasonNoVirtualServerFound: a VirtualServerRoute whose host no
	// served VirtualServer has (NGINX Ingress Controller's reason).
	ReasonNoVirtualServerFound = "NoVirtualServerFound"
	// ReasonIgnored: a VirtualServerRoute the VirtualServer of its host
	// does not delegate to (NGINX Ingress Controller's reason).
	ReasonIgnored = "Ignored"
)

// HTTPSRedirect is NGINX Ingress Controller's redirect of plain HTTP to
// HTTPS: to the request's host and URI as sent, on the standard HTTPS
// port (or the server's own HTTPS listener's).
type HTTPSRedirect struct {
	// Code is the redirect's status: 301, 302, 307 or 308.
	Code int
	// BasedOn says which requests came over plain HTTP.
	BasedOn RedirectBasis
}

// RedirectBasis says what makes a request one to redirect to HTTPS.
type RedirectBasis string

const (
	// RedirectOnScheme redirects requests whose scheme is http: the
	// connection's, or a trusted peer's X-Forwarded-Proto
	// (use-forwarded-headers).
	RedirectOnScheme RedirectBasis = "scheme"
	// RedirectOnForwardedProto redirects requests whose X-Forwarded-Proto
	// header is http, whoever sent it.
	RedirectOnForwardedProto RedirectBasis = "x-forwarded-proto"
)

// RedirectCodes are the statuses of an HTTPS redirect.
var RedirectCodes = []int{301, 302, 307, 308}
