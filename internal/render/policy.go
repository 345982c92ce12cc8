package render

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
)

// policyView is a location's model.Policy, ready to print. Strings are
// quoted values or values of a fixed grammar (times, sizes, token lists);
// "" and nil mean "not set here".
type policyView struct {
	// Module prefixes the upstream module's directives: "proxy" or "grpc".
	Module string
	// Deny and Allow are the access module's addresses and CIDRs (printed
	// by netip, so of a fixed grammar); a non-empty Allow ends with
	// "deny all".
	Deny  []string `json:",omitempty"`
	Allow []string `json:",omitempty"`
	// SatisfyAny lets a request in that passes the access lists or basic
	// authentication.
	SatisfyAny bool `json:",omitempty"`
	// AuthRealm and AuthFile are auth_basic's quoted realm and
	// auth_basic_user_file's quoted path; "" for no basic auth.
	AuthRealm, AuthFile string `json:",omitempty"`
	// DigestRealm and DigestFile are digest authentication's quoted realm
	// and htdigest path, read by causeway.digest; "" for none.
	DigestRealm, DigestFile string `json:",omitempty"`
	// APIKey checks an API key (apikey.go); nil for none.
	APIKey *apiKeyView `json:",omitempty"`
	// ChoiceHook runs the balancer's access hook, after the checks
	// above, for a split that may answer (render/split.go) or whose
	// targets edit request headers (split_headers.go).
	ChoiceHook bool `json:",omitempty"`
	// HeaderDefaults set the variables of a split's edited request
	// headers (Name, without "$") to what the location sends without a
	// backend's edit (Value), before the access hook applies the picked
	// target's; HeaderEdits apply the one backend's without the Lua
	// balancer (split_headers.go).
	HeaderDefaults []headerLine `json:",omitempty"`
	HeaderEdits    []stepView   `json:",omitempty"`
	// ExtAuth asks an authentication service first (extauth.go).
	ExtAuth      *authUse `json:",omitempty"`
	AccessLogOff bool
	CORS         *corsView
	// RewriteRegex and RewriteTarget are the quoted arguments of
	// "rewrite ... break".
	RewriteRegex, RewriteTarget string
	Mirror                      *mirrorUse
	// ErrorPages send intercepted upstream statuses to named locations.
	ErrorPages []errorPageView
	// ResponsePages replace responses of some statuses; InterceptErrors
	// applies them to the backend's responses too (responsepages.go).
	ResponsePages   []responsePageView `json:",omitempty"`
	InterceptErrors bool               `json:",omitempty"`
	// Headers, when set, repeats the request headers of the http level
	// here: nginx inherits *_set_header only into levels that set none.
	Headers                                  *headersView
	ConnectTimeout, SendTimeout, ReadTimeout string
	RequestBuffering, ResponseBuffering      *bool
	// Cache is a cache Policy's proxy_cache lines (cache.go).
	Cache                      *cacheView
	BodySize, ClientBodyBuffer string
	// Buffers is proxy_buffers' count; BufferSize its size and
	// proxy_buffer_size; BusyBuffers is set where nginx's default would be
	// too large for the buffers.
	Buffers                 int
	BufferSize, BusyBuffers string
	MaxTempFile             string
	NextUpstream            string
	NextUpstreamTimeout     string
	NextUpstreamTries       int
	// Tries, set for a Gateway API retry (model.RouteRetry) on the Lua
	// balancer, is the number of tries it grants the request, an
	// endpoint already tried included ($causeway_tries); omitted from
	// the shape when 0, so that shared servers keep their names.
	Tries       int `json:",omitempty"`
	HTTPVersion string
	// CookieDomain, CookiePath and RedirectRewrite are proxy_cookie_domain,
	// proxy_cookie_path and proxy_redirect.
	CookieDomain, CookiePath, RedirectRewrite *replaceView
	SSL                                       *sslView
	// NoSessionReuse turns TLS session reuse towards the backend off. All
	// locations share the one Lua-balanced upstream, whose cached session
	// nginx would resume for another location: one without the client
	// certificate, or with other verification settings, would then ride
	// on a session that was authenticated for someone else, and a resumed
	// session skips the certificate check.
	NoSessionReuse  bool
	ResponseHeaders []headerLine
	// PassHeaders and IgnoreHeaders are the quoted names of
	// *_pass_header and *_ignore_headers; NoRequestHeaders turns
	// *_pass_request_headers off (render/proxyheaders.go).
	PassHeaders, IgnoreHeaders []string `json:",omitempty"`
	NoRequestHeaders           bool     `json:",omitempty"`
	// Limits are the location's rate and connection limits (limits.go);
	// LimitRate and LimitRateAfter are sizes.
	Limits                    *locationLimits
	LimitRate, LimitRateAfter string

	// ModSecurity runs the web application firewall (modsecurity.go).
	ModSecurity *modsecView `json:",omitempty"`

	// --- snippets ---

	// Snippet is what the location prints of its own and its server's
	// snippets (snippet.go); nil for none.
	Snippet *snippetView `json:",omitempty"`
}

