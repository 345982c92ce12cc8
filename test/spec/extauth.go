package spec

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// External authentication rows. Their auth-url names the table's own
// authentication service through AuthURL; Manifests puts the address of
// a running one (the endpoint named AuthService) in its place, and Eval
// decides as AuthDecision does, so the rule lives here once for both
// tiers.

// AuthService names the authentication service's endpoint in the
// endpoints given to Manifests.
const AuthService = "spec-auth-service"

// authPlaceholder is the host of AuthURL until Manifests replaces it.
const authPlaceholder = "spec-auth-service.invalid"

// AuthURL is an auth-url pointing at the table's service.
func AuthURL(path string) string { return "http://" + authPlaceholder + path }

// UsesAuthService reports whether a row needs the service running: an
// annotation names AuthURL, or a path AuthService itself.
func (c AnnotationCase) UsesAuthService() bool {
	if slices.Contains(c.Services(), AuthService) {
		return true
	}
	for _, ing := range c.Ingresses {
		for _, v := range ing.Annotations {
			if strings.Contains(v, authPlaceholder) {
				return true
			}
		}
	}
	return false
}

// withAuthService puts the service's address in place of AuthURL's host.
func withAuthService(v string, endpoints map[string]Endpoint) string {
	if e, ok := endpoints[AuthService]; ok {
		return strings.ReplaceAll(v, authPlaceholder, net.JoinHostPort(e.IP, strconv.Itoa(e.Port)))
	}
	return v
}

// AuthDecision is the service's rule: "Bearer good" gets 200 with
// X-Auth-User alice and X-Auth-Groups staff, "Bearer banned" 403, anything
// else 401.
func AuthDecision(authorization string) (int, map[string]string) {
	switch authorization {
	case "Bearer good":
		return 200, map[string]string{"X-Auth-User": "alice", "X-Auth-Groups": "staff"}
	case "Bearer banned":
		return 403, nil
	}
	return 401, nil
}

// AuthHandler serves AuthDecision.
func AuthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, headers := AuthDecision(r.Header.Get("Authorization"))
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
	})
}

// externalAuth is auth_request: 0 lets the request in with the headers
// the backend gets; otherwise the answer to send.
func externalAuth(a *model.ExternalAuth, r Request, port int, out *Response) (int, map[string]string) {
	status, headers := AuthDecision(r.Header["Authorization"])
	switch {
	case status/100 == 2:
		up := map[string]string{}
		for _, h := range a.ResponseHeaders {
			if v, ok := headers[http.CanonicalHeaderKey(h)]; ok {
				up[http.CanonicalHeaderKey(h)] = v
			}
		}
		return 0, up
	case status == 401 && a.SigninURL != "":
		out.Location = a.SigninURL
		if t, err := model.ParseURLTemplate(a.SigninURL); err == nil && t.HasVars() {
			// nginx fills the variables in; the parameter is added as
			// for a literal URL where the query is known.
			out.Location = expand(t, r, port)
			if !t.QueryHas(a.RedirectParam) && !t.RequestURIInPath() {
				sep := "?"
				if t.QueryKnown() {
					sep = "&"
				}
				out.Location += sep + a.RedirectParam + "=" + escapeURI(r.Scheme+"://"+r.Host+r.Path)
			}
			return 302, nil
		}
		// The plain data plane cannot encode the original URL; the rows
		// use a sign-in URL that carries its own parameter.
		if u, err := url.Parse(a.SigninURL); err == nil && !u.Query().Has(a.RedirectParam) {
			sep := "?"
			if u.RawQuery != "" {
				sep = "&"
			}
			out.Location += sep + a.RedirectParam + "=" + url.QueryEscape("http://"+r.Host+r.Path)
		}
		return 302, nil
	case status == 401 || status == 403:
		return status, nil
	}
	return 500, nil
}

