package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// External authentication: a location with model.ExternalAuth asks an
// internal location of its server with auth_request before proxying; that
// location proxies a body-less copy of the request to the service's URL.
// The service's headers come back through auth_request_set variables,
// and a 401 can become a redirect to the sign-in URL from a named
// location. Every string printed here is quoted or of a fixed grammar:
// the URLs through Quote, the variables named only by constants or by
// model.AuthCacheVar.

// authUse is what a protected location prints.
type authUse struct {
	// URI is the quoted URI of the internal location.
	URI             string
	AlwaysSetCookie bool
	// Headers copy the service's answer headers into variables.
	Headers []authHeaderView
	// Signin is the named location that redirects a 401, or "".
	Signin string
}

// authHeaderView is auth_request_set $Var $upstream_http_Upstream.
type authHeaderView struct{ Var, Upstream string }

// authLocationView is the internal location asking the service.
type authLocationView struct {
	// URI, PassURL, Host and RequestRedirect are quoted; Method is a
	// fixed token; "" means not set.
	URI, PassURL, Host, Method, RequestRedirect string
	HTTPS                                       bool
	// Upstream, when above 0, is 1 + the index of the server's
	// AuthUpstreams the subrequest goes through, Keepalive whether it
	// keeps connections; SSLName is the quoted (or $host) TLS server
	// name (extauth_keepalive.go).
	Upstream  int    `json:",omitempty"`
	Keepalive bool   `json:",omitempty"`
	SSLName   string `json:",omitempty"`
	// Loop sends the subrequest back to this nginx (the URL's host is
	// $host), marked so that it cannot loop again; EscapedURI computes
	// $causeway_escaped_request_uri (extauth_template.go).
	Loop       bool `json:",omitempty"`
	EscapedURI bool `json:",omitempty"`
	// AuthBackend is the quoted backend key of a Service in the Lua data
	// plane; SSL the TLS client towards it; Return 503 a Service without
	// endpoints in plain mode (extauth_backend.go).
	AuthBackend string   `json:",omitempty"`
	SSL         *sslView `json:",omitempty"`
	Return      int      `json:",omitempty"`
	// CacheKey is the quoted proxy_cache_key; CacheValid are
	// proxy_cache_valid's arguments.
	CacheKey   string
	CacheValid []string
	// Headers are auth-proxy-set-headers', quoted.
	Headers []headerLine
	// SnippetSet, SnippetHeaders and SnippetHide are auth-snippet's set,
	// proxy_set_header and proxy_hide_header lines, quoted.
	SnippetSet     []stepView
	SnippetHeaders []addHeaderView
	SnippetHide    []string
	// Trace sends the request's trace context (tracing.go): the
	// subrequest shares the request's variables, so its parent is the
	// request's span.
	Trace bool `json:",omitempty"`
}

// signinLocationView is the named location answering a 401 with a
// redirect: Return is the quoted URL, ending in the original URL's
// variable when RD.
type signinLocationView struct {
	Name, Return string
	RD           bool
	// EscapedURI computes $causeway_escaped_request_uri, which the URL
	// names (extauth_template.go).
	EscapedURI bool `json:",omitempty"`
	Headers    []headerLine
}

// authCacheZone names the http level's proxy_cache_path zone.
const authCacheZone = "causeway_auth"

// authCacheView is the http level's cache of the services' answers.
type authCacheView struct {
	Path, Zone, KeysSize, MaxSize, Inactive string
}

// planGlobalAuth names global-auth-url's host and port in an upstream of
// nginx.conf that nothing uses: nginx resolves it there, before any
// server file, so a name it cannot resolve is blamed on the ConfigMap
// (whose exclusion then closes every path, see build), not on whichever
// Ingress's server file nginx read first.
func (v *mainView) planGlobalAuth(m *model.Model) error {
	a := m.Config.GlobalAuth
	if a == nil {
		return nil
	}
	if u, _, err := model.ParseAuthURL(a.URL); err != nil || u != a.URL {
		return fmt.Errorf("global auth URL %q is not one ParseAuthURL returns", a.URL)
	}
	if strings.Contains(a.URL, "$") {
		// $host names no host to resolve; a literal host is resolved
		// here as for a URL without variables.
		if t, err := model.AuthURLTemplate(a.URL); err == nil && !t.SelfHost() {
			v.GlobalAuthServer = t.Host + ":" + map[string]string{"http": "80", "https": "443"}[t.Scheme]
			if t.Port != 0 {
				v.GlobalAuthServer = fmt.Sprintf("%s:%d", t.Host, t.Port)
			}
		}
		return nil
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		return err
	}
	v.GlobalAuthServer = authHostPort(u)
	return nil
}