// headersView is the request header block of a location (see
// templates/server.conf.tmpl, "headers").
type headersView struct {
	Module string
	// GRPC leaves out Connection and Upgrade, which HTTP/2 has not.
	GRPC bool
	// Host is the quoted Host header, or "" for the request's host;
	// ProxyHost sends the proxied URL's host instead.
	Host      string
	ProxyHost bool
	// ForwardedPrefix is the quoted X-Forwarded-Prefix, or "".
	ForwardedPrefix string
	// Custom are proxy-set-headers' headers.
	Custom []headerLine
	// ClientInfo sends the client certificate's verification result,
	// subject and issuer; ClientCert the certificate itself (auth-tls-*).
	ClientInfo bool `json:",omitempty"`
	ClientCert bool `json:",omitempty"`
	// TraceParent and TraceState are the values of traceparent and
	// tracestate while some location is traced, "" otherwise (tracing.go).
	TraceParent string `json:",omitempty"`
	TraceState  string `json:",omitempty"`
}

// Keeps reports whether the fixed line of header name is sent: a custom
// line of the same name (a proxy-set-headers header, a snippet's or a
// Gateway filter's) replaces it, as nginx would otherwise send both.
func (h headersView) Keeps(name string) bool {
	for _, c := range h.Custom {
		if strings.EqualFold(strings.Trim(c.Name, `"`), name) {
			return false
		}
	}
	return true
}

type replaceView struct {
	Off      bool
	From, To string
}

type headerLine struct{ Name, Value string }

// sslView is the TLS client towards a backend.
type sslView struct {
	Verify      bool
	VerifyDepth int
	// Name and Ciphers are quoted; Protocols is a list of fixed tokens.
	Name       string
	ServerName bool
	Protocols  string
	Ciphers    string
	// Cert is the quoted file holding the client certificate and key;
	// Trusted the quoted CA bundle file.
	Cert, Trusted string
}

// tlsUpstream names the variant of an upstream that TLS backends use: the
// same peers, without keepalive. A pooled TLS connection carries the
// identity and verification of the location that opened it (its client
// certificate, its CA); reused by a location with other TLS settings, the
// backend would see the wrong client and an unverified backend would be
// trusted. Every TLS request therefore opens (and verifies) its own
// connection; NoSessionReuse keeps it from resuming another's session.
func tlsUpstream(name string) string {
	if name == balancer.UpstreamName || strings.HasPrefix(name, balancer.UpstreamName+"_") {
		return balancer.UpstreamTLSName // the Lua-balanced ones, whatever their pool
	}
	return name + "_tls"
}

// protocol returns the module and URL scheme for a backend protocol.
func protocol(p model.BackendProtocol) (module, scheme string, err error) {
	switch p {
	case "", model.ProtocolHTTP:
		return "proxy", "http", nil
	case model.ProtocolHTTPS:
		return "proxy", "https", nil
	case model.ProtocolGRPC:
		return "grpc", "grpc", nil
	case model.ProtocolGRPCS:
		return "grpc", "grpcs", nil
	}
	return "", "", fmt.Errorf("backend protocol %q", p)
}

