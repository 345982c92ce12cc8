package render

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/spanlog"
)

type serverView struct {
	// Sources are the objects behind the server (kind and quoted name),
	// printed one per comment line: nginx refuses any token, comments
	// included, longer than its 4 KiB read buffer.
	Sources     []string
	ServerNames []string
	// ListenHTTP and ListenHTTPS are the listen addresses; "" for none
	// (a server on GlobalConfiguration listeners, see httplisteners.go,
	// which may have more addresses).
	ListenHTTP      string
	ListenHTTPS     string
	ListenHTTPMore  []string `json:",omitempty"`
	ListenHTTPSMore []string `json:",omitempty"`
	// HTTP2 offers HTTP/2 on the HTTPS listener (use-http2) with listen's
	// http2 parameter; HTTP2On with the http2 directive instead, where the
	// binary has it (flavour.Flavour.HTTP2Directive).
	HTTP2         bool
	HTTP2On       bool `json:",omitempty"`
	DefaultServer bool
	// Misdirected is the variable that is "1" for a request whose Host
	// goes to another Gateway listener than its server name did
	// (misdirected.go); "" for no check.
	Misdirected string `json:",omitempty"`
	// RequestID says that the server assigns fresh X-Request-IDs with
	// Lua (requestid.go), rather than nginx.conf's maps with $request_id.
	RequestID bool `json:",omitempty"`
	// Block are the variables of the header block lists that refuse a
	// request with 403 (see blockMaps).
	Block   []string `json:",omitempty"`
	Cert    string
	CertLua string
	// contextCert is the default certificate for a server that needs an
	// SSL context of its own (tlscontext.go); unexported, so no part of
	// its shape.
	contextCert string
	// StaplingFile is the quoted OCSP response nginx staples itself
	// (enable-ocsp, certificates loaded at reload); "" for none.
	StaplingFile string `json:",omitempty"`
	// RejectHandshake refuses TLS handshakes the catch-all server would
	// answer (ssl-reject-handshake).
	RejectHandshake bool `json:",omitempty"`
	// TLSCiphers is the host's quoted cipher list and PreferServerCiphers
	// on or off ("" for the http level's): ssl-ciphers and
	// ssl-prefer-server-ciphers.
	TLSCiphers          string `json:",omitempty"`
	PreferServerCiphers string `json:",omitempty"`
	// ClientTLS is client certificate authentication, nil for none;
	// Headers then replaces the http level's request headers, adding the
	// client certificate's.
	ClientTLS    *clientTLSView `json:",omitempty"`
	Headers      *headersView   `json:",omitempty"`
	Redirect     bool
	RedirectPort string
	// RedirectProto is the variable that is "http" for requests to
	// redirect to HTTPS; RedirectCode their status.
	RedirectProto string
	RedirectCode  int
	// RedirectKeepsURI keeps the request URI as is in the HTTPS redirect
	// (NGINX Ingress Controller's redirect).
	RedirectKeepsURI bool
	// HTTPRedirectCode is the status of the HTTPS redirect and of the
	// twins' redirects (http-redirect-code).
	HTTPRedirectCode int
	// PreserveTrailingSlash keeps the request URI as is in the HTTPS
	// redirect; otherwise one trailing slash is dropped, as ingress-nginx
	// does.
	PreserveTrailingSlash bool
	// AppRoot is the quoted 302 target for "/", or "".
	AppRoot string
	// HSTS is the server's own Strict-Transport-Security (hsts.go).
	HSTS *hstsView `json:",omitempty"`
	// Gunzip decompresses gzipped responses for clients without gzip.
	Gunzip bool `json:",omitempty"`
	// ServerTokens is the host's own server_tokens ("on" or "off"), or
	// "" to inherit the http level's.
	ServerTokens string `json:",omitempty"`
	// HiddenHeaders repeat the http level's hidden headers with
	// Strict-Transport-Security, for a server whose own HSTS is on while
	// the ConfigMap's is off (hsts.go).
	HiddenHeaders []string `json:",omitempty"`
	Locations     []locationView
	// Closed are refused server snippets' deny-only locations, which
	// answer 503 (closed.go).
	Closed []closedLocationView `json:",omitempty"`
	// ErrorLocations and MirrorLocations are the named and internal
	// locations the server's locations send errors and mirrored requests
	// to.
	ErrorLocations  []errorLocationView
	MirrorLocations []mirrorLocationView
	// ResponseLocations answer response pages' fixed bodies.
	ResponseLocations []responseLocationView `json:",omitempty"`
	// Answers give the answers of locations that check the client first
	// (answer.go).
	Answers []answerView `json:",omitempty"`
	// AuthLocations and SigninLocations serve external authentication.
	AuthLocations []authLocationView `json:",omitempty"`
	// AuthUpstreams are their upstreams (extauth_keepalive.go).
	AuthUpstreams []authUpstreamView `json:",omitempty"`
	// AuthLoop, when set, are the sockets the server also listens on, for
	// the subrequests of auth URLs naming $host (extauth_template.go).
	AuthLoop        *authLoopView        `json:",omitempty"`
	SigninLocations []signinLocationView `json:",omitempty"`
	// CORSChecks set the variables that tell CORS locations whether the
	// request's origin is allowed (see cors.go).
	CORSChecks []corsCheckView
	// Twins are the www./non-www. names that redirect to the server's
	// hosts, each a server block of its own.
	Twins []twinView
	// Maps, in a server shared by several hosts, give each location's
	// backend per host (see group.go).
	Maps []mapView
	// names are the server's names besides Host (aliases and twins), for
	// the hash sizes; unexported, so not part of the shape.
	names []string

	// SnippetSteps are the server snippet's rewrite-module directives
	// (snippet.go).
	SnippetSteps []stepView `json:",omitempty"`

	// Hop is the server's part in serving hosts added since the last
	// reload, and HopServer a shared server's hop server, whose text
	// follows the server's in its file (hop.go). Both are decided once
	// the shapes are known, so no part of them.
	Hop       *hopView    `json:"-"`
	HopServer *serverView `json:"-"`
}

