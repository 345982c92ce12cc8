package annotations

import (
	"github.com/causeway/causeway/internal/model"
)

// extAuthGroup is ingress-nginx's external authentication: nginx asks the
// service at auth-url before proxying each request. auth-url and the
// settings the service's decision depends on are security settings: a
// value that cannot be used as written makes every path of the Ingress
// answer 503. The others only shape the answers and are dropped with a
// Problem.
var extAuthGroup = Group{
	Name: "extauth",
	Annotations: supported("extauth", append([]Annotation{
		Annotation{Name: "auth-url", Scope: ScopeLocation, Default: "none: no external authentication",
			Grammar: "an absolute http or https URL of up to 2048 bytes: host a DNS name or IP address, optional port, path and query " +
				"of letters, digits, %XX escapes and -._~!*()+,=:@&/?; rebuilt from its parts (an empty path becomes /). " +
				"It may name nginx variables as a URL template: host $host or $best_http_host (with $scheme or http/https, " +
				"no port or $server_port), sending the subrequest back to this nginx's server for that host; " +
				"in the path $host, $scheme, $server_port and $request_uri; in the query also $best_http_host, $escaped_request_uri, " +
				"$http_<name> and $arg_<name>. " +
				"A 2xx answer lets the request through, 401 and 403 are answered to the client, anything else is 500; " +
				"a literal host is resolved when nginx loads the configuration",
			Difference: "other variables, variables a client controls in the path, a literal host with $scheme or $server_port, " +
				"a port with $host, user information, fragments, quotes, spaces and control bytes are refused; " +
				"$host is not looked up in DNS: the subrequest goes to this nginx over a private socket, and is refused (503) " +
				"in a rule without host, where $host is whatever the client sent; $escaped_request_uri needs the Lua data plane; " +
				"an invalid URL, or a host nginx cannot resolve, fails closed (the Ingress is left out until it changes)"},
		Annotation{Name: "auth-method", Scope: ScopeLocation, Default: "the client's method",
			Grammar:    "GET, HEAD, POST, PUT, PATCH, DELETE, CONNECT, OPTIONS or TRACE; also sends X-Original-URI and X-Scheme",
			Difference: "any other value fails closed"},
		Annotation{Name: "auth-signin", Scope: ScopeLocation, Default: "none: a 401 is answered as is",
			Grammar: "an absolute http or https URL as for auth-url, with the same variables anywhere auth-url allows them " +
				"(also $scheme, $server_port and a literal port with any host), such as https://$host/oauth2/start?rd=$escaped_request_uri; " +
				"a 401 from the service becomes a 302 to it, with the original URL " +
				"(scheme, Host and request URI, URL-encoded) added in the auth-signin-redirect-param query parameter unless the URL has it already",
			Difference: "variables as for auth-url; $escaped_request_uri needs the Lua data plane (without it the sign-in is dropped " +
				"with a Problem), and so does the added original URL (without it the redirect carries none); the whole original URL " +
				"is URL-encoded; an invalid value is dropped with a Problem and the 401 is answered"},
		Annotation{Name: "auth-signin-redirect-param", Scope: ScopeLocation, Default: "rd",
			Grammar: "1 to 64 letters, digits, -, _ or ."},
		Annotation{Name: "auth-response-headers", Scope: ScopeLocation, Default: "none",
			Grammar: "header names (RFC 9110 tokens) separated by commas, at most 32: each is copied from the service's 2xx answer " +
				"to the proxied request, replacing what the client sent (absent in the answer: not sent)",
			Difference: "an invalid list fails closed (the backend could trust headers the client forged)"},
		Annotation{Name: "auth-request-redirect", Scope: ScopeLocation, Default: "the request URI",
			Grammar: "a header value without $ (visible ASCII and spaces), sent to the service as X-Auth-Request-Redirect"},
		Annotation{Name: "auth-cache-key", Scope: ScopeLocation, Default: "none: answers are not cached",
			Grammar: "up to 256 bytes of literals (letters, digits, -_.:/|,=@+) and at least one variable among $remote_user, " +
				"$http_authorization, $host, $request_uri, $http_<name> and $cookie_<name>, one of them sent by the client ($http_... or $cookie_...); answers of the service are cached per key " +
				"and per location in one zone of 10 MiB of keys and 128 MiB on disk, per nginx instance",
			Difference: "other variables, and keys without a variable the client sends (such as $remote_user alone), are refused and caching stays off"},
		Annotation{Name: "auth-cache-duration", Scope: ScopeLocation, Default: "200 202 401 5m",
			Grammar: "comma-separated entries of status codes and one duration (ms, s, m or h, at most 24h), as nginx's proxy_cache_valid; " +
				"only used with auth-cache-key",
			Difference: "units d, w, M and y are refused"},
		Annotation{Name: "auth-always-set-cookie", Scope: ScopeLocation, Default: "false",
			Grammar: "a boolean; true sends the service's Set-Cookie on every answer, not only 2xx and 3xx"},
		Annotation{Name: "auth-proxy-set-headers", Names: model.KindConfigMap, Scope: ScopeLocation, Default: "none",
			Grammar: "namespace/name of a ConfigMap in the Ingress's own namespace, or just its name: each key is a header name " +
				"(letters, digits, - _ .), each value its value (no $, quotes, backslashes or braces), sent to the service; " +
				"the headers the subrequest sets itself (Host, X-Original-URL, X-Auth-Request-Redirect ...) cannot be replaced",
			Difference: "a missing ConfigMap or an entry outside the grammar fails closed (the service may decide on these headers); " +
				"values are sent as written, never expanded as nginx variables"},
		Annotation{Name: "enable-global-auth", Scope: ScopeLocation, Default: "true",
			Grammar:    "a boolean; false exempts the Ingress's paths from the ConfigMap's global-auth-url",
			Difference: "an invalid value keeps global authentication on"},
	}, authKeepaliveRows...)...),
	Parse: parseExtAuth,
}