// responseHeaders are the add_header lines of a location planned as v,
// under pol, whose own response headers are own: those, then, since any
// add_header of a location stops nginx inheriting the server's and the
// http level's, the inherited ones that neither own nor a snippet sets.
// The external authentication service's Set-Cookie is an add_header too
// (extauth.go).
func (sp *serverPlan) responseHeaders(v *policyView, pol *model.Policy, own []model.Header) ([]headerLine, error) {
	lines, err := headerLines(own)
	if err != nil {
		return nil, err
	}
	srvSnippet, ownSnippet := sp.headerSnippets(pol)
	adds := len(lines) > 0 || v.CORS != nil || v.ExtAuth != nil || v.Snippet != nil && len(v.Snippet.AddHeaders) > 0
	return append(lines, sp.inherited(sp.headerScope(pol), slices.Concat(own, snippetHeaders(srvSnippet, ownSnippet)), adds)...), nil
}

// planPolicy prints l.Policy into lv. A location that does not proxy
// (a return, a redirect, a backend without endpoints in plain mode) keeps
// only what applies to its own answers: the access log, CORS and response
// headers.
func (sp *serverPlan) planPolicy(lv *locationView, l *model.Location) error {
	pol := l.Policy
	if pol == nil {
		// Unless snippets or add-header-inherit give it something to do.
		if srv, own := sp.snippets(nil); srv == nil && own == nil && sp.headerScope(nil).http {
			return nil
		}
		cp := *l
		cp.Policy = &model.Policy{}
		l, pol = &cp, cp.Policy
	}
	module, scheme, err := protocol(pol.Protocol)
	if err != nil {
		return err
	}
	v := &policyView{Module: module, NoSessionReuse: pol.Protocol.TLS()}
	lv.Policy = v
	if a := pol.Access; a != nil && len(a.Deny)+len(a.Allow) > 0 {
		// nginx inherits the http level's deny lines (block-cidrs) only
		// into locations without any of their own.
		v.Deny = accessLines(append(slices.Clip(sp.rc.m.Config.BlockCIDRs), a.Deny...))
		v.Allow = accessLines(a.Allow)
	}
	v.SatisfyAny = pol.Satisfy == model.SatisfyAny
	if ms := pol.ModSecurity; ms != nil {
		if v.ModSecurity, err = sp.rc.waf.location(ms, sp.rc.p.StateDir); err != nil {
			return err
		}
	}
	if a := pol.BasicAuth; a != nil {
		if err := sp.planBasicAuth(v, a); err != nil {
			return err
		}
	}
	if a := pol.APIKey; a != nil {
		if err := sp.planAPIKey(v, a); err != nil {
			return err
		}
	}
	if pol.ExternalAuth != nil {
		if v.ExtAuth, err = sp.planExtAuth(l); err != nil {
			return err
		}
	}
	v.AccessLogOff = pol.AccessLog != nil && !*pol.AccessLog
	if pol.CORS != nil {
		if v.CORS, err = sp.planCORS(pol.CORS); err != nil {
			return err
		}
	}
	srvSnippet, ownSnippet := sp.headerSnippets(pol)
	if v.Snippet, err = planSnippet(srvSnippet, ownSnippet, sp.hidden); err != nil {
		return err
	}
	if v.ResponseHeaders, err = sp.responseHeaders(v, pol, pol.ResponseHeaders); err != nil {
		return err
	}
	if len(pol.ResponsePages) > 0 {
		if err := sp.planResponsePages(v, lv, l); err != nil {
			return err
		}
	}
	if lv.Pass == "" {
		return nil
	}
	lv.Pass = module + "_pass"
	upstream := strings.TrimPrefix(lv.PassURL, "http://")
	if pol.Protocol.TLS() {
		upstream = tlsUpstream(upstream)
	}
	lv.PassURL = scheme + "://" + upstream
	return sp.planProxy(v, lv, l)
}

// accessLines prints prefixes for allow and deny: a single address
// without its /32 or /128.
func accessLines(ps []netip.Prefix) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		p = p.Masked()
		if p.IsSingleIP() {
			out[i] = p.Addr().String()
		} else {
			out[i] = p.String()
		}
	}
	return out
}

// BlockCIDRs are the http level's deny lines (block-cidrs).
func (v *mainView) BlockCIDRs() []string { return accessLines(v.Config.BlockCIDRs) }