// expand is what nginx makes of a URL template for the request r that
// came in on port.
func expand(t model.URLTemplate, r Request, port int) string {
	_, query, _ := strings.Cut(r.Path, "?")
	host := strings.ToLower(r.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	val := func(name string) string {
		switch name {
		case model.URLVarHost:
			return host
		case model.URLVarBestHTTPHost:
			return r.Host
		case model.URLVarScheme:
			return r.Scheme
		case model.URLVarServerPort:
			return strconv.Itoa(port)
		case model.URLVarRequestURI:
			return r.Path
		case model.URLVarEscapedRequestURI:
			return escapeURI(r.Path)
		}
		if h, ok := strings.CutPrefix(name, "http_"); ok {
			for k, v := range r.Header {
				if strings.ReplaceAll(strings.ToLower(k), "-", "_") == h {
					return v
				}
			}
			return ""
		}
		if a, ok := strings.CutPrefix(name, "arg_"); ok {
			for kv := range strings.SplitSeq(query, "&") {
				if k, v, _ := strings.Cut(kv, "="); strings.EqualFold(k, a) {
					return v
				}
			}
		}
		return ""
	}
	var b strings.Builder
	for _, p := range t.Parts() {
		if p.Var != "" {
			b.WriteString(val(p.Var))
		} else {
			b.WriteString(p.Literal)
		}
	}
	return b.String()
}

// escapeURI encodes all but letters, digits and -._~, as the Lua data
// plane's ngx.escape_uri (and ingress-nginx's set_escape_uri) do.
func escapeURI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

var (
	extAuth = func(kv ...string) map[string]string {
		return ann(append([]string{"auth-url", AuthURL("/check")}, kv...)...)
	}
	extAuthFrom = func(path, authorization string, kv ...string) Request {
		h := ann(kv...)
		if authorization != "" {
			h["Authorization"] = authorization
		}
		return Request{Host: "ext.test", Path: path, Header: h}
	}
	extOne = func(a map[string]string) []Ingress { return one("ext.test", "/", "Prefix", "app", a) }
	closed = []string{model.ReasonInvalidAnnotation}
)

// ExtAuthTable is one row per external authentication behaviour; the
// hostile auth-url rows are CVE-2025-24514's shape.
var ExtAuthTable = []AnnotationCase{
	{Name: "external auth: a 2xx answer lets the request through with the answer's headers, not the client's",
		Ingresses: extOne(extAuth("auth-response-headers", "X-Auth-User, X-Auth-Groups")),
		Request:   extAuthFrom("/", "Bearer good", "X-Auth-User", "mallory"),
		Want:      Response{Status: 200, Service: "app", Upstream: map[string]string{"X-Auth-User": "alice", "X-Auth-Groups": "staff"}}},
	{Name: "external auth: a header not listed is not copied",
		Ingresses: extOne(extAuth("auth-response-headers", "X-Auth-Groups")),
		Request:   extAuthFrom("/", "Bearer good"),
		Want:      Response{Status: 200, Service: "app", Upstream: map[string]string{"X-Auth-Groups": "staff", "X-Auth-User": ""}}},
	{Name: "external auth: 401 reaches the client",
		Ingresses: extOne(extAuth()), Request: extAuthFrom("/", ""), Want: Response{Status: 401}},
	{Name: "external auth: 403 reaches the client",
		Ingresses: extOne(extAuth()), Request: extAuthFrom("/", "Bearer banned"), Want: Response{Status: 403}},
	{Name: "external auth: auth-signin turns a 401 into a redirect carrying the original URL",
		Ingresses: extOne(extAuth("auth-signin", "https://login.example.com/start?client=app")),
		Request:   extAuthFrom("/a/b?x=1&y=2", ""),
		Want:      Response{Status: 302, Location: "https://login.example.com/start?client=app&rd=http%3A%2F%2Fext.test%2Fa%2Fb%3Fx%3D1%26y%3D2"}},
	{Name: "external auth: auth-signin-redirect-param names the parameter",
		Ingresses: extOne(extAuth("auth-signin", "https://login.example.com/start", "auth-signin-redirect-param", "return_to")),
		Request:   extAuthFrom("/x", ""),
		Want:      Response{Status: 302, Location: "https://login.example.com/start?return_to=http%3A%2F%2Fext.test%2Fx"}},
	{Name: "external auth: a sign-in URL with the parameter is kept as written",
		Ingresses: extOne(extAuth("auth-signin", "https://login.example.com/start?rd=https://app.example.com/")),
		Request:   extAuthFrom("/x", ""),
		Want:      Response{Status: 302, Location: "https://login.example.com/start?rd=https://app.example.com/"}},
	{Name: "external auth: oauth2-proxy's sign-in template, with the escaped request URI",
		Ingresses: extOne(extAuth("auth-signin", "https://$host/oauth2/start?rd=$escaped_request_uri")),
		Request:   extAuthFrom("/a/b?x=1&y=2", ""),
		Want:      Response{Status: 302, Location: "https://ext.test/oauth2/start?rd=%2Fa%2Fb%3Fx%3D1%26y%3D2"}},
	{Name: "external auth: a sign-in template without the parameter gets the original URL added",
		Ingresses: extOne(extAuth("auth-signin", "$scheme://login.test:$server_port/start?from=$host")),
		Request:   extAuthFrom("/x?a=1", ""),
		Want:      Response{Status: 302, Location: "http://login.test:{http}/start?from=ext.test&rd=http%3A%2F%2Fext.test%2Fx%3Fa%3D1"}},
	{Name: "external auth: $host in auth-url asks this nginx's server for the host, through another Ingress's path",
		Ingresses: []Ingress{
			{Name: "web", Host: "ext.test", Paths: []Route{{"/", "Prefix", "app"}},
				Annotations: ann("auth-url", "http://$host/auth/check", "auth-response-headers", "X-Auth-User")},
			{Name: "auth", Host: "ext.test", Paths: []Route{{"/auth", "Prefix", AuthService}}},
		},
		Request: extAuthFrom("/", "Bearer good"),
		Want:    Response{Status: 200, Service: "app", Upstream: map[string]string{"X-Auth-User": "alice"}}},
	{Name: "external auth: $host in auth-url, refused by the service",
		Ingresses: []Ingress{
			{Name: "web", Host: "ext.test", Paths: []Route{{"/", "Prefix", "app"}}, Annotations: ann("auth-url", "http://$host/auth/check")},
			{Name: "auth", Host: "ext.test", Paths: []Route{{"/auth", "Prefix", AuthService}}},
		},
		Request: extAuthFrom("/", "Bearer banned"), Want: Response{Status: 403}},
	{Name: "external auth: auth-signin leaves a 403 alone",
		Ingresses: extOne(extAuth("auth-signin", "https://login.example.com/start")),
		Request:   extAuthFrom("/", "Bearer banned"), Want: Response{Status: 403}},
	{Name: "external auth: an invalid sign-in URL is dropped, the 401 stays",
		Ingresses: extOne(extAuth("auth-signin", "https://$http_x_host/oauth2/start")),
		Request:   extAuthFrom("/", ""), Want: Response{Status: 401}, Problems: closed},
	{Name: "external auth: CVE-2025-24514, a URL closing the block, fails closed",
		Ingresses: extOne(ann("auth-url", "http://a.com/#;}}}location /pwned { return 200; } #")),
		Request:   extAuthFrom("/pwned", "Bearer good"), Want: Response{Status: 503}, Problems: closed},
	{Name: "external auth: a URL with a quote and a newline fails closed",
		Ingresses: extOne(ann("auth-url", "http://a.com/\"\nproxy_pass http://evil;")),
		Request:   extAuthFrom("/", "Bearer good"), Want: Response{Status: 503}, Problems: closed},
	{Name: "external auth: a URL with a variable outside the allowlist fails closed",
		Ingresses: extOne(ann("auth-url", "http://$remote_addr/auth")),
		Request:   extAuthFrom("/", "Bearer good"), Want: Response{Status: 503}, Problems: closed},
	{Name: "external auth: a client-sent variable in the URL's path fails closed",
		Ingresses: extOne(ann("auth-url", "http://$host/$http_x_tenant/auth")),
		Request:   extAuthFrom("/", "Bearer good"), Want: Response{Status: 503}, Problems: closed},
	{Name: "external auth: an invalid auth-method fails closed",
		Ingresses: extOne(extAuth("auth-method", "GET;")),
		Request:   extAuthFrom("/", "Bearer good"), Want: Response{Status: 503}, Problems: closed},
	{Name: "external auth: an invalid auth-response-headers fails closed",
		Ingresses: extOne(extAuth("auth-response-headers", "X-User\r\nX-Evil: 1")),
		Request:   extAuthFrom("/", "Bearer good"), Want: Response{Status: 503}, Problems: closed},
}
