package model

import (
	"net/netip"
	"regexp"
	"strconv"
	"time"
)

// Config holds the global settings read from the controller's ConfigMap.
// Every field is a parsed, typed value; the renderer never sees the raw
// ConfigMap strings.
type Config struct {
	// ModSecurity is the ConfigMap's web application firewall
	// (enable-modsecurity and its companions; modsecurity.go).
	ModSecurity ModSecurityConfig
	// SSLRedirect redirects HTTP to HTTPS (308) for hosts listed in TLS.
	SSLRedirect bool
	// WorkerProcesses is 0 for "auto".
	WorkerProcesses int
	// WorkerConnections bounds connections per worker.
	WorkerConnections int
	// WorkerShutdownTimeout bounds how long old workers live after a reload,
	// so that generations of workers holding long-lived connections cannot
	// pile up.
	WorkerShutdownTimeout time.Duration
	// AccessLog enables the access log (to the controller's stderr).
	AccessLog bool
	// Proxy timeouts.
	ProxyConnectTimeout, ProxyReadTimeout, ProxySendTimeout time.Duration
	// ProxyBodySize is nginx's client_max_body_size in bytes; 0 means
	// unlimited.
	ProxyBodySize int64
	// UpstreamKeepalive is the number of idle keepalive connections each
	// worker keeps per upstream: in the one Lua-balanced upstream, or on
	// the plain data plane in each backend's, where build bounds the
	// pools together (model.MaxKeepaliveTotal).
	UpstreamKeepalive int
	// LoadBalance is the default method for backends whose Service does
	// not choose one.
	LoadBalance BalanceMethod
	// AllowedResponseHeaders are the header names the custom-headers
	// annotation may set (global-allowed-response-headers); none by
	// default, as in ingress-nginx: an Ingress author sets response
	// headers only where the cluster's operator allows it.
	AllowedResponseHeaders []string
	// ReloadFreeCertificates has nginx read each host certificate at
	// handshake time, so renewals need no reload. It costs CPU per full
	// handshake (measured: about half the handshake rate of certificates
	// loaded at reload); false trades that for a reload per renewal.
	ReloadFreeCertificates bool
	// ReloadFreeHosts gives each shared server layout a second server
	// block, its hop server, so that a new host of that layout goes live
	// without a reload (render/hop.go); false renders none, and every new
	// host reloads.
	ReloadFreeHosts bool

	// --- Access log (log-format-upstream, log-format-escape-json,
	// log-format-escape-none, skip-access-log-urls,
	// enable-access-log-for-default-backend; AccessLog above is
	// disable-access-log).

	// LogFormat is the access log's format; DefaultLogFormat by default.
	LogFormat LogFormat
	// LogEscapeJSON escapes variable values for JSON; LogEscapeNone
	// escapes nothing and wins over LogEscapeJSON, as in ingress-nginx.
	LogEscapeJSON, LogEscapeNone bool
	// SkipLogPaths are exact URL paths whose requests are not logged.
	SkipLogPaths []string
	// LogDefaultBackend logs the requests that the catch-all server's
	// own default (no Ingress's) answers.
	LogDefaultBackend bool
	// LogParams buffer the access log (access-log-params).
	LogParams AccessLogParams
	// --- Listener TLS, HSTS and HTTP/2 (ssl-*, hsts*, use-http2, http2-*) ---

	// HTTP2 offers HTTP/2 (by ALPN) on the HTTPS listeners.
	HTTP2 bool
	// HTTP2MaxConcurrentStreams bounds the concurrent requests of one
	// HTTP/2 connection.
	HTTP2MaxConcurrentStreams int
	// SSLProtocols are the TLS versions the listeners accept, each a key
	// of TLSProtocols, in the order written.
	SSLProtocols []string
	// SSLCiphers is an OpenSSL cipher list (ParseCipherList) for TLS 1.2
	// and below; the server's order is preferred.
	SSLCiphers string
	// SSLECDHCurves are the key exchange groups, each a key of
	// ECDHCurves; empty means OpenSSL's choice ("auto").
	SSLECDHCurves []string
	// SSLSessionCache keeps a shared TLS session cache of
	// SSLSessionCacheSize bytes; SSLSessionTimeout is how long a session
	// may be resumed.
	SSLSessionCache     bool
	SSLSessionCacheSize int64
	SSLSessionTimeout   time.Duration
	// SSLSessionTickets enables TLS session tickets.
	SSLSessionTickets bool
	// EnableOCSP staples OCSP responses to the hosts' certificates
	// (enable-ocsp).
	EnableOCSP bool
	// SSLRejectHandshake refuses the TLS handshake of a server name no
	// host serves (and of a client sending none) instead of answering
	// with the default certificate (ssl-reject-handshake).
	SSLRejectHandshake bool
	// HSTS is the Strict-Transport-Security header of HTTPS responses.
	HSTS HSTS

	// Real client address: the realip module, forwarded headers and the
	// PROXY protocol (realip.go).
	RealIP RealIP

	// DefaultAccess are the ConfigMap's source address lists
	// (whitelist-source-range, denylist-source-range). Each applies to
	// every location of the Ingresses that do not set that list by
	// annotation, as ingress-nginx's global defaults do.
	DefaultAccess AccessList
	// BlockCIDRs (block-cidrs) are refused with 403 everywhere, whatever
	// a location's own lists say.
	BlockCIDRs []netip.Prefix
	// BlockUserAgents and BlockReferers (block-user-agents,
	// block-referers) refuse requests whose User-Agent or Referer matches
	// an entry with 403, on every server.
	BlockUserAgents, BlockReferers []HeaderMatch
	// FailClosed are the security keys of the ConfigMap whose values could
	// not be used: every location of every Ingress answers 503, since
	// serving them without the setting would let in clients it refuses.
	FailClosed []string
	// GlobalAuth is the ConfigMap's global-auth-url family: the external
	// authentication of every location without its own auth-url, unless
	// its Ingress sets enable-global-auth "false" or its path starts with
	// one of NoAuthLocations.
	GlobalAuth      *ExternalAuth
	NoAuthLocations []string

	// --- Compression (use-gzip, enable-brotli and their settings) ---

	// Gzip and Brotli compress responses for clients that accept it.
	// Brotli needs nginx's brotli filter module; the build turns it off
	// with a Problem when the module is not there.
	Gzip, Brotli Compression

	// --- Request handling (client connections, redirects, request IDs,
	// upstream keepalive, workers, error log) ---

	// KeepAlive is how long an idle client connection stays open; 0
	// turns client keepalive off.
	KeepAlive time.Duration
	// KeepAliveRequests is the number of requests one client connection
	// may carry.
	KeepAliveRequests int
	// GeoIP2 is use-geoip2 and its settings.
	GeoIP2 GeoIP2Config
	// ClosedLocations are the deny-only location blocks of a refused
	// server-snippet key: every server answers the requests they match
	// with 503.
	ClosedLocations []ClosedLocation
	// Resolvers are the DNS servers that resolve ExternalName Services
	// (resolver-addresses); empty means resolv.conf's. NoIPv6DNS never asks
	// them for AAAA records (disable-ipv6-dns).
	Resolvers []netip.AddrPort
	NoIPv6DNS bool
	// UnderscoresInHeaders accepts request header names with underscores
	// (enable-underscores-in-headers); nginx drops them otherwise.
	UnderscoresInHeaders bool
	// LimitReqStatus and LimitConnStatus answer requests refused by a rate
	// or connection limit (400 to 599).
	LimitReqStatus, LimitConnStatus int
	// LimitRate is the bytes per second sent per response, after the first
	// LimitRateAfter bytes (0: no limit); locations may set their own.
	LimitRate, LimitRateAfter int64
	// ClientHeaderBufferSize is the buffer for a request's header, in
	// bytes; LargeClientHeaderBuffers take over for longer headers.
	ClientHeaderBufferSize int64
	// LargeClientHeaderBuffers bound the request line and each header
	// field: a longer one is refused with 414 or 400.
	LargeClientHeaderBuffers HeaderBuffers
	// ClientHeaderTimeout and ClientBodyTimeout bound reading a request's
	// header, and each read of its body.
	ClientHeaderTimeout, ClientBodyTimeout time.Duration
	// HTTPRedirectCode is the status of HTTPS and www. redirects: 301,
	// 302, 307 or 308.
	HTTPRedirectCode int
	// ServerTokens sends nginx's version in the Server header and on
	// error pages.
	ServerTokens bool
	// GenerateRequestID sends backends a generated X-Request-ID when the
	// client sent none (a client's X-Request-ID is always passed on).
	GenerateRequestID bool
	// UpstreamKeepaliveTimeout closes idle upstream connections;
	// UpstreamKeepaliveRequests bounds the requests of one.
	UpstreamKeepaliveTimeout  time.Duration
	UpstreamKeepaliveRequests int
	// MaxWorkerOpenFiles is nginx's worker_rlimit_nofile; 0 means the
	// controller's hard limit less 1024, as ingress-nginx computes it.
	MaxWorkerOpenFiles int
	// ErrorLogLevel is the least severity nginx logs.
	ErrorLogLevel LogLevel

	// --- Headers between clients and backends (hide-headers,
	// add-headers, proxy-set-headers, allow-backend-server-header) and
	// the listeners' DH parameters (ssl-dh-param) ---

	// HideHeaders are backend response headers not passed to clients.
	HideHeaders []string
	// AddHeadersFrom and ProxySetHeadersFrom name the ConfigMaps whose
	// entries are the response headers added for clients and the request
	// headers set for backends; the build reads them into AddHeaders and
	// ProxySetHeaders, sorted by name.
	AddHeadersFrom, ProxySetHeadersFrom *ObjectName
	AddHeaders, ProxySetHeaders         []Header
	// AllowBackendServerHeader passes the backend's Server header on
	// instead of nginx's; as in ingress-nginx, only with ServerTokens.
	AllowBackendServerHeader bool
	// SSLDHParamFrom names the Secret whose dhparam.pem holds the DH
	// parameters of DHE cipher suites; the build validates it into
	// Model.DHParam.
	SSLDHParamFrom *ObjectName
	// SSLSessionTicketKey is ssl-session-ticket-key's key (48 or 80
	// bytes, ParseTicketKey); SSLSessionTicketKeyFrom names the Secret
	// whose keys replace it (ssl-session-ticket-key-secret). The build
	// resolves them into Model.TicketKeys.
	SSLSessionTicketKey     []byte
	SSLSessionTicketKeyFrom *ObjectName

	// --- Snippets (allow-snippet-annotations) ---

	// AllowSnippetAnnotations lets configuration-snippet and
	// server-snippet apply, as far as package snippet can read them, and
	// the snippets below.
	AllowSnippetAnnotations bool
	// ServerSnippet and LocationSnippet are the ConfigMap's server-snippet
	// and location-snippet: applied to every server and every location,
	// ahead of the Ingresses' own. Neither may answer requests.
	ServerSnippet, LocationSnippet *Snippet
	// HTTPSnippet is the ConfigMap's http-snippet (package snippet's HTTP
	// context). The builder folds it, and the VirtualServers'
	// http-snippets after it, into ServerSnippet, ahead of its own
	// directives: the renderer sees ServerSnippet only.
	HTTPSnippet *Snippet

	// --- Defaults of per-location annotations (proxy-buffering,
	// custom-http-errors, force-ssl-redirect, ...; defaults.go) ---

	// Defaults apply wherever the annotation of the same name is not set.
	Defaults Defaults

	// Tracing is OpenTelemetry tracing (enable-opentelemetry, otel-*,
	// otlp-*; tracing.go).
	Tracing Tracing
}