// blockMapView is a map from a request header to 1 when a block list
// (block-user-agents, block-referers) matches it; every server answers
// 403 then (templates/server.conf.tmpl, "block").
type blockMapView struct {
	Header, Variable string
	// Keys are quoted map keys: strings, "~regex" or "~*regex".
	Keys []string
}

// BlockMaps prepares the header block lists' maps.
func (v *mainView) BlockMaps() ([]blockMapView, error) {
	return blockMaps(v.Config)
}

func blockMaps(c model.Config) ([]blockMapView, error) {
	var out []blockMapView
	for _, l := range []struct {
		header, variable string
		list             []model.HeaderMatch
	}{{"$http_user_agent", "$causeway_block_user_agent", c.BlockUserAgents}, {"$http_referer", "$causeway_block_referer", c.BlockReferers}} {
		if len(l.list) == 0 {
			continue
		}
		m := blockMapView{Header: l.header, Variable: l.variable}
		for _, e := range l.list {
			key, err := blockKey(e)
			if err != nil {
				return nil, err
			}
			m.Keys = append(m.Keys, key)
		}
		out = append(out, m)
	}
	return out, nil
}

// blockKey quotes a map key. A string that nginx's map would read as a
// regex or a parameter never gets here (model.ParseHeaderMatches), and is
// checked again.
func blockKey(e model.HeaderMatch) (string, error) {
	if !e.Regex {
		if e.Value == "" || e.Value[0] == '~' || e.Value[0] == '\\' || strings.EqualFold(e.Value, "default") || strings.EqualFold(e.Value, "include") {
			return "", fmt.Errorf("block list string %q", e.Value)
		}
		return Quote(e.Value)
	}
	if _, err := model.ParseHeaderRegex(e.Value); err != nil {
		return "", err
	}
	if e.Fold {
		return Quote("~*" + e.Value)
	}
	return Quote("~" + e.Value)
}

// planProxy prints the settings of a location that proxies.
func (sp *serverPlan) planProxy(v *policyView, lv *locationView, l *model.Location) error {
	pol := l.Policy
	var err error
	if pol.Rewrite != nil {
		if err := sp.planRewrite(v, l); err != nil {
			return err
		}
	}
	srvSnippet, ownSnippet := sp.snippets(pol)
	joined := model.Join(srvSnippet, ownSnippet)
	setHeaders := joined != nil && len(joined.ProxySetHeaders) > 0
	if pol.UpstreamHost != nil || v.RewriteTarget != "" && pol.XForwardedPrefix != nil || v.Module == "grpc" || setHeaders {
		v.Headers = sp.clientHeaders(&headersView{Module: v.Module, GRPC: v.Module == "grpc", Custom: sp.rc.setHeaders})
		if pol.UpstreamHost != nil {
			if v.Headers.Host, err = Quote(string(*pol.UpstreamHost)); err != nil {
				return err
			}
		}
		if v.RewriteTarget != "" && pol.XForwardedPrefix != nil {
			if v.Headers.ForwardedPrefix, err = Quote(string(*pol.XForwardedPrefix)); err != nil {
				return err
			}
		}
		if err := snippetSetHeaders(v.Headers, srvSnippet, ownSnippet); err != nil {
			return err
		}
	}
	if u := v.ExtAuth; u != nil && len(u.Headers) > 0 {
		// The service's answer headers replace what the client sent.
		if v.Headers == nil {
			v.Headers = sp.clientHeaders(&headersView{Module: v.Module, GRPC: v.Module == "grpc", Custom: sp.rc.setHeaders})
		}
		h := *v.Headers
		h.Custom = slices.Clip(h.Custom)
		for i, a := range u.Headers {
			h.Custom = append(h.Custom, headerLine{Name: `"` + l.Policy.ExternalAuth.ResponseHeaders[i] + `"`, Value: "$" + a.Var})
		}
		v.Headers = &h
	}
	if err := planProxyHeaders(v, pol); err != nil {
		return err
	}
	if err := sp.planTimeouts(v, pol.Timeouts); err != nil {
		return err
	}
	if err := planBuffering(v, pol.Buffering); err != nil {
		return err
	}
	if err := planCache(v, pol.Cache); err != nil {
		return err
	}
	if err := planRetry(v, pol.Retry, sp.rc.p.Dynamic != nil); err != nil {
		return err
	}
	switch pol.HTTPVersion {
	case "", "1.0", "1.1":
		v.HTTPVersion = pol.HTTPVersion
	default:
		return fmt.Errorf("HTTP version %q", pol.HTTPVersion)
	}
	for _, r := range []struct {
		in  *model.Replace
		out **replaceView
	}{{pol.CookieDomain, &v.CookieDomain}, {pol.CookiePath, &v.CookiePath}, {pol.RedirectRewrite, &v.RedirectRewrite}} {
		if *r.out, err = planReplace(r.in); err != nil {
			return err
		}
	}
	if pol.UpstreamTLS != nil {
		if v.SSL, err = sp.planSSL(pol.UpstreamTLS); err != nil {
			return err
		}
	}
	if pol.Errors != nil {
		if err := sp.planErrors(v, lv, l); err != nil {
			return err
		}
	}
	if len(pol.Mirrors) > 0 {
		if v.Mirror, err = sp.planMirrors(v, pol.Mirrors); err != nil {
			return err
		}
	}
	if pol.Limits != nil {
		if err := planLimits(v, l); err != nil {
			return err
		}
	}
	return nil
}

