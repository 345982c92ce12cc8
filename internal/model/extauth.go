package model

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// External authentication (ingress-nginx's auth-url family and the
// ConfigMap's global-auth-* keys): before a request is proxied, nginx's
// auth_request module asks an authentication service with a subrequest;
// a 2xx lets the request through, 401 and 403 are answered to the client,
// anything else is a 500. The service's URL was how CVE-2025-24514
// injected configuration into ingress-nginx, so every string here has a
// grammar and is rebuilt from its parsed parts: the URLs may name nginx
// variables only as URL templates (urltemplate.go) allow.

// ExternalAuth is one location's external authentication.
type ExternalAuth struct {
	// URL is the service's absolute http or https URL, as ParseAuthURL
	// rebuilt it (never empty path), possibly a template with variables
	// (AuthURLTemplate); "" when Backend is set.
	URL string
	// Backend, when set, is the key of the Backend the subrequest is
	// balanced over, as any proxied location's (NGINX Ingress
	// Controller's externalAuth names a Service): URI is then the path
	// asked (ValidatePath), TLS the client towards it (nil: plain HTTP),
	// and the Host header the request's, as NGINX Ingress Controller
	// sends it.
	Backend string
	URI     string
	TLS     *UpstreamTLS
	// SigninURI, when set, answers a 401 with this path of the same
	// server instead, an internal redirect keeping the original request
	// URI (NGINX Ingress Controller's authSigninURI); the path is one
	// ValidatePath accepts.
	SigninURI string
	// Host is the Host header of the subrequest: the URL's host without
	// port, as ingress-nginx sends it; "" when the URL's host is the
	// request's own ($host).
	Host HeaderValue
	// Method, when set, is the subrequest's method (auth-method); "" keeps
	// the client's.
	Method string
	// SigninURL, when set, turns a 401 into a 302 to it, carrying the
	// original URL in the query parameter RedirectParam (unless the URL
	// already has that parameter). A URL that ParseSigninURL accepted.
	SigninURL string
	// RedirectParam is the query parameter name (default "rd").
	RedirectParam string
	// ResponseHeaders are the headers of the service's answer copied to
	// the proxied request (valid header names).
	ResponseHeaders []string
	// RequestRedirect is the X-Auth-Request-Redirect header sent to the
	// service; "" sends the request URI.
	RequestRedirect HeaderValue
	// Cache, when set, keeps the service's answers for requests with the
	// same key.
	Cache *AuthCache
	// AlwaysSetCookie sends the service's Set-Cookie on every status of
	// the response, not only on 2xx and 3xx.
	AlwaysSetCookie bool
	// ProxySetHeaders are sent to the service besides the request's own
	// (auth-proxy-set-headers), replacing them.
	ProxySetHeaders []Header
	// Keepalive, when set, keeps connections to the URL's service open
	// (extauth_keepalive.go); only with URL.
	Keepalive *AuthKeepalive
	// Snippet is auth-snippet read in the auth context: set,
	// proxy_set_header and proxy_hide_header only, applied in the
	// location asking the service; nil for none.
	Snippet *Snippet
}

// AuthSubrequestHeaders are the headers the subrequest to the service
// always sets; auth-proxy-set-headers may not replace them.
var AuthSubrequestHeaders = []string{"Host", "Content-Length", "Connection", "Transfer-Encoding", "X-Forwarded-Proto",
	"X-Request-ID", "X-Original-URI", "X-Scheme", "X-Original-URL", "X-Original-Method", "X-Sent-From", "X-Real-IP",
	"X-Forwarded-For", "X-Auth-Request-Redirect"}

// AuthCache is auth-cache-key and auth-cache-duration.
type AuthCache struct {
	// Key are the parts of the cache key, in order.
	Key []AuthCacheKeyPart
	// Valid are the statuses cached and for how long.
	Valid []AuthCacheValid
}

// AuthCacheKeyPart is a literal (Var "") or an allowlisted nginx
// variable name without "$".
type AuthCacheKeyPart struct {
	Var, Literal string
}

// AuthCacheValid caches answers with Codes for Duration (nginx's
// proxy_cache_valid).
type AuthCacheValid struct {
	Codes    []int
	Duration time.Duration
}

// DefaultAuthCacheValid is ingress-nginx's default auth-cache-duration.
var DefaultAuthCacheValid = []AuthCacheValid{{Codes: []int{200, 202, 401}, Duration: 5 * time.Minute}}

// The cache of external authentication's answers, one zone for all
// locations, present only when a location caches: 10 MiB of keys (about
// 80,000 entries), at most 128 MiB on disk, entries unused for 30 minutes
// dropped, as ingress-nginx sizes it.
const (
	AuthCacheKeysZone Size = 10 << 20
	AuthCacheMaxSize  Size = 128 << 20
	AuthCacheInactive      = 30 * time.Minute
)

// DefaultNoAuthLocations is the ConfigMap's no-auth-locations default.
var DefaultNoAuthLocations = []string{"/.well-known/acme-challenge"}