type locationView struct {
	// Modifier is "=" for an exact location, "~*" for a regular
	// expression, "" for a prefix.
	Modifier string
	Path     string
	// Backend is the key of the backend a dynamic-mode location selects
	// ("" for none); SelectKey is its quoted form, or SelectMap the map
	// variable that selects it per host in a shared server.
	Backend   string
	SelectKey string
	// FallbackKey is the quoted key of the backend that answers while
	// Backend has no ready endpoint (dynamic mode).
	FallbackKey string
	SelectMap   string
	// At most one of Return, RedirectCode and Pass is set.
	Return int
	// ReturnText is the quoted body Return answers with, and ReturnType
	// its quoted MIME type (render/response.go).
	ReturnText string `json:",omitempty"`
	ReturnType string `json:",omitempty"`
	// RedirectCode and the quoted RedirectURL answer with a redirect.
	RedirectCode int
	RedirectURL  string
	// RedirectIf, when set, is the quoted regex $request_uri must match
	// for the redirect, whose URL names its groups; else the answer is
	// 400 (planPrefixRedirect).
	RedirectIf string `json:",omitempty"`
	// Answer, when set, is the named location that answers in place of
	// Return or a redirect once the location's checks passed (answer.go).
	Answer string `json:",omitempty"`
	// Pass is the proxy directive ("proxy_pass", "grpc_pass") and PassURL
	// its target.
	Pass, PassURL string
	// HeaderFilter and LogHook install the balancer's Lua hooks.
	HeaderFilter, LogHook bool
	// AccessLogs, set when the location counts its requests, are its
	// access_log directives, the metrics log's first (metrics.go).
	AccessLogs []string `json:",omitempty"`
	// Policy is nil when the location adds nothing to the defaults.
	Policy *policyView
	// AccessLogOff and LogVars are the access log's (see accesslog.go):
	// the log turned off here, or the variables its format prints.
	AccessLogOff bool
	LogVars      []logVar
}