// planRewrite replaces the whole URI when the location's regex matches,
// as ingress-nginx's rewrite-target does: $1..$9 name the regex's groups.
func (sp *serverPlan) planRewrite(v *policyView, l *model.Location) error {
	re, err := sp.rc.matchRegex(l.Match)
	if err != nil {
		return err
	}
	target := l.Policy.Rewrite.Target
	if l.Policy.Rewrite.Prefix {
		// The rest of the path after the location's, as the next group.
		n := model.RegexGroups(re) + 1
		if strings.ContainsAny(target, "?$") || n > 9 || l.Policy.Rewrite.Strip && target != "/" {
			return fmt.Errorf("prefix rewrite target %q after %d groups", target, n-1)
		}
		if l.Policy.Rewrite.Strip {
			// The separating "/" is the target's, not the rest's.
			re += "/?"
		}
		target += "$" + strconv.Itoa(n)
		re += "(.*)"
	}
	if v.RewriteRegex, err = Quote("(?i)^" + re); err != nil {
		return err
	}
	v.RewriteTarget, err = rewriteReplacement(target)
	return err
}

// planTimeouts prints the timeouts set here. gRPC locations always get
// theirs, from the ConfigMap where not set: the grpc module does not read
// the proxy_* timeouts of the http level.
func (sp *serverPlan) planTimeouts(v *policyView, t model.Timeouts) error {
	if v.Module == "grpc" {
		c := sp.rc.m.Config
		t.Connect = orDuration(t.Connect, c.ProxyConnectTimeout)
		t.Send = orDuration(t.Send, c.ProxySendTimeout)
		t.Read = orDuration(t.Read, c.ProxyReadTimeout)
	}
	var err error
	for _, d := range []struct {
		in  time.Duration
		out *string
	}{{t.Connect, &v.ConnectTimeout}, {t.Send, &v.SendTimeout}, {t.Read, &v.ReadTimeout}} {
		if *d.out, err = nginxTime(d.in); err != nil {
			return err
		}
	}
	return nil
}