// ParseAuthURL checks auth-url and global-auth-url: an absolute http or
// https URL as ParseRedirectURL accepts it (so no quotes, spaces, ";",
// braces, user information or fragment), rebuilt from its parts, with "/"
// for an empty path; or a template with variables (AuthURLTemplate). It
// also returns the host for the Host header, "" when the host is the
// request's own.
func ParseAuthURL(s string) (string, HeaderValue, error) {
	if strings.Contains(s, "$") {
		t, err := AuthURLTemplate(s)
		if err != nil {
			return "", "", err
		}
		return t.String(), HeaderValue(t.Host), nil
	}
	out, err := parseHTTPURL(s, "auth URL")
	if err != nil {
		return "", "", err
	}
	u, err := url.Parse(out)
	if err != nil {
		return "", "", err
	}
	if u.Path == "" {
		u.Path = "/"
		out = u.Scheme + "://" + u.Host + "/"
		if u.RawQuery != "" {
			out += "?" + u.RawQuery
		}
	}
	host := u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return out, HeaderValue(host), nil
}

// AuthURLTemplate parses an auth URL with variables: a template as
// ParseURLTemplate accepts it, with "/" for an empty path, and either
//   - the request's own host ($host or $best_http_host), with no port or
//     $server_port: the subrequest goes back to this nginx, to the same
//     server (render's loop), as the host's DNS name would lead it; or
//   - a literal host and port with a literal scheme, resolved when nginx
//     loads the configuration as for a URL without variables.
func AuthURLTemplate(s string) (URLTemplate, error) {
	t, err := parseURLTemplate(s, "auth URL")
	if err != nil {
		return t, err
	}
	switch {
	case t.SelfHost() && t.Port != 0:
		return t, errors.New("auth URL: a port with $host would leave this nginx for another server on that host; " +
			"write no port (or $server_port), or name the service")
	case !t.SelfHost() && (t.Scheme == "" || t.PortVar):
		return t, errors.New("auth URL: $scheme and $server_port need the host to be $host or $best_http_host")
	}
	switch {
	case len(t.Rest) == 0:
		t.Rest = []URLPart{{Literal: "/"}}
	case t.Rest[0].Var == "" && strings.HasPrefix(t.Rest[0].Literal, "?"):
		t.Rest[0].Literal = "/" + t.Rest[0].Literal
	}
	if out := t.String(); len(out) > maxURLLen {
		return t, fmt.Errorf("auth URL is %d bytes long, more than %d", len(out), maxURLLen)
	}
	return t, nil
}

// authMethods are the methods ingress-nginx's auth-method accepts.
var authMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE"}

// ParseAuthMethod checks auth-method: one of GET, HEAD, POST, PUT, PATCH,
// DELETE, CONNECT, OPTIONS, TRACE, in upper case as ingress-nginx wants.
func ParseAuthMethod(s string) (string, error) {
	if !slices.Contains(authMethods, s) {
		return "", fmt.Errorf("want one of %s", strings.Join(authMethods, ", "))
	}
	return s, nil
}

// maxParamLen bounds auth-signin-redirect-param.
const maxParamLen = 64

// ParseQueryParam checks a query parameter name
// (auth-signin-redirect-param): 1 to 64 letters, digits, "-", "_" or ".".
func ParseQueryParam(s string) (string, error) {
	if s == "" || len(s) > maxParamLen {
		return "", fmt.Errorf("want a parameter name of 1 to %d bytes", maxParamLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "", fmt.Errorf("want letters, digits, '-', '_' or '.', not %s", describeByte(c))
		}
	}
	return s, nil
}

// maxAuthResponseHeaders bounds auth-response-headers.
const maxAuthResponseHeaders = 32

// ParseAuthResponseHeaders checks auth-response-headers: header names of
// letters, digits, "-" and "_" (as ingress-nginx allows; nginx reads the
// answer's header through a variable named after it, where "." would end
// the name) separated by commas, at most 32; "*" is refused.
func ParseAuthResponseHeaders(s string) ([]string, error) {
	l, err := ParseHeaderNameList(s, maxAuthResponseHeaders)
	if err != nil {
		return nil, err
	}
	for _, h := range l {
		if !AuthHeaderName(h) {
			return nil, fmt.Errorf("header name %q: want letters, digits, - and _", Truncate(h))
		}
	}
	return l, nil
}

// AuthHeaderName reports whether a header name may be copied from the
// service's answer: 1 to 64 letters, digits, "-" and "_".
func AuthHeaderName(h string) bool {
	return h != "" && len(h) <= 64 && strings.Trim(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == ""
}

// maxCacheKeyLen bounds auth-cache-key.
const maxCacheKeyLen = 256

// authCacheVars are the variables auth-cache-key may name besides
// $http_<name> and $cookie_<name>.
var authCacheVars = []string{"remote_user", "http_authorization", "host", "request_uri"}

// AuthCacheVar reports whether an nginx variable name may be part of an
// auth cache key: remote_user, http_authorization, host, request_uri, or
// http_ or cookie_ followed by 1 to 64 of [a-z0-9_].
func AuthCacheVar(name string) bool {
	if slices.Contains(authCacheVars, name) {
		return true
	}
	for _, p := range []string{"http_", "cookie_"} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			return rest != "" && len(rest) <= 64 && strings.Trim(rest, "abcdefghijklmnopqrstuvwxyz0123456789_") == ""
		}
	}
	return false
}