// planAuthCache returns the cache zone when a location caches answers.
func (v *mainView) planAuthCache(m *model.Model) error {
	used := false
	for _, s := range m.Servers {
		for _, l := range s.Locations {
			if l.Policy != nil && l.Policy.ExternalAuth != nil && l.Policy.ExternalAuth.Cache != nil {
				used = true
			}
		}
	}
	if !used {
		return nil
	}
	p, err := v.TempDir("auth-cache")
	if err != nil {
		return err
	}
	c := &authCacheView{Path: p, Zone: authCacheZone}
	if c.KeysSize, err = nginxSize(model.AuthCacheKeysZone); err != nil {
		return err
	}
	if c.MaxSize, err = nginxSize(model.AuthCacheMaxSize); err != nil {
		return err
	}
	if c.Inactive, err = nginxTime(model.AuthCacheInactive); err != nil {
		return err
	}
	v.AuthCache = c
	return nil
}

// planExtAuth adds the internal location (and the sign-in location) of a
// protected location. A Prefix path prints two nginx locations for one
// model location; they share the internal one.
func (sp *serverPlan) planExtAuth(l *model.Location) (*authUse, error) {
	if u, ok := sp.auths[l]; ok {
		return u, nil
	}
	a := l.Policy.ExternalAuth
	path := sp.freeURI("/_causeway_auth_", &sp.authNext)
	lv := authLocationView{URI: `"` + path + `"`}
	if err := sp.planAuthTarget(&lv, a); err != nil {
		return nil, err
	}
	var err error
	if a.Method != "" {
		if _, err := model.ParseAuthMethod(a.Method); err != nil {
			return nil, err
		}
		lv.Method = a.Method
	}
	if a.RequestRedirect != "" {
		if lv.RequestRedirect, err = Quote(string(a.RequestRedirect)); err != nil {
			return nil, err
		}
	}
	for _, h := range a.ProxySetHeaders {
		if slices.ContainsFunc(model.AuthSubrequestHeaders, func(n string) bool { return strings.EqualFold(n, h.Name) }) {
			return nil, fmt.Errorf("auth proxy header %q is set by the subrequest itself", h.Name)
		}
	}
	if lv.Headers, err = headerLines(a.ProxySetHeaders); err != nil {
		return nil, err
	}
	if err := lv.planSnippet(a.Snippet); err != nil {
		return nil, err
	}
	if c := a.Cache; c != nil {
		if lv.CacheKey, err = authCacheKey(sp.srv.Host, l, a, c.Key); err != nil {
			return nil, err
		}
		for _, v := range c.Valid {
			if lv.CacheValid = append(lv.CacheValid, ""); len(v.Codes) > 0 {
				lv.CacheValid[len(lv.CacheValid)-1] = joinCodes(v.Codes) + " "
			}
			t, err := nginxTime(v.Duration)
			if err != nil {
				return nil, err
			}
			lv.CacheValid[len(lv.CacheValid)-1] += t
		}
	}
	lv.Trace = sp.rc.tracing
	sp.v.AuthLocations = append(sp.v.AuthLocations, lv)
	u := &authUse{URI: lv.URI, AlwaysSetCookie: a.AlwaysSetCookie}
	for i, h := range a.ResponseHeaders {
		if !model.AuthHeaderName(h) {
			return nil, fmt.Errorf("auth response header %q is not a token", h)
		}
		u.Headers = append(u.Headers, authHeaderView{
			Var:      "causeway_auth_" + strconv.Itoa(sp.authNext-1) + "_" + strconv.Itoa(i),
			Upstream: strings.ToLower(strings.ReplaceAll(h, "-", "_")),
		})
	}
	if a.SigninURI != "" {
		if u.Signin, err = signinURI(a); err != nil {
			return nil, err
		}
	}
	if a.SigninURL != "" {
		s, err := sp.signinLocation(a, sp.headerScope(l.Policy))
		if err != nil {
			return nil, err
		}
		u.Signin = s.Name
		sp.v.SigninLocations = append(sp.v.SigninLocations, s)
	}
	sp.auths[l] = u
	return u, nil
}