// extAuthCompanions only apply with auth-url.
var extAuthCompanions = append([]string{"auth-method", "auth-signin", "auth-signin-redirect-param", "auth-response-headers",
	"auth-request-redirect", "auth-cache-key", "auth-cache-duration", "auth-always-set-cookie", "auth-proxy-set-headers"},
	authKeepaliveNames...)

func parseExtAuth(r *Reader, res *Result) {
	if on, ok := Parse(r, "enable-global-auth", model.ParseBool); ok && !on {
		res.NoGlobalAuth = true
	}
	v, ok := r.Get("auth-url")
	if !ok {
		for _, n := range extAuthCompanions {
			if r.Has(n) {
				r.Ignored(n, "only applies with auth-url")
			}
		}
		return
	}
	a := &model.ExternalAuth{RedirectParam: "rd"}
	closed := false
	var err error
	if a.URL, a.Host, err = model.ParseAuthURL(v); err != nil {
		r.FailClosed("auth-url", v, err)
		closed = true
	}
	if m, ok := r.Get("auth-method"); ok {
		if a.Method, err = model.ParseAuthMethod(m); err != nil {
			r.FailClosed("auth-method", m, err)
			closed = true
		}
	}
	if h, ok := r.Get("auth-response-headers"); ok {
		if a.ResponseHeaders, err = model.ParseAuthResponseHeaders(h); err != nil {
			r.FailClosed("auth-response-headers", h, err)
			closed = true
		}
	}
	if v, ok := r.Get("auth-proxy-set-headers"); ok {
		if n, err := parseSameNamespace(v, r.ref.Namespace, "configmap"); err != nil {
			r.FailClosed("auth-proxy-set-headers", v, err)
			closed = true
		} else {
			res.AuthProxySetHeaders = &n
		}
	}
	if closed {
		res.AuthProxySetHeaders = nil
		return
	}
	Set(r, "auth-signin", &a.SigninURL, model.ParseSigninURL)
	Set(r, "auth-signin-redirect-param", &a.RedirectParam, model.ParseQueryParam)
	Set(r, "auth-request-redirect", &a.RequestRedirect, model.ParseHeaderValue)
	Set(r, "auth-always-set-cookie", &a.AlwaysSetCookie, model.ParseBool)
	if key, ok := Parse(r, "auth-cache-key", model.ParseAuthCacheKey); ok {
		c := &model.AuthCache{Key: key, Valid: model.DefaultAuthCacheValid}
		Set(r, "auth-cache-duration", &c.Valid, model.ParseAuthCacheDuration)
		a.Cache = c
	} else if !r.Has("auth-cache-key") {
		if _, ok := Parse(r, "auth-cache-duration", model.ParseAuthCacheDuration); ok {
			r.Ignored("auth-cache-duration", "only applies with auth-cache-key")
		}
	}
	parseAuthKeepalive(r, a)
	res.Location.ExternalAuth = a
}