// cacheKeyLiteral are the bytes a key may hold outside variables.
func cacheKeyLiteral(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.:/|,=@+", c) >= 0
}

// ParseAuthCacheKey checks auth-cache-key: at most 256 bytes of
// variables, written $name or ${name}, among those AuthCacheVar allows,
// and literals of letters, digits and -_.:/|,=@+. It needs at least one
// variable the client sends ($http_... or $cookie_...): a key without one
// would share one answer between clients ($remote_user is empty without
// basic authentication, and $host and $request_uri name no client).
func ParseAuthCacheKey(s string) ([]AuthCacheKeyPart, error) {
	if s == "" || len(s) > maxCacheKeyLen {
		return nil, fmt.Errorf("want a key of 1 to %d bytes", maxCacheKeyLen)
	}
	var parts []AuthCacheKeyPart
	vars := 0
	for i := 0; i < len(s); {
		if s[i] != '$' {
			j := i
			for j < len(s) && s[j] != '$' {
				if !cacheKeyLiteral(s[j]) {
					return nil, fmt.Errorf("want letters, digits, -_.:/|,=@+ and variables, not %s", describeByte(s[j]))
				}
				j++
			}
			parts = append(parts, AuthCacheKeyPart{Literal: s[i:j]})
			i = j
			continue
		}
		i++
		var name string
		if i < len(s) && s[i] == '{' {
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, errors.New("a ${ has no closing }")
			}
			name, i = s[i+1:i+end], i+end+1
		} else {
			j := i
			for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
				j++
			}
			name, i = s[i:j], j
		}
		if !AuthCacheVar(name) {
			return nil, fmt.Errorf("variable $%s is not allowed: want $remote_user, $http_authorization, $host, $request_uri, $http_<name> or $cookie_<name> (lower case)", Truncate(name))
		}
		parts = append(parts, AuthCacheKeyPart{Var: name})
		if strings.HasPrefix(name, "http_") || strings.HasPrefix(name, "cookie_") {
			vars++
		}
	}
	if vars == 0 {
		return nil, errors.New("want at least one variable the client sends ($http_authorization, $http_<name> or $cookie_<name>): " +
			"without one, clients would share one answer")
	}
	return parts, nil
}

// maxCacheValid bounds the entries of auth-cache-duration.
const maxCacheValid = 16

// ParseAuthCacheDuration checks auth-cache-duration: entries separated by
// commas, each status codes (100 to 599) separated by spaces and then one
// duration with a unit as ParseSeconds reads it ("200 202 401 5m"); an entry without
// codes caches 200, 301 and 302, as nginx does. At most 16 entries.
func ParseAuthCacheDuration(s string) ([]AuthCacheValid, error) {
	var out []AuthCacheValid
	for entry := range strings.SplitSeq(s, ",") {
		fields := strings.Fields(entry)
		if len(fields) == 0 {
			continue
		}
		if len(out) == maxCacheValid {
			return nil, fmt.Errorf("want at most %d entries", maxCacheValid)
		}
		// A unit is required: "200" alone is a status, not 200 seconds.
		last := fields[len(fields)-1]
		d, err := ParseSeconds(last)
		if err != nil || d <= 0 || strings.Trim(last, "0123456789") == "" {
			return nil, fmt.Errorf("entry %q: want status codes and then a duration of more than 0 such as 5m", Truncate(entry))
		}
		v := AuthCacheValid{Duration: d}
		for _, f := range fields[:len(fields)-1] {
			n, err := strconv.Atoi(f)
			if err != nil || len(f) != 3 || n < 100 || n > 599 {
				return nil, fmt.Errorf("entry %q: %q is not a status code from 100 to 599", Truncate(entry), Truncate(f))
			}
			v.Codes = append(v.Codes, n)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("want status codes and a duration, such as 200 202 401 5m")
	}
	return out, nil
}

// maxNoAuthLocations bounds no-auth-locations.
const maxNoAuthLocations = 64

// ParseNoAuthLocations checks no-auth-locations: path prefixes separated
// by commas (spaces around them ignored, empty items skipped), each a path
// as ValidatePath accepts it. Global authentication does not apply to a
// location whose path starts with one.
func ParseNoAuthLocations(s string) ([]string, error) {
	var out []string
	for it := range strings.SplitSeq(s, ",") {
		it = strings.Trim(it, " \t")
		if it == "" {
			continue
		}
		if len(out) == maxNoAuthLocations {
			return nil, fmt.Errorf("want at most %d paths", maxNoAuthLocations)
		}
		if !strings.HasPrefix(it, "/") || !urlPath.MatchString(it) {
			return nil, fmt.Errorf("%q: want a path starting with / of letters, digits, %%XX escapes and -._~!*()+,=:@&/", Truncate(it))
		}
		out = append(out, it)
	}
	return out, nil
}