// renderCtx is what planning any server needs.
type renderCtx struct {
	m        *model.Model
	backends map[string]*model.Backend
	p        Params
	lua      bool
	// names are the server names taken so far: every host, then the
	// aliases and twins of the servers planned.
	names map[string]bool
	// taken are more names taken, by servers this render does not plan
	// (HopHosts: the running configuration's); nil in a whole render.
	taken map[string]bool
	// proxySecrets index m.ProxySecrets by key (built on first use).
	proxySecrets map[string]*model.ProxySecret
	// regexes memoizes matchRegex for this render: hosts of one layout
	// share their paths, and checking a regex compiles it twice.
	regexes map[model.Match]regexCheck
	// planned are the metrics series keys of the locations planned, with
	// what their labels are made of; series are the keys the rendered
	// servers use, shared servers' entries included, with their labels
	// (see metrics.go and group.go).
	planned map[string]seriesSource
	series  map[string]*balancer.SeriesLabels
	// entry is putSeries' scratch space for a key it looks up.
	entry []byte
	// addHeaders and setHeaders are add-headers' and proxy-set-headers'
	// lines, which locations with headers of their own repeat.
	addHeaders, setHeaders []headerLine
	// hstsOverridden: some server has HSTS of its own (hsts.go).
	hstsOverridden bool
	// authLoop is the loop's sockets, once a server asks it
	// (extauth_template.go).
	authLoop *authLoopView
	// hsts: the http level defines $causeway_hsts (hop.go).
	hsts bool
	// accessLog are the access log's access_log arguments, "" when off;
	// metricsLog the metrics log's (metrics.go), spanLog the span log's.
	accessLog, metricsLog, spanLog string
	// metricsLogs are metricsAccessLogs' answers.
	metricsLogs [][]string
	// waf is ModSecurity's plan, which collects the locations' rules
	// files (modsecurity.go); nil when no location runs it.
	waf *modsecPlan
	// tracing: some location is traced (tracing.go); tracePlanned are
	// the span keys of the locations planned, with their labels, and
	// spans those the rendered servers use.
	tracing             bool
	tracePlanned, spans map[string]spanlog.Labels
	// mirrors is what the mirrors planned need of nginx.conf (mirror.go).
	mirrors mirrorPlan
	// defaultCert is the default certificate's argument of
	// ssl_certificate, for servers that need an SSL context of their own;
	// shareCatchAll says whether others may use the catch-all's
	// (tlscontext.go).
	defaultCert   string
	shareCatchAll bool
}

type regexCheck struct {
	re  string
	err error
}

// matchRegex is the package's matchRegex, once per distinct match in a
// render.
func (rc *renderCtx) matchRegex(m model.Match) (string, error) {
	if c, ok := rc.regexes[m]; ok {
		return c.re, c.err
	}
	if rc.regexes == nil {
		rc.regexes = map[model.Match]regexCheck{}
	}
	re, err := matchRegex(m)
	rc.regexes[m] = regexCheck{re, err}
	return re, err
}