// HSTS is the Strict-Transport-Security policy sent on HTTPS responses.
type HSTS struct {
	Enabled bool
	// MaxAge is in seconds.
	MaxAge            int64
	IncludeSubdomains bool
	Preload           bool
}

// Value is the header's value, such as "max-age=31536000; includeSubDomains".
func (h HSTS) Value() string {
	v := "max-age=" + strconv.FormatInt(h.MaxAge, 10)
	if h.IncludeSubdomains {
		v += "; includeSubDomains"
	}
	if h.Preload {
		v += "; preload"
	}
	return v
}

// TLSProtocols are the ssl-protocols values: the TLS versions nginx
// knows. SSLv2 and SSLv3 are refused.
var TLSProtocols = map[string]bool{"TLSv1": true, "TLSv1.1": true, "TLSv1.2": true, "TLSv1.3": true}

// ECDHCurves are the ssl-ecdh-curve group names OpenSSL 3 accepts for
// TLS key exchange.
var ECDHCurves = map[string]bool{
	"X25519": true, "X448": true,
	"prime256v1": true, "secp384r1": true, "secp521r1": true,
	"P-256": true, "P-384": true, "P-521": true,
}

// DefaultSSLCiphers is ingress-nginx's ssl-ciphers default.
const DefaultSSLCiphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:" +
	"ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:" +
	"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:" +
	"DHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256"