// planSnippet prints auth-snippet: only what its allowlist parses (set,
// proxy_set_header, proxy_hide_header), checked again here, and never a
// header the subrequest sets itself.
func (lv *authLocationView) planSnippet(sn *model.Snippet) error {
	if sn == nil {
		return nil
	}
	if len(sn.AddHeaders) > 0 || len(sn.MoreSet) > 0 || len(sn.MoreClear) > 0 || sn.Expires != nil {
		return fmt.Errorf("auth snippet: only set, proxy_set_header and proxy_hide_header apply to the subrequest")
	}
	for _, st := range sn.Steps {
		if st.Set == nil {
			return fmt.Errorf("auth snippet: only set runs in the subrequest")
		}
	}
	var err error
	if lv.SnippetSet, err = planSteps(sn.Steps); err != nil {
		return err
	}
	for _, h := range sn.ProxySetHeaders {
		if slices.ContainsFunc(model.AuthSubrequestHeaders, func(n string) bool { return strings.EqualFold(n, h.Name) }) {
			return fmt.Errorf("auth snippet: header %q is set by the subrequest itself", h.Name)
		}
	}
	if lv.SnippetHeaders, err = templateHeaders(sn.ProxySetHeaders); err != nil {
		return err
	}
	for _, n := range sn.ProxyHideHeaders {
		if !headerName(n) {
			return fmt.Errorf("auth snippet: hidden header %q", n)
		}
		lv.SnippetHide = append(lv.SnippetHide, `"`+n+`"`)
	}
	return nil
}

// signinLocation redirects to the sign-in URL with the original URL in
// the redirect parameter, unless the URL already has that parameter, as
// ingress-nginx does.
func (sp *serverPlan) signinLocation(a *model.ExternalAuth, scope headerScope) (signinLocationView, error) {
	s := signinLocationView{Name: "@causeway_signin_" + strconv.Itoa(sp.authNext-1)}
	if _, err := model.ParseQueryParam(a.RedirectParam); err != nil {
		return s, err
	}
	s.Headers = sp.inherited(scope, nil, true) // it adds Set-Cookie
	if strings.Contains(a.SigninURL, "$") {
		return s, sp.signinTemplate(&s, a)
	}
	if v, err := model.ParseSigninURL(a.SigninURL); err != nil || v != a.SigninURL {
		return s, fmt.Errorf("sign-in URL %q is not one ParseSigninURL returns", a.SigninURL)
	}
	u, err := url.Parse(a.SigninURL)
	if err != nil {
		return s, err
	}
	target := a.SigninURL
	// Without Lua there is no way to URL-encode the original URL: the
	// redirect then carries none.
	if sp.rc.lua && !u.Query().Has(a.RedirectParam) {
		sep := "?"
		if u.RawQuery != "" {
			sep = "&"
		} else {
			target = strings.TrimSuffix(target, "?")
		}
		target += sep + a.RedirectParam + "="
		s.RD = true
	}
	if s.Return, err = Quote(target); err != nil {
		return s, err
	}
	if s.RD {
		// The variable goes inside the quotes: Quote refused any '$' of
		// the URL, so it is the only one.
		s.Return = strings.TrimSuffix(s.Return, `"`) + `${causeway_auth_rd}"`
	}
	return s, nil
}

// authCacheKey prints proxy_cache_key: an identity of the protected
// location (its server, match and service), then the key's literals and
// allowlisted variables, braced so a literal cannot extend a name.
func authCacheKey(host string, l *model.Location, a *model.ExternalAuth, parts []model.AuthCacheKeyPart) (string, error) {
	ident := host + "\x00" + string(l.Match.Type) + "\x00" + l.Match.Path + "\x00" + a.Method + "\x00" + a.URL
	if a.Backend != "" {
		ident += "\x00" + a.Backend + "\x00" + a.URI
	}
	id := sha256.Sum256([]byte(ident))
	var b strings.Builder
	b.WriteString(`"` + hex.EncodeToString(id[:8]) + "|")
	for _, p := range parts {
		if p.Var != "" {
			if !model.AuthCacheVar(p.Var) {
				return "", fmt.Errorf("auth cache key variable %q is not allowed", p.Var)
			}
			b.WriteString("${" + p.Var + "}")
			continue
		}
		q, err := Quote(p.Literal)
		if err != nil {
			return "", err
		}
		if q != `"`+p.Literal+`"` || strings.ContainsAny(p.Literal, "{} \t") {
			return "", fmt.Errorf("auth cache key literal %q must not need quoting", p.Literal)
		}
		b.WriteString(p.Literal)
	}
	b.WriteByte('"')
	return b.String(), nil
}

func joinCodes(codes []int) string {
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, " ")
}