// planServer prepares one host's server for the template.
func planServer(rc *renderCtx, srv *model.Server) (*serverView, error) {
	m, p, lua := rc.m, rc.p, rc.lua
	v := &serverView{}
	name, err := serverName(srv.Host)
	if srv.AnyDepth && srv.Wildcard() {
		name, err = anyDepthName(srv.Host)
	}
	if err != nil {
		return nil, err
	}
	v.ServerNames = []string{name}
	if v.ListenHTTP, err = listen(p.ListenAddress, p.HTTPPort); err != nil {
		return nil, err
	}
	if v.ListenHTTPS, err = listen(p.ListenAddress, p.HTTPSPort); err != nil {
		return nil, err
	}
	if m.Config.RealIP.UseProxyProtocol {
		// Both listeners, for every server: nginx ORs listen options
		// per address anyway.
		v.ListenHTTP += " proxy_protocol"
		v.ListenHTTPS += " proxy_protocol"
	}
	if m.Passthrough != nil {
		// The passthrough server takes the HTTPS port and hands the rest
		// over this socket: it passes the connection itself where the
		// stream module can, else proxies it behind a PROXY header.
		sock, err := quotedPathBody(p.StateDir.HTTPSSocket())
		if err != nil {
			return nil, err
		}
		v.ListenHTTPS = "unix:" + sock
		if !p.Flavour.StreamPass() {
			v.ListenHTTPS += " proxy_protocol"
		}
	}
	if srv.Listeners != nil {
		ok, err := planListeners(v, srv, p, m.Config.RealIP.UseProxyProtocol)
		if err != nil || !ok {
			return nil, err
		}
	}
	v.DefaultServer = srv.Host == ""
	v.RejectHandshake = v.DefaultServer && m.Config.SSLRejectHandshake
	v.RequestID = luaRequestID(m.Config.GenerateRequestID, lua)
	maps, err := blockMaps(m.Config)
	if err != nil {
		return nil, err
	}
	for _, bm := range maps {
		v.Block = append(v.Block, bm.Variable)
	}
	v.HTTP2On = m.Config.HTTP2 && p.Flavour.HTTP2Directive()
	v.HTTP2 = m.Config.HTTP2 && !v.HTTP2On
	for _, ref := range srv.Sources {
		q, err := Quote(ref.Namespace + "/" + ref.Name)
		if err != nil {
			return nil, err
		}
		kind := ref.Kind
		if kind == "" {
			kind = "Ingress"
		}
		if !isKindName(kind) {
			return nil, fmt.Errorf("server %q: source kind %q is not a kind name", srv.Host, kind)
		}
		v.Sources = append(v.Sources, kind+" "+q)
	}
	if srv.TLS != nil && srv.TLS.Secret != "" {
		mode := certAtReload
		switch {
		case m.Config.ReloadFreeCertificates && lua:
			mode = certLua
		case m.Config.ReloadFreeCertificates:
			mode = certPerHandshake
		}
		if v.Cert, v.CertLua, err = certDirectives(p.StateDir, srv.TLS.Secret, mode, m.Config.EnableOCSP); err != nil {
			return nil, err
		}
		if mode == certAtReload && m.Config.EnableOCSP {
			if v.StaplingFile, err = staplingFile(m, p.StateDir, srv.TLS.Secret); err != nil {
				return nil, err
			}
		}
	}
	v.Redirect = srv.SSLRedirect
	switch v.HTTPRedirectCode = m.Config.HTTPRedirectCode; v.HTTPRedirectCode {
	case 301, 302, 307, 308:
	default:
		return nil, fmt.Errorf("http-redirect-code %d", v.HTTPRedirectCode)
	}
	if port := p.HTTPSPort; srv.Listeners != nil && srv.Listeners.HTTPS != nil {
		if port = srv.Listeners.HTTPS.Port; port != 443 {
			v.RedirectPort = ":" + strconv.Itoa(port)
		}
	} else if port != 443 && srv.HTTPSRedirect == nil {
		v.RedirectPort = ":" + strconv.Itoa(port)
	}
	if err := planHTTPSRedirect(v, srv.HTTPSRedirect); err != nil {
		return nil, err
	}
	if err := planServerPolicy(v, srv, p, rc.names, rc.taken); err != nil {
		return nil, err
	}
	if err := planServerHSTS(v, srv, m.Config); err != nil {
		return nil, err
	}
	if srv.Policy != nil || m.Config.ServerSnippet != nil {
		s := m.Config.ServerSnippet
		if srv.Policy != nil {
			s = model.Join(s, srv.Policy.Snippet)
		}
		if s != nil {
			if v.SnippetSteps, err = planSteps(s.Steps); err != nil {
				return nil, err
			}
		}
	}
	v.Gunzip = srv.Policy != nil && srv.Policy.Gunzip
	if srv.Policy != nil && srv.Policy.ServerTokens != nil {
		v.ServerTokens = map[bool]string{true: "on", false: "off"}[*srv.Policy.ServerTokens]
	}
	ownSTS := srv.Policy != nil && srv.Policy.HSTS != nil && srv.Policy.HSTS.Enabled
	hidden := hiddenHeaders(&m.Config, m.Config.HSTS.Enabled || ownSTS)
	if ownSTS && !m.Config.HSTS.Enabled {
		if v.HiddenHeaders, err = quoteHidden(hidden); err != nil {
			return nil, err
		}
	}
	sp := &serverPlan{rc: rc, hidden: hidden, v: v, srv: srv, errs: map[string]int{}, named: map[string]bool{},
		mirrors: map[string]string{}, cors: map[string]int{}, auths: map[*model.Location]*authUse{}}
	if err := sp.planClientTLS(); err != nil {
		return nil, err
	}
	if v.ClientTLS != nil {
		v.Headers = sp.clientHeaders(&headersView{Module: "proxy", Custom: rc.setHeaders})
	}
	if v.Locations, err = sp.locations(); err != nil {
		return nil, err
	}
	if err := planClosed(v, srv); err != nil {
		return nil, err
	}
	return v, nil
}