// Compression is gzip or brotli compression of responses.
type Compression struct {
	Enabled bool
	// Level is the compression level (gzip 1-9, brotli 0-11).
	Level int
	// MinLength is the least Content-Length, in bytes, compressed.
	MinLength int64
	// Types are the lower-case MIME types compressed, each type/subtype
	// as ParseMIMETypes accepts it, or the single "*".
	Types []string
}

// HeaderBuffers is nginx's large_client_header_buffers: Count buffers of
// Size bytes.
type HeaderBuffers struct {
	Count int
	Size  int64
}

// LogLevel is an nginx error_log level.
type LogLevel string

// The nginx error_log levels, from most to least verbose.
const (
	LogDebug  LogLevel = "debug"
	LogInfo   LogLevel = "info"
	LogNotice LogLevel = "notice"
	LogWarn   LogLevel = "warn"
	LogError  LogLevel = "error"
	LogCrit   LogLevel = "crit"
	LogAlert  LogLevel = "alert"
	LogEmerg  LogLevel = "emerg"
)

// Valid reports whether l is one of the levels above.
func (l LogLevel) Valid() bool {
	switch l {
	case LogDebug, LogInfo, LogNotice, LogWarn, LogError, LogCrit, LogAlert, LogEmerg:
		return true
	}
	return false
}