func orDuration(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// planBuffering prints the buffering settings. proxy_buffers and
// proxy_buffer_size go together, as in ingress-nginx: nginx requires the
// busy buffers (by default twice the larger buffer size) to fit in all
// buffers but one, which model.BusyBuffersFit checks for a busy size
// set here.
func planBuffering(v *policyView, b model.Buffering) error {
	v.RequestBuffering, v.ResponseBuffering = b.Request, b.Response
	var err error
	for _, s := range []struct {
		in  *model.Size
		out *string
	}{{b.BodySize, &v.BodySize}, {b.ClientBodyBuffer, &v.ClientBodyBuffer}, {b.MaxTempFile, &v.MaxTempFile}} {
		if s.in == nil {
			continue
		}
		if *s.out, err = nginxSize(*s.in); err != nil {
			return err
		}
	}
	if b.Buffers < 0 {
		return fmt.Errorf("negative proxy_buffers count %d", b.Buffers)
	}
	size := model.DefaultProxyBufferSize
	if b.BufferSize != nil {
		size = *b.BufferSize
	}
	if size <= 0 {
		return fmt.Errorf("proxy buffer size %d", size)
	}
	if b.Buffers != 0 || b.BufferSize != nil {
		v.Buffers = b.Buffers
		if v.Buffers == 0 {
			v.Buffers = model.DefaultProxyBuffers
		}
		if v.BufferSize, err = nginxSize(size); err != nil {
			return err
		}
	}
	switch {
	case b.BusyBuffers != nil:
		if err := model.BusyBuffersFit(*b.BusyBuffers, v.Buffers, size); err != nil {
			return fmt.Errorf("proxy_busy_buffers_size %s: %w", model.FormatSize(int64(*b.BusyBuffers)), err)
		}
		v.BusyBuffers, err = nginxSize(*b.BusyBuffers)
	case v.Buffers == 2:
		v.BusyBuffers = v.BufferSize
	}
	return err
}

func planRetry(v *policyView, r model.Retry, dynamic bool) error {
	var err error
	if r.Route != nil {
		if len(r.On) > 0 || r.Tries != 0 {
			return fmt.Errorf("a route's retry with next upstream conditions or tries of its own")
		}
		if err := r.Route.Validate(); err != nil {
			return err
		}
		r.On, r.Tries = r.Route.Conditions(), r.Route.Tries()
		if dynamic {
			v.Tries = r.Tries
		}
	}
	if v.NextUpstream, err = fixedTokens("next upstream condition", r.On, nextUpstreamTokens); err != nil {
		return err
	}
	if v.NextUpstreamTimeout, err = nginxTime(r.Timeout); err != nil {
		return err
	}
	if r.Tries < 0 {
		return fmt.Errorf("negative next upstream tries %d", r.Tries)
	}
	v.NextUpstreamTries = r.Tries
	return nil
}

func planReplace(r *model.Replace) (*replaceView, error) {
	if r == nil {
		return nil, nil
	}
	if r.Off {
		return &replaceView{Off: true}, nil
	}
	if r.From == "" {
		return nil, fmt.Errorf("replacement without a value to replace")
	}
	from, err := Quote(r.From)
	if err != nil {
		return nil, err
	}
	to, err := Quote(r.To)
	if err != nil {
		return nil, err
	}
	return &replaceView{From: from, To: to}, nil
}

// planBasicAuth prints auth_basic's realm and the password file of
// a.File, which the runtime writes under the secrets directory.
func (sp *serverPlan) planBasicAuth(v *policyView, a *model.BasicAuth) error {
	i := slices.IndexFunc(sp.rc.m.AuthFiles, func(f *model.AuthFile) bool { return f.Key() == a.File })
	if i < 0 {
		return fmt.Errorf("basic auth: password file %q is not in the model", a.File)
	}
	f := sp.rc.m.AuthFiles[i]
	if f.Digest != a.Digest {
		return fmt.Errorf("auth: file %q is not of the location's kind", a.File)
	}
	realm, err := quoteRealm(a.Realm)
	if err != nil {
		return err
	}
	path, err := Quote(sp.rc.p.StateDir.Path(layout.AuthFile(f.Namespace, f.Name, f.Kind())))
	if err != nil {
		return err
	}
	if !a.Digest {
		v.AuthRealm, v.AuthFile = realm, path
		return nil
	}
	// The Lua data plane checks digest credentials; the build fails the
	// paths closed without it.
	if !sp.rc.lua {
		return fmt.Errorf("digest auth needs the Lua data plane")
	}
	v.DigestRealm, v.DigestFile = realm, path
	return nil
}

// quoteRealm quotes a realm after checking it against
// model.ParseRealm again, so no other string reaches auth_basic or
// WWW-Authenticate.
func quoteRealm(r string) (string, error) {
	if _, err := model.ParseRealm(r); err != nil {
		return "", fmt.Errorf("auth realm: %w", err)
	}
	q, err := Quote(r)
	if err != nil {
		return "", fmt.Errorf("auth realm: %w", err)
	}
	return q, nil
}
