package model

import (
	"fmt"
	"net/netip"
	"slices"
	"time"
)

// Policy is what a location applies to the requests it proxies, besides
// choosing the backend. Every field is a parsed value; a nil pointer or
// an empty list means "not set here": the server or controller default
// applies. Front-ends (Ingress annotations, custom resources) fill it;
// the renderer prints it. Neither knows about the other.
type Policy struct {
	// Rewrite replaces the request path before it is proxied.
	Rewrite *Rewrite
	// XForwardedPrefix, when set, is sent upstream as X-Forwarded-Prefix.
	XForwardedPrefix *HeaderValue

	// Protocol is how the backend is spoken to; "" means HTTP.
	Protocol BackendProtocol
	// UpstreamTLS configures TLS to HTTPS and GRPCS backends.
	UpstreamTLS *UpstreamTLS
	// UpstreamHost replaces the Host header sent upstream.
	UpstreamHost *HeaderValue

	Timeouts  Timeouts
	Buffering Buffering
	Retry     Retry
	// HTTPVersion is proxy_http_version: "1.0" or "1.1" ("" = 1.1).
	HTTPVersion string
	// CookieDomain and CookiePath rewrite Set-Cookie attributes.
	CookieDomain, CookiePath *Replace
	// RedirectRewrite rewrites Location and Refresh headers of upstream
	// redirects (proxy_redirect); nil keeps nginx's default.
	RedirectRewrite *Replace

	// ResponseHeaders are added to every response of the location.
	ResponseHeaders []Header
	// HeaderInherit is how the location inherits its server's and the
	// http level's response headers (a VirtualServer route's
	// add-header-inherit).
	HeaderInherit HeaderInherit
	// ProxyPassHeaders are backend response headers that nginx hides by
	// default and that reach the client here (proxy_pass_header);
	// ProxyIgnoreHeaders are backend headers whose special meaning nginx
	// ignores (proxy_ignore_headers, IgnorableHeaders only). Names passed
	// ParseHeaderName.
	ProxyPassHeaders, ProxyIgnoreHeaders []string
	// NoRequestHeaders keeps the client's request headers from the
	// backend (proxy_pass_request_headers off): only the headers set for
	// it are sent.
	NoRequestHeaders bool
	CORS             *CORS
	// AccessLog, when set, turns the access log on or off here.
	AccessLog *bool
	// Errors intercepts upstream error statuses.
	Errors *ErrorPages
	// ResponsePages replace the location's responses of some statuses,
	// the backend's or nginx's own, with a redirect or a fixed response
	// (NGINX Ingress Controller's errorPages); the first listing a status
	// wins.
	ResponsePages []ResponsePage
	// Mirrors copy requests to other URLs or backends; each gets its own
	// copy, and their answers are ignored.
	Mirrors []Mirror
	// Limits bound the requests, connections and bandwidth of one client.
	Limits *Limits
	// Access limits the clients by address; nil lets every client in.
	Access *AccessList
	// BasicAuth asks for a user name and password; nil asks for none.
	BasicAuth *BasicAuth
	// ExternalAuth asks an authentication service (auth-url); nil asks
	// none.
	ExternalAuth *ExternalAuth
	// APIKey asks for an API key (apikey.go); nil asks none.
	APIKey *APIKeyAuth
	// Cache keeps the backends' responses (cache.go); nil keeps none.
	Cache *ResponseCache
	// Tracing overrides the ConfigMap's tracing for the location
	// (tracing.go); nil keeps it.
	Tracing *TracingPolicy
	// Satisfy says whether a request must pass Access and BasicAuth both
	// (SatisfyAll, the default) or either (SatisfyAny).
	Satisfy Satisfy

	// ModSecurity runs the web application firewall on the location's
	// requests (modsecurity.go); nil runs none.
	ModSecurity *ModSecurity

	// --- snippets (configuration-snippet) ---

	// Snippet is what an accepted configuration-snippet adds; nil for
	// none.
	Snippet *Snippet
}