// DefaultGzipTypes and DefaultBrotliTypes are ingress-nginx's defaults.
var (
	DefaultGzipTypes = []string{
		"application/atom+xml", "application/javascript", "application/x-javascript", "application/json",
		"application/rss+xml", "application/vnd.ms-fontobject", "application/x-font-ttf",
		"application/x-web-app-manifest+json", "application/xhtml+xml", "application/xml", "font/opentype",
		"image/svg+xml", "image/x-icon", "text/css", "text/javascript", "text/plain", "text/x-component",
	}
	DefaultBrotliTypes = append([]string{"application/xml+rss"}, DefaultGzipTypes...)
)

// DefaultConfig is what an absent or empty ConfigMap means.
func DefaultConfig() Config {
	return Config{
		SSLRedirect:            true,
		NoAuthLocations:        DefaultNoAuthLocations,
		WorkerProcesses:        0,
		WorkerConnections:      16384,
		WorkerShutdownTimeout:  240 * time.Second,
		AccessLog:              true,
		ProxyConnectTimeout:    5 * time.Second,
		ProxyReadTimeout:       60 * time.Second,
		ProxySendTimeout:       60 * time.Second,
		ProxyBodySize:          1 << 20,
		UpstreamKeepalive:      320,
		LoadBalance:            RoundRobin,
		ReloadFreeCertificates: true,
		ReloadFreeHosts:        true,
		LogFormat:              MustLogFormat(DefaultLogFormat),

		// Listener TLS, HSTS and HTTP/2.
		HTTP2:                     true,
		HTTP2MaxConcurrentStreams: 128,
		SSLProtocols:              []string{"TLSv1.2", "TLSv1.3"},
		SSLCiphers:                DefaultSSLCiphers,
		SSLSessionCache:           true,
		SSLSessionCacheSize:       10 << 20,
		SSLSessionTimeout:         10 * time.Minute,
		SSLSessionTickets:         false,
		HSTS:                      HSTS{Enabled: true, MaxAge: 31536000, IncludeSubdomains: true},
		RealIP:                    DefaultRealIP(),

		// Compression.
		Gzip:   Compression{Level: 1, MinLength: 256, Types: DefaultGzipTypes},
		Brotli: Compression{Level: 4, MinLength: 20, Types: DefaultBrotliTypes},

		// Request handling.
		KeepAlive:                 75 * time.Second,
		KeepAliveRequests:         1000,
		LimitReqStatus:            503,
		LimitConnStatus:           503,
		ClientHeaderBufferSize:    1 << 10,
		LargeClientHeaderBuffers:  HeaderBuffers{Count: 4, Size: 8 << 10},
		ClientHeaderTimeout:       60 * time.Second,
		ClientBodyTimeout:         60 * time.Second,
		HTTPRedirectCode:          308,
		GenerateRequestID:         true,
		UpstreamKeepaliveTimeout:  60 * time.Second,
		UpstreamKeepaliveRequests: 10000,
		ErrorLogLevel:             LogNotice,

		Tracing: DefaultTracing(),
	}
}

// HeaderMatch is an entry of a header block list (ParseHeaderMatches).
type HeaderMatch struct {
	// Value is the string the whole header equals, ignoring ASCII case,
	// or, with Regex, a regex of ParseHeaderRegex's grammar found anywhere
	// in it, ignoring case with Fold.
	Value       string
	Regex, Fold bool
}

// Matches reports whether a header value matches, as nginx's map does.
func (m HeaderMatch) Matches(h string) bool {
	if !m.Regex {
		return asciiEqualFold(m.Value, h)
	}
	re := m.Value
	if m.Fold {
		re = "(?i)" + re
	}
	ok, _ := regexp.MatchString(re, h)
	return ok
}