// serverPlan is one server being planned: the named locations and maps
// its locations share are collected here, each once.
type serverPlan struct {
	rc *renderCtx
	// hidden are the backend headers the server's locations hide
	// (hiddenHeaders).
	hidden []string
	v      *serverView
	srv    *model.Server
	errs   map[string]int  // error location content -> group
	named  map[string]bool // error locations added
	// choiceNamed are the splits' answer locations added (split.go).
	choiceNamed map[string]bool
	// mirrors maps mirror location content to its URI; mirrorNext
	// numbers the next one.
	mirrors    map[string]string
	mirrorNext int
	// auths are the protected locations' external authentication;
	// authNext numbers the next internal location (extauth.go).
	auths    map[*model.Location]*authUse
	authNext int
	cors     map[string]int // origin list -> CORSChecks index
	// reserved are the paths user locations may name exactly.
	reserved map[string]bool
}

// locations maps Ingress paths onto nginx locations. nginx checks "="
// locations first, then picks the longest matching prefix, which is exactly
// the Ingress rule (longest match, Exact first on a tie) provided that a
// Prefix path P becomes two locations: "= P" for the path itself and "P/"
// for everything below it. The Prefix "= P" is dropped when an Exact P
// exists, because Exact wins the tie. The root prefix is "/", and the
// server's default answers through "/" when no Prefix "/" exists. A regex
// server (use-regex) instead makes every location a regular expression,
// tried in the model's order; its default stays the prefix "/", which
// answers what no regex matches.
func (sp *serverPlan) locations() ([]locationView, error) {
	srv := sp.srv
	sp.reserved = map[string]bool{}
	exact := map[string]bool{}
	hasRoot := false
	for _, l := range srv.Locations {
		sp.reserved[l.Match.Path] = true
		sp.reserved[strings.TrimSuffix(l.Match.Path, "/")] = true
		if l.Match.Type == model.Exact {
			exact[l.Match.Path] = true
		} else if l.Match.Path == "/" && (l.Match.Type == model.Prefix || l.Match.Type == model.StringPrefix) {
			hasRoot = true
		}
	}
	// A Prefix path is two locations, and a server may add its default.
	out := make([]locationView, 0, 2*len(srv.Locations)+1)
	add := func(l *model.Location, modifier, path string) error {
		q, err := Quote(path)
		if err != nil {
			return err
		}
		lv := locationView{Modifier: modifier, Path: q}
		if err := sp.locationBody(&lv, l); err != nil {
			return err
		}
		if err := sp.planLogVars(&lv, l); err != nil {
			return err
		}
		if err := sp.planMetrics(&lv, l); err != nil {
			return err
		}
		if err := sp.planTracing(&lv, l); err != nil {
			return err
		}
		sp.deferAnswer(&lv, l)
		if err := sp.splitAnswers(&lv, l); err != nil {
			return err
		}
		if err := sp.splitHeaders(&lv, l); err != nil {
			return err
		}
		out = append(out, lv)
		return nil
	}
	for _, l := range srv.Locations {
		var err error
		m := l.Match
		switch {
		case srv.Regex || m.Type == model.Regex:
			var re string
			if re, err = sp.rc.matchRegex(m); err == nil {
				err = add(l, "~*", "^"+re)
			}
		case m.Type == model.Exact:
			err = add(l, "=", m.Path)
		case m.Type == model.StringPrefix:
			err = add(l, "", m.Path)
		case m.Path == "/":
			err = add(l, "", "/")
		default:
			if !exact[m.Path] {
				if err = add(l, "=", m.Path); err != nil {
					return nil, err
				}
			}
			err = add(l, "", m.Path+"/")
		}
		if err != nil {
			return nil, err
		}
	}
	if (srv.Regex || !hasRoot) && srv.Default != nil {
		if err := add(srv.Default, "", "/"); err != nil {
			return nil, err
		}
	}
	if srv.Regex {
		return out, nil
	}
	// nginx answers "/foo" with a 301 to "/foo/" when a proxied location
	// "/foo/" exists and nothing else names "/foo" exactly. Ingress has no
	// such redirect, so every such path gets an explicit "= /foo" routed to
	// whatever the Ingress rules say "/foo" matches.
	named := map[string]bool{}
	for _, l := range srv.Locations {
		named[l.Match.Path] = true // Exact P is "= P"; Prefix P emits "= P" too
	}
	for _, l := range srv.Locations {
		bare := strings.TrimSuffix(l.Match.Path, "/")
		if l.Match.Type != model.Exact || bare == "" || bare == l.Match.Path || named[bare] {
			continue
		}
		named[bare] = true
		target := srv.Match(bare)
		if target == nil {
			target = srv.Default
		}
		if target == nil {
			target = &model.Location{Action: model.ReturnStatus(404)}
		}
		if err := add(target, "=", bare); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// planRedirect makes lv answer r.
func planRedirect(lv *locationView, r *model.Redirect) error {
	switch r.Code {
	case 301, 302, 303, 307, 308:
	default:
		return fmt.Errorf("redirect code %d", r.Code)
	}
	if r.Prefix != nil {
		return planPrefixRedirect(lv, r)
	}
	q, err := Quote(r.URL)
	if r.Template != nil {
		q, err = quoteTemplate(r.Template)
	}
	if err != nil {
		return err
	}
	lv.RedirectCode, lv.RedirectURL = r.Code, q
	return nil
}

// planPrefixRedirect makes lv answer a redirect that replaces a path
// prefix (model.RedirectPrefix). The rest of the path is cut from the
// request URI as the client sent it ($request_uri), never from the
// decoded $uri, whose %0D%0A would become a header break in Location.
// A request whose raw URI does not spell the prefix the location matched
// (percent-escaped letters, doubled slashes that nginx merged) gets 400:
// its rest cannot be cut safely.
func planPrefixRedirect(lv *locationView, r *model.Redirect) error {
	p := r.Prefix
	if r.Template == nil || r.URL != "" {
		return fmt.Errorf("prefix redirect without a template")
	}
	for _, s := range []string{p.Path, p.With} {
		if err := model.ValidatePath(s); err != nil {
			return fmt.Errorf("prefix redirect: %v", err)
		}
	}
	prefix, with := strings.TrimSuffix(p.Path, "/"), strings.TrimSuffix(p.With, "/")
	// Group 1 is the rest of the path, group 2 the query with its "?".
	rest := `(/[^?]*)?`
	switch {
	case prefix == "" && with == "":
		rest = `(/[^?]*)`
	case prefix == "":
		// "/" becomes With itself, "/a" With+"/a".
		rest = `(/[^?]+)?/?`
	case with == "":
		// The prefix and its "/" go: "/p" and "/p/" become "/".
		rest, with = `/?([^?]*)`, "/"
	}
	re, err := Quote("^" + regexp.QuoteMeta(prefix) + rest + `(\?.*)?\z`)
	if err != nil {
		return err
	}
	t := append(slices.Clip(r.Template), model.TemplatePart{Literal: with},
		model.TemplatePart{Variable: "1"}, model.TemplatePart{Variable: "2"})
	q, err := quoteTemplate(t)
	if err != nil {
		return err
	}
	lv.RedirectCode, lv.RedirectURL, lv.RedirectIf = r.Code, q, re
	return nil
}

// matchRegex is the regular expression, without the leading "^", that a
// location matches in a regex server and that its rewrite replaces: a
// Regex path re-checked by regexLocation, any other path taken literally.
func matchRegex(m model.Match) (string, error) {
	if m.Type == model.Regex {
		return regexLocation(m.Path)
	}
	if !pathOnly.MatchString(m.Path) {
		return "", fmt.Errorf("path %q holds a character outside [A-Za-z0-9._~!*()+,=:@&/-]", m.Path)
	}
	return regexp.QuoteMeta(m.Path), nil
}

// locationBody is what a location does. In dynamic mode every backend
// location names its key (locationView.SelectKey) and proxies to the one
// Lua upstream, whose balancer sends requests for a backend without a
// ready endpoint to a local server that answers 503, so endpoint changes
// never alter this file. In plain mode it proxies to the backend's own
// upstream, or answers 503 when there is none.
func (sp *serverPlan) locationBody(lv *locationView, l *model.Location) error {
	switch a := l.Action; {
	case a.Return != nil:
		if err := planReturn(lv, a.Return); err != nil {
			return err
		}
		return sp.planPolicy(lv, l)
	case a.Redirect != nil:
		if err := planRedirect(lv, a.Redirect); err != nil {
			return err
		}
		return sp.planPolicy(lv, l)
	case a.Proxy == nil:
		return fmt.Errorf("location %q has no action", l.Match.Path)
	}
	p := l.Action.Proxy
	if p.AnswersOnly() {
		return sp.answersOnly(lv, l)
	}
	key := sp.servedBackend(p)
	if err := selectBackend(lv, key, sp.rc.backends, sp.rc.lua); err != nil {
		return err
	}
	if err := selectSplit(lv, p, sp.rc.backends, sp.rc.lua); err != nil {
		return err
	}
	if sp.rc.lua && p.Fallback != "" {
		if err := balancer.ValidateKey(p.Fallback); err != nil {
			return err
		}
		q, err := Quote(p.Fallback)
		if err != nil {
			return err
		}
		lv.FallbackKey = q
	}
	return sp.planPolicy(lv, l)
}

// servedBackend is the backend a location proxying as p names: its own,
// or in plain mode its fallback while its own has no endpoint (the files
// change with the endpoints anyway).
func (sp *serverPlan) servedBackend(p *model.Proxy) string {
	if b := sp.rc.backends[p.Backend]; !sp.rc.lua && p.Fallback != "" && (b == nil || len(b.Endpoints) == 0) {
		return p.Fallback
	}
	return p.Backend
}

// selectBackend makes lv proxy (over HTTP) to backend key.
func selectBackend(lv *locationView, key string, backends map[string]*model.Backend, lua bool) error {
	b := backends[key]
	lv.Pass = "proxy_pass"
	if lua {
		q, err := Quote(key)
		if err != nil {
			return err
		}
		if err := balancer.ValidateKey(key); err != nil {
			return err
		}
		lv.Backend, lv.SelectKey = key, q
		// The balancer runs for every request. The other hooks run only
		// where the backend's method uses them: sticky sets its
		// cookie in the header filter; least_conn, ewma and p2c count
		// in-flight requests and latency in the log phase. Round robin
		// and chash need neither, which saves two Lua calls per request.
		// Peer limits count failures and in-flight requests in the log
		// phase too.
		if b != nil {
			switch b.Balance.Method {
			case model.Sticky:
				lv.HeaderFilter = true
			case model.LeastConn, model.EWMA, model.P2C:
				lv.LogHook = true
			}
			if b.Limits != (model.PeerLimits{}) {
				lv.LogHook = true
			}
		}
		lv.PassURL = "http://" + luaUpstream(b)
		return nil
	}
	name, err := upstreamName(key)
	if err != nil {
		return err
	}
	if b == nil || len(b.Endpoints) == 0 {
		lv.Pass, lv.Return = "", 503 // no ready endpoints
		return nil
	}
	lv.PassURL = "http://" + name
	return nil
}

// isKindName reports whether s is a Kubernetes kind name: letters only,
// the first upper case.
func isKindName(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// planHTTPSRedirect says how plain HTTP is redirected: by default as the
// ConfigMap says; a VirtualServer's tls.redirect (r) as NGINX Ingress
// Controller does, with its own code and basis, to the request URI as
// sent and, on the controller's listeners, to the standard HTTPS port
// (the caller left RedirectPort empty).
func planHTTPSRedirect(v *serverView, r *model.HTTPSRedirect) error {
	v.RedirectProto, v.RedirectCode = "$causeway_forwarded_proto", v.HTTPRedirectCode
	if r == nil {
		return nil
	}
	if !slices.Contains(model.RedirectCodes, r.Code) {
		return fmt.Errorf("https redirect code %d", r.Code)
	}
	switch r.BasedOn {
	case model.RedirectOnScheme:
	case model.RedirectOnForwardedProto:
		v.RedirectProto = "$http_x_forwarded_proto"
	default:
		return fmt.Errorf("https redirect based on %q", r.BasedOn)
	}
	v.RedirectCode, v.RedirectKeepsURI = r.Code, true
	return nil
}