// BasicAuth is nginx's auth_basic: requests without a user and password
// listed in the file get 401 with WWW-Authenticate naming Realm.
type BasicAuth struct {
	// Realm is a validated realm (see ParseRealm).
	Realm string
	// File is the key of an AuthFile in Model.AuthFiles.
	File string
	// Digest asks for HTTP Digest credentials (RFC 7616, MD5, qop auth)
	// checked against an htdigest file instead: ingress-nginx's auth-type
	// digest. The Lua data plane checks them (no Debian nginx module does).
	Digest bool
}

// Satisfy is nginx's satisfy directive.
type Satisfy string

// The satisfy values; "" is nginx's default, all.
const (
	SatisfyAll Satisfy = ""
	SatisfyAny Satisfy = "any"
)

// Limits are ingress-nginx's limit-* annotations. Requests and connections
// are counted per client address and per Location.Source, so every
// location of one Ingress shares the counts, and per nginx instance: each
// replica counts on its own. A zero field is not limited.
type Limits struct {
	// RPS and RPM are the requests one client may make per second and per
	// minute.
	RPS, RPM int
	// Burst is how many requests over the rate are served at once
	// before excess ones are refused: rate × limit-burst-multiplier.
	BurstRPS, BurstRPM int
	// Connections is how many requests of one client may be in progress at
	// once.
	Connections int
	// Rate is the bytes per second sent to one client per response, after
	// the first RateAfter bytes (nil: the ConfigMap's value).
	Rate, RateAfter *Size
	// Exempt are client addresses never counted by RPS, RPM and
	// Connections.
	Exempt []netip.Prefix

	// --- NGINX Ingress Controller's rateLimit Policy (request limits) ---

	// Key, when set, is what requests are counted per in place of the
	// client's address (RateLimitKeyVariables); requests whose key is
	// empty are not counted.
	Key Template
	// Pacing is how requests within the burst are served.
	Pacing BurstPacing
	// RejectCode answers refused requests in place of the ConfigMap's
	// limit-req-status-code; 0 keeps it.
	RejectCode int
	// DryRun counts requests and logs those over the limit without
	// refusing them.
	DryRun bool
	// LogLevel is the level refused requests are logged at; "" is nginx's
	// (error).
	LogLevel LogLevel
	// ZoneSize, when set, is the size of the counters' zone, in place of
	// the shared zones' budget.
	ZoneSize *Size
	// Policy, when set, is the rateLimit Policy these limits come from:
	// its counts are its own within each Location.Source, as NGINX
	// Ingress Controller keeps a zone per Policy and VirtualServer.
	Policy ObjectRef
}

// BurstPacing says how requests within the burst are served. The zero
// value serves them at once (nginx's nodelay, ingress-nginx's behaviour).
type BurstPacing struct {
	// Spaced delays requests within the burst to the rate, after the
	// first Delay of them (nginx's delay=).
	Spaced bool
	Delay  int
}

// RateLimitKeyVariables are the variables of a rateLimit key (NGINX
// Ingress Controller's list, less the jwt_claim_ and apikey_ families of
// NGINX Plus and its API key policy).
var RateLimitKeyVariables = VariableSet{Names: setOf("binary_remote_addr", "remote_addr", "request_uri", "uri", "args",
	"request_method"), Prefixes: []string{"arg_", "http_", "cookie_"}}

// Bounds of a Limits.ZoneSize: nginx refuses a zone under 32k, and one
// zone past 128m holds a million clients' counters.
const (
	MinLimitZoneSize Size = 32 << 10
	MaxLimitZoneSize Size = 128 << 20
)

// LimitLogLevels are the levels of Limits.LogLevel.
var LimitLogLevels = []LogLevel{LogInfo, LogNotice, LogWarn, LogError}

// AccessList is ingress-nginx's denylist-source-range and
// allowlist-source-range: nginx's access module checks the client's
// address (after the realip module replaced it, see RealIP) against Deny
// first, then Allow; a client in Deny is refused, and when Allow is not
// empty, so is every client outside it. Refused clients get 403. Each
// prefix is masked (see ParseCIDRList).
type AccessList struct {
	Deny, Allow []netip.Prefix
}

// ChecksClient reports whether p checks the client before a request is
// answered: access lists, authentication, request or connection limits,
// ModSecurity (nginx's preaccess and access phases). A location that
// answers by itself (a return or redirect) and checks the client answers
// only after the checks pass.
func (p *Policy) ChecksClient() bool {
	if p == nil {
		return false
	}
	a, l := p.Access, p.Limits
	return (a != nil && len(a.Deny)+len(a.Allow) > 0) || p.BasicAuth != nil || p.ExternalAuth != nil ||
		(l != nil && l.RPS+l.RPM+l.Connections > 0) || p.ModSecurity != nil
}

// And returns the list that lets a client in only when both a and b do:
// their Deny prefixes together, and the addresses both Allow lists hold
// (two prefixes either nest, giving the narrower, or are apart). Either
// may be nil; a result that lets nobody in denies every address.
func And(a, b *AccessList) *AccessList {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := &AccessList{Deny: appendNew(slices.Clone(a.Deny), b.Deny...)}
	switch {
	case len(a.Allow) == 0:
		out.Allow = slices.Clone(b.Allow)
	case len(b.Allow) == 0:
		out.Allow = slices.Clone(a.Allow)
	default:
		for _, x := range a.Allow {
			for _, y := range b.Allow {
				if x.Overlaps(y) {
					out.Allow = appendNew(out.Allow, narrower(x, y))
				}
			}
		}
		if len(out.Allow) == 0 {
			out.Deny = appendNew(out.Deny, netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0"))
		}
	}
	return out
}

func narrower(x, y netip.Prefix) netip.Prefix {
	if x.Bits() >= y.Bits() {
		return x
	}
	return y
}

// appendNew appends the prefixes list does not hold yet.
func appendNew(list []netip.Prefix, ps ...netip.Prefix) []netip.Prefix {
	for _, p := range ps {
		if !slices.Contains(list, p) {
			list = append(list, p)
		}
	}
	return list
}

// Allows reports whether a client address gets through, as nginx's
// access module decides.
func (a *AccessList) Allows(client netip.Addr) bool {
	if a == nil {
		return true
	}
	client = client.Unmap()
	for _, p := range a.Deny {
		if p.Contains(client) {
			return false
		}
	}
	if len(a.Allow) == 0 {
		return true
	}
	for _, p := range a.Allow {
		if p.Contains(client) {
			return true
		}
	}
	return false
}

// Rewrite is ingress-nginx's rewrite-target: the location's regex match is
// replaced by Target, where $1..$9 name the regex's capture groups.
type Rewrite struct {
	// Target is a validated replacement path (see ParseRewriteTarget).
	Target string
	// Prefix replaces only the location's path, keeping the rest of the
	// request path after it (NGINX Ingress Controller's rewritePath on a
	// prefix or exact route); Target then has no "?" and no captures.
	// Otherwise Target replaces the whole path.
	Prefix bool
	// Strip, with Prefix and Target "/", removes the location's path by
	// path elements, as Gateway API's ReplacePrefixMatch "/" does:
	// "/foo" and "/foo/" become "/", "/foo/bar" becomes "/bar" (a string
	// prefix rewrite would give "//bar").
	Strip bool
}

// BackendProtocol is the protocol spoken to a backend.
type BackendProtocol string

// The backend protocols.
const (
	ProtocolHTTP  BackendProtocol = "HTTP"
	ProtocolHTTPS BackendProtocol = "HTTPS"
	ProtocolGRPC  BackendProtocol = "GRPC"
	ProtocolGRPCS BackendProtocol = "GRPCS"
)

// TLS reports whether the protocol runs over TLS.
func (p BackendProtocol) TLS() bool { return p == ProtocolHTTPS || p == ProtocolGRPCS }

// GRPC reports whether the protocol is gRPC.
func (p BackendProtocol) GRPC() bool { return p == ProtocolGRPC || p == ProtocolGRPCS }

// UpstreamTLS configures the TLS client nginx uses towards a backend.
type UpstreamTLS struct {
	// Secret is the key of a ProxySecret in Model.ProxySecrets holding the
	// client certificate and the CA bundle, or "".
	Secret string
	// CASecret, when set, is the key of the ProxySecret whose CA bundle
	// verifies the backend in place of Secret's: NGINX Ingress
	// Controller's egressMTLS names the client certificate and the CA in
	// two Secrets.
	CASecret string
	// CAConfigMap, when set, is the key of a ProxyCA in Model.ProxyCAs (a
	// ConfigMap's ca.crt) whose bundle verifies the backend: Gateway API's
	// BackendTLSPolicy caCertificateRefs.
	CAConfigMap string
	// SystemCAs verifies the backend against the data plane's system CA
	// bundle (BackendTLSPolicy wellKnownCACertificates: System).
	SystemCAs bool
	// Verify checks the backend certificate against the secret's CA.
	Verify bool
	// VerifyDepth is the longest chain accepted (default 1).
	VerifyDepth int
	// Name is the name the backend certificate is checked against and, with
	// ServerName, sent as SNI; "" means the proxied host.
	Name string
	// ServerName sends SNI.
	ServerName bool
	// Protocols are TLS protocol names such as "TLSv1.2".
	Protocols []string
	// Ciphers is an OpenSSL cipher list (validated grammar).
	Ciphers string
}

// Timeouts are the proxy timeouts; zero means the ConfigMap default.
type Timeouts struct {
	Connect, Send, Read time.Duration
}

// Buffering is the proxy's buffering; nil or zero means the default.
type Buffering struct {
	// Request and Response are proxy_request_buffering and
	// proxy_buffering.
	Request, Response *bool
	// BodySize is client_max_body_size in bytes (0 = unlimited).
	BodySize *Size
	// ClientBodyBuffer is client_body_buffer_size.
	ClientBodyBuffer *Size
	// Buffers is proxy_buffers' count, BufferSize its size and
	// proxy_buffer_size.
	Buffers    int
	BufferSize *Size
	// BusyBuffers is proxy_busy_buffers_size: how much of the buffers may
	// be busy sending to the client while the response is still read
	// (nil: nginx's default, twice the buffer size). See BusyBuffersFit.
	BusyBuffers *Size
	// MaxTempFile is proxy_max_temp_file_size.
	MaxTempFile *Size
}

// The proxy buffers the http level of Causeway's configuration sets
// (ingress-nginx's proxy-buffer-size, 4k, and proxy_buffers 4 4k); a
// location without its own inherits them.
const (
	DefaultProxyBuffers    = 4
	DefaultProxyBufferSize = Size(4 << 10)
)

// BusyBuffersFit reports whether nginx accepts busy as
// proxy_busy_buffers_size beside proxy_buffers n of size each (0 and 0
// for the http level's defaults) and proxy_buffer_size size: at least
// one buffer, and at most all of them but one. nginx refuses the whole
// configuration otherwise.
func BusyBuffersFit(busy Size, n int, size Size) error {
	if n == 0 {
		n = DefaultProxyBuffers
	}
	if size == 0 {
		size = DefaultProxyBufferSize
	}
	if busy < size {
		return fmt.Errorf("want at least the buffer size, %s", FormatSize(int64(size)))
	}
	if most := Size(n-1) * size; busy > most {
		return fmt.Errorf("want at most all %d buffers but one, %s", n, FormatSize(int64(most)))
	}
	return nil
}

// Retry says when a failed request moves to another endpoint.
type Retry struct {
	// On is proxy_next_upstream's conditions ("error", "timeout",
	// "http_502", ..., or just "off").
	On []string
	// Timeout bounds the time spent retrying (0 = unbounded).
	Timeout time.Duration
	// Tries bounds the attempts (0 = unbounded).
	Tries int
	// Route, when set, is a Gateway API rule's retry (retry.go), in
	// place of On and Tries, which are then unset.
	Route *RouteRetry
}

// Replace is a pair of validated strings for proxy_cookie_* and
// proxy_redirect; Off disables the rewrite.
type Replace struct {
	From, To string
	Off      bool
}

// Header is a response header with a validated name and value.
type Header struct {
	Name  string
	Value HeaderValue
}

// HeaderValue is a header value that passed ParseHeaderValue: visible
// ASCII and spaces, no variables expanded by nginx.
type HeaderValue string

// CORS is ingress-nginx's enable-cors family.
type CORS struct {
	// Origins are exact origins ("https://a.example") or wildcard origins
	// ("https://*.example.com"); empty means any origin ("*").
	Origins        []string
	Methods        []string
	Headers        []string
	ExposeHeaders  []string
	Credentials    bool
	MaxAge         time.Duration
	AllowAnyOrigin bool
	// Echo answers the wildcards (AllowAnyOrigin, Methods ["*"], Headers
	// ["*"]) with the request's own origin, requested method and requested
	// headers instead of "*", which browsers refuse with credentials
	// (Gateway API's rule for allowCredentials).
	Echo bool
	// AnyDepth makes a wildcard origin's "*" match one or more labels,
	// as Gateway API's does; otherwise exactly one, as ingress-nginx's.
	AnyDepth bool
	// AnswerPreflights answers a preflight from an origin not allowed
	// here (204, without CORS headers), as Gateway API asks, instead of
	// passing it to the backend as ingress-nginx does.
	AnswerPreflights bool
}

// ErrorPages sends upstream responses with these statuses to a backend
// that renders the error page (ingress-nginx's custom-http-errors).
type ErrorPages struct {
	Codes []int
	// Backend is the key of the Backend that renders them.
	Backend string
}

// Mirror sends a copy of requests to URL or to Backend and ignores the
// answers.
type Mirror struct {
	// URL is a validated absolute URL (see ParseMirrorURL), or "" when
	// Backend is set (ingress-nginx's mirror-target).
	URL string
	// Backend is the key of the Backend the copies go to, balanced like
	// any location's backend (Gateway API's RequestMirror); "" when URL is
	// set. The copies carry the headers the location sends its own
	// backend.
	Backend string
	// Host is the Host header of a copy sent to URL ("" = the URL's host).
	// A copy sent to Backend keeps the request's, as the location's own.
	Host HeaderValue
	// RequestBody mirrors the body too (default true).
	RequestBody bool
	// Percent of the requests are copied, 1 to 100 (every request), each
	// request drawn at random on its own.
	Percent int
}

// MaxMirrors bounds the mirrors of one location.
const MaxMirrors = 16

// Validate checks what Mirror's fields say of each other.
func (m Mirror) Validate() error {
	switch {
	case (m.URL == "") == (m.Backend == ""):
		return fmt.Errorf("mirror: want a URL or a backend, not both or neither")
	case m.Backend != "" && m.Host != "":
		return fmt.Errorf("mirror to backend %q: the Host header is the request's", m.Backend)
	case m.Percent < 1 || m.Percent > 100:
		return fmt.Errorf("mirror percent %d: want 1 to 100", m.Percent)
	}
	return nil
}

// Size is a byte count printed in nginx's size syntax.
type Size int64

// ServerPolicy is what applies to a whole host.
type ServerPolicy struct {
	// Aliases are further names served exactly like the host.
	Aliases []string
	// WWWRedirect makes the www./non-www. twin of the host redirect here
	// (308 to the same path).
	WWWRedirect bool
	// AppRoot redirects "/" to this path (302).
	AppRoot string
	// ForceSSLRedirect redirects plain HTTP to HTTPS even without TLS
	// configured for the host.
	ForceSSLRedirect bool
	// PreserveTrailingSlash keeps a trailing slash in the HTTPS redirect.
	PreserveTrailingSlash bool
	// HSTS, when set, replaces the ConfigMap's Strict-Transport-Security
	// for this host (a VirtualServer's hsts Policy).
	HSTS *ServerHSTS
	// Gunzip decompresses gzipped backend responses for clients that do
	// not accept gzip (a VirtualServer's spec.gunzip).
	Gunzip bool
	// ServerTokens, when set, replaces the ConfigMap's server-tokens for
	// this host (nginx.org/server-tokens).
	ServerTokens *bool
	// HeaderInherit is how the host's locations inherit the http level's
	// response headers (a VirtualServer's spec.add-header-inherit).
	HeaderInherit HeaderInherit
	// SSLCiphers replaces the ConfigMap's cipher list for the host's
	// HTTPS connections (ParseServerCiphers; "" keeps it), and
	// PreferServerCiphers its server preference (nil keeps it).
	SSLCiphers          string
	PreferServerCiphers *bool
	// Source is the object whose settings these are.
	Source ObjectRef

	// --- snippets (server-snippet) ---

	// Snippet is what an accepted server-snippet adds; nil for none.
	Snippet *Snippet
}

// HeaderInherit is nginx 1.29.3's add_header_inherit: how a level's
// add_header directives combine with those it inherits. Causeway renders
// it by repeating inherited headers (or not) in each location, so any
// nginx serves it.
type HeaderInherit string

// The modes. The zero value is Causeway's default, which is merge.
const (
	// HeaderInheritMerge adds the level's own headers to the inherited
	// ones.
	HeaderInheritMerge HeaderInherit = "merge"
	// HeaderInheritOn is nginx's classic rule: a level with headers of
	// its own inherits none.
	HeaderInheritOn HeaderInherit = "on"
	// HeaderInheritOff inherits none, whatever the level has.
	HeaderInheritOff HeaderInherit = "off"
)

// ServerHSTS is one host's Strict-Transport-Security. A disabled HSTS
// sends none.
type ServerHSTS struct {
	HSTS
	// BehindProxy sends the header when the request's X-Forwarded-Proto
	// is https, instead of when the request came over TLS.
	BehindProxy bool
}

// ClientTLS is client certificate authentication for a server
// (ingress-nginx's auth-tls-* annotations). nginx verifies the
// certificate during the handshake against the CA bundle; the server then
// refuses requests as Verify says.
type ClientTLS struct {
	// Secret is the key of a ProxySecret in Model.ProxySecrets holding
	// the CA bundle (and optionally a CRL).
	Secret string
	Verify ClientVerify
	// Depth is the longest chain accepted, 1 to MaxClientVerifyDepth.
	Depth int
	// ErrorPage, a URL that ParseRedirectURL accepted, is where a client
	// whose certificate is missing or invalid is redirected (302) instead
	// of the 400 answer.
	ErrorPage string
	// PassCertificate sends the client certificate to the backend in the
	// ssl-client-cert header (URL-encoded PEM).
	PassCertificate bool
	// MatchCN, when set, is "CN=" followed by a regular expression that
	// ParseHeaderRegex accepted; a request whose subject DN does not
	// contain a match answers 403.
	MatchCN string
	// Source is the Ingress whose annotations these are.
	Source ObjectRef
}

// MaxClientVerifyDepth bounds auth-tls-verify-depth.
const MaxClientVerifyDepth = 10

// ClientVerify is nginx's ssl_verify_client.
type ClientVerify string

const (
	// VerifyOn requires a certificate that the CA bundle verifies.
	VerifyOn ClientVerify = "on"
	// VerifyOff asks for no certificate.
	VerifyOff ClientVerify = "off"
	// VerifyOptional verifies a certificate if the client sends one.
	VerifyOptional ClientVerify = "optional"
	// VerifyOptionalNoCA asks for a certificate but lets any through;
	// the backend sees the result in ssl-client-verify.
	VerifyOptionalNoCA ClientVerify = "optional_no_ca"
)

// IgnorableHeaders are the backend headers proxy_ignore_headers takes.
var IgnorableHeaders = map[string]bool{"X-Accel-Redirect": true, "X-Accel-Expires": true, "X-Accel-Limit-Rate": true,
	"X-Accel-Buffering": true, "X-Accel-Charset": true, "Expires": true, "Cache-Control": true, "Set-Cookie": true, "Vary": true}

// ResponsePage replaces responses of Codes (300 to 599): exactly one of
// Redirect and Return is set.
type ResponsePage struct {
	Codes    []int
	Redirect *Redirect
	// Return's Status, when not 0, replaces the status; its Body may use
	// ErrorPageVariables, and Headers are sent with it.
	Return  *Return
	Headers []TemplateHeader
}
