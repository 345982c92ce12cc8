package spec

import (
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/test/echo"
)

// Ports are the listeners' ports, for redirect targets.
type Ports struct{ HTTP, HTTPS int }

// Eval answers a request from the Model alone, as nginx configured from it
// must: the reference semantics that AnnotationTable is checked against
// purely, and that the integration tier compares nginx with. It covers
// the settings the table exercises, in nginx's phase order: server
// selection (names, aliases, www twins) after the header block lists, the server's app-root and HTTPS
// redirect, location matching, CORS, the location's action and rewrite,
// the body size limit, the source address lists (with the realip
// module's client address) and basic authentication, as satisfy combines
// them, the backend (or its fallback), error pages and
// response headers. Backends answer like test/echo: 200, or the status a
// path under /_status/NNN asks for.
func Eval(m *model.Model, r Request, p Ports) Response {
	if r.Scheme == "" {
		r.Scheme = "http"
	}
	if r.Method == "" {
		r.Method = "GET"
	}
	// block-user-agents and block-referers: every server's first check.
	// Go's client sends this User-Agent when the request sets none.
	ua, ok := r.Header["User-Agent"]
	if !ok {
		ua = "Go-http-client/1.1"
	}
	if matchesAny(m.Config.BlockUserAgents, ua) || matchesAny(m.Config.BlockReferers, r.Header["Referer"]) {
		return Response{Status: 403}
	}
	path, query, _ := strings.Cut(r.Path, "?")
	host := strings.ToLower(r.Host)
	st := newSnippetState(r, host, path, query)
	if sn := m.Config.ServerSnippet; sn != nil {
		st.maps = sn.Maps
	}
	srv, twinOf := selectServer(m, host)
	if twinOf != nil {
		return Response{Status: 308, Location: r.Scheme + "://" + twinOf.Host + ":" + port(r.Scheme, p) + redirectURI(r.Path, twinOf.Policy.PreserveTrailingSlash)}
	}
	if srv == nil {
		// No server of the port has the host: its listener's default
		// answers (a Gateway port without a route for every host).
		return Response{Status: 404}
	}
	pol := srv.Policy
	if pol == nil {
		pol = &model.ServerPolicy{}
	}
	if pol.AppRoot != "" && path == "/" {
		return Response{Status: 302, Location: r.Scheme + "://" + r.Host + pol.AppRoot}
	}
	if r.Scheme == "http" && (srv.SSLRedirect || pol.ForceSSLRedirect) {
		target := "https://" + host
		if p.HTTPS != 443 {
			target += ":" + strconv.Itoa(p.HTTPS)
		}
		return Response{Status: 308, Location: target + redirectURI(r.Path, pol.PreserveTrailingSlash)}
	}
	// server-snippet (the ConfigMap's, then the host's): its steps run
	// before a location is chosen.
	srvSnippet := model.Join(m.Config.ServerSnippet, pol.Snippet)
	if ans := st.run(srvSnippet); ans != nil {
		return *ans
	}
	path = st.path
	loc := srv.Match(path)
	if loc == nil {
		loc = srv.Default
	}
	out := Response{Header: map[string]string{}}
	lp := loc.Policy
	if lp == nil {
		lp = &model.Policy{}
	}
	if c := lp.CORS; c != nil && corsAllows(c, r.Header["Origin"]) {
		origin := "*"
		if !c.AllowAnyOrigin && len(c.Origins) > 0 {
			origin = r.Header["Origin"]
		}
		out.Header["Access-Control-Allow-Origin"] = origin
		if c.Credentials {
			out.Header["Access-Control-Allow-Credentials"] = "true"
		}
		if len(c.ExposeHeaders) > 0 {
			out.Header["Access-Control-Expose-Headers"] = strings.Join(c.ExposeHeaders, ", ")
		}
		if r.Method == "OPTIONS" {
			out.Header["Access-Control-Allow-Methods"] = strings.Join(c.Methods, ", ")
			if c.MaxAge > 0 {
				out.Header["Access-Control-Max-Age"] = strconv.Itoa(int(c.MaxAge.Seconds()))
			}
			addHeaders(&out, lp)
			out.Status = 204
			// The snippets' add_header lines too, as on every other
			// response of the location (ingress-nginx's preflight sets
			// its headers with more_set_headers, which leaves them be).
			st.applyHeaders(&out, srvSnippet, model.Join(m.Config.LocationSnippet, lp.Snippet))
			return out
		}
	}
	addHeaders(&out, lp)
	// A location that answers by itself does so in the rewrite phase,
	// unless it checks the client: then only once the checks passed.
	answer := func() (Response, bool) {
		switch a := loc.Action; {
		case a.Redirect != nil:
			out.Status, out.Location = a.Redirect.Code, a.Redirect.URL
			if a.Redirect.URL == "" {
				out.Location = evalTemplate(a.Redirect.Template, r, host, path, query)
			}
			return out, true
		case a.Return != nil:
			out.Status = a.Return.Status
			return out, true
		}
		return Response{}, false
	}
	checks := lp.ChecksClient()
	if !checks {
		if ans, ok := answer(); ok {
			return ans
		}
	}
	// location-snippet and configuration-snippet: their steps run in the
	// rewrite phase, before the access checks.
	ownSnippet := model.Join(m.Config.LocationSnippet, lp.Snippet)
	if ans := st.run(ownSnippet); ans != nil {
		out.Status, out.Location = ans.Status, ans.Location
		st.applyHeaders(&out, srvSnippet, ownSnippet)
		return out
	}
	limit := m.Config.ProxyBodySize
	if b := lp.Buffering.BodySize; b != nil {
		limit = int64(*b)
	}
	if limit > 0 && int64(r.Body) > limit {
		out.Status = 413
		return out
	}
	client := clientAddr(m.Config.RealIP, r)
	blocked := slices.ContainsFunc(m.Config.BlockCIDRs, func(p netip.Prefix) bool { return p.Contains(client) })
	if code := authorize(m, lp, !blocked && lp.Access.Allows(client), r); code != 0 {
		out.Status = code
		if code == 401 {
			out.Header["Www-Authenticate"] = `Basic realm="` + lp.BasicAuth.Realm + `"`
		}
		return out
	}
	var authHeaders map[string]string
	if a := lp.ExternalAuth; a != nil {
		var code int
		port := p.HTTP
		if r.Scheme == "https" {
			port = p.HTTPS
		}
		if code, authHeaders = externalAuth(a, r, port, &out); code != 0 {
			out.Status = code
			return out
		}
	}
	if checks {
		if ans, ok := answer(); ok {
			return ans
		}
	}
	uri := r.Path
	if st.rewritten {
		uri = st.uri()
	}
	if lp.Rewrite != nil {
		uri = loc.Rewritten(srv.Regex, path, query)
	}
	if ans := splitAnswer(a(loc), r); ans != nil {
		// A Gateway API route's split answers by itself: a redirect,
		// or a status (500 for an invalid backendRef, 404 for no match).
		if ans.Redirect != nil {
			out.Status, out.Location = ans.Redirect.Code, ans.Redirect.URL
			if ans.Redirect.URL == "" {
				out.Location = evalTemplate(ans.Redirect.Template, r, host, path, query)
			}
		} else {
			out.Status = ans.Return.Status
		}
		return out
	}
	be := backend(m, splitChoice(a(loc), r))
	if !ready(be) {
		be = backend(m, a(loc).Backend) // a canary without endpoints
	}
	if !ready(be) && a(loc).Fallback != "" {
		be = backend(m, a(loc).Fallback)
	}
	if !ready(be) {
		out.Status = 503
		return out
	}
	out.Status, out.Service, out.URI = 200, be.Service, uri
	out.Host = host
	if lp.UpstreamHost != nil {
		out.Host = string(*lp.UpstreamHost)
	}
	if lp.Rewrite != nil && lp.XForwardedPrefix != nil {
		out.Upstream = map[string]string{"X-Forwarded-Prefix": string(*lp.XForwardedPrefix)}
	}
	if len(authHeaders) > 0 {
		if out.Upstream == nil {
			out.Upstream = map[string]string{}
		}
		maps.Copy(out.Upstream, authHeaders)
	}
	if code, ok := echo.StatusOf(path); ok {
		out.Status = code
	}
	st.applyHeaders(&out, srvSnippet, ownSnippet)
	if e := lp.Errors; e != nil && slices.Contains(e.Codes, out.Status) {
		eb := backend(m, e.Backend)
		return Response{Status: 200, Service: eb.Service, URI: "/", Header: out.Header, Host: out.Host, Upstream: map[string]string{
			"X-Code": strconv.Itoa(out.Status), "X-Original-URI": r.Path, "X-Namespace": loc.Source.Namespace,
			"X-Ingress-Name": loc.Source.Name, "X-Service-Name": be.Service, "X-Service-Port": be.Port}}
	}
	if be.Balance.Method == model.Sticky {
		name := "causeway_affinity"
		if be.Balance.Sticky != nil && be.Balance.Sticky.Name != "" {
			name = be.Balance.Sticky.Name
		}
		out.HeaderPrefix = map[string]string{"Set-Cookie": name + "="}
	}
	return out
}

func matchesAny(l []model.HeaderMatch, h string) bool {
	return slices.ContainsFunc(l, func(e model.HeaderMatch) bool { return e.Matches(h) })
}

// clientAddr is the address nginx's access module checks: the TCP peer
// (r.From, 127.0.0.1 by default) or, when the realip module trusts the
// peer, the last address of the forwarded-for header that is not itself
// trusted (real_ip_recursive on). An unparsable entry stops the walk.
func clientAddr(c model.RealIP, r Request) netip.Addr {
	from := r.From
	if from == "" {
		from = "127.0.0.1"
	}
	addr := netip.MustParseAddr(from)
	trusted := func(a netip.Addr) bool {
		return slices.ContainsFunc(c.TrustedCIDRs, func(p netip.Prefix) bool { return p.Contains(a) })
	}
	h, ok := r.Header[c.ForwardedForHeader]
	if !(c.UseForwardedHeaders || c.EnableRealIP) || c.UseProxyProtocol || !ok || !trusted(addr) {
		return addr
	}
	items := strings.Split(h, ",")
	for i := len(items) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(items[i]))
		if err != nil {
			break
		}
		addr = a
		if !trusted(a) {
			break
		}
	}
	return addr
}

func a(l *model.Location) *model.Proxy { return l.Action.Proxy }

// selectServer finds the server for a host as nginx does: exact names
// (hosts, aliases, www twins) first, then wildcards, then the catch-all.
// A www twin returns the server it redirects to.
func selectServer(m *model.Model, host string) (srv, twinOf *model.Server) {
	var catchAll, wildcard *model.Server
	for _, s := range m.Servers {
		switch {
		case s.Host == host:
			return s, nil
		case s.Policy != nil && slices.Contains(s.Policy.Aliases, host):
			return s, nil
		case s.Policy != nil && s.Policy.WWWRedirect && twin(s.Host) == host:
			return nil, s
		case s.Host == "":
			catchAll = s
		case s.Wildcard() && s.AnyDepth && strings.HasSuffix(host, s.Host[1:]) && len(host) > len(s.Host)-1 &&
			(wildcard == nil || !wildcard.AnyDepth || len(s.Host) > len(wildcard.Host)):
			// nginx's own wildcard names: any depth, the longest wins.
			wildcard = s
		case s.Wildcard() && !s.AnyDepth && model.HostMatches(s.Host, host) && wildcard == nil:
			wildcard = s
		}
	}
	if wildcard != nil {
		return wildcard, nil
	}
	return catchAll, nil
}

func twin(host string) string {
	if rest, ok := strings.CutPrefix(host, "www."); ok {
		return rest
	}
	return "www." + host
}

func port(scheme string, p Ports) string {
	if scheme == "https" {
		return strconv.Itoa(p.HTTPS)
	}
	return strconv.Itoa(p.HTTP)
}

// redirectURI is the request URI of an HTTPS or www redirect: one
// trailing slash dropped unless preserved, as ingress-nginx does.
func redirectURI(uri string, preserve bool) string {
	if preserve {
		return uri
	}
	return strings.TrimSuffix(uri, "/")
}

func corsAllows(c *model.CORS, origin string) bool {
	if c.AllowAnyOrigin || len(c.Origins) == 0 {
		return true
	}
	for _, o := range c.Origins {
		if o == origin {
			return true
		}
		if scheme, rest, ok := strings.Cut(o, "://*."); ok {
			label, found := strings.CutSuffix(strings.TrimPrefix(origin, scheme+"://"), "."+rest)
			if found && strings.HasPrefix(origin, scheme+"://") && label != "" && !strings.ContainsAny(label, "./:") {
				return true
			}
		}
	}
	return false
}

func addHeaders(out *Response, p *model.Policy) {
	for _, h := range p.ResponseHeaders {
		out.Header[h.Name] = string(h.Value)
	}
}

func backend(m *model.Model, key string) *model.Backend {
	for _, b := range m.Backends {
		if b.Key == key {
			return b
		}
	}
	return nil
}

func ready(b *model.Backend) bool { return b != nil && len(b.Endpoints) > 0 }

// Mismatch lists how got differs from want (only want's set fields count);
// "" when it does not. Location placeholders {http} and {https} stand for
// the ports.
func (want Response) Mismatch(got Response, p Ports) string {
	var diffs []string
	check := func(what string, ok bool, w, g any) {
		if !ok {
			diffs = append(diffs, what+": got "+strconv.Quote(toString(g))+", want "+strconv.Quote(toString(w)))
		}
	}
	check("status", want.Status == got.Status, want.Status, got.Status)
	if want.Service != "" || want.Status == 404 || want.Status == 503 || want.Status >= 300 && want.Status < 400 {
		check("service", want.Service == got.Service, want.Service, got.Service)
	}
	if want.URI != "" {
		check("uri", want.URI == got.URI, want.URI, got.URI)
	}
	if want.Host != "" {
		check("upstream host", want.Host == got.Host, want.Host, got.Host)
	}
	if want.Location != "" {
		loc := strings.NewReplacer("{http}", strconv.Itoa(p.HTTP), "{https}", strconv.Itoa(p.HTTPS)).Replace(want.Location)
		check("location", loc == got.Location, loc, got.Location)
	}
	for k, v := range want.Header {
		check("header "+k, got.Header[k] == v, v, got.Header[k])
	}
	for k, v := range want.HeaderPrefix {
		check("header "+k, strings.HasPrefix(got.HeaderPrefix[k], v), v+"...", got.HeaderPrefix[k])
	}
	for _, k := range want.Absent {
		_, present := got.Header[k]
		check("header "+k, !present, "(absent)", got.Header[k])
	}
	for k, v := range want.Upstream {
		check("upstream header "+k, got.Upstream[k] == v, v, got.Upstream[k])
	}
	slices.Sort(diffs)
	return strings.Join(diffs, "; ")
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	}
	return ""
}

// OnPort is the part of m served on an nginx port of Gateway listeners:
// its servers whose Listeners are on port, for Eval, which knows one
// listener at a time. The servers of the controller's own ports are left
// out.
func OnPort(m *model.Model, port int) *model.Model {
	out := *m
	out.Servers = nil
	for _, s := range m.Servers {
		if l := s.Listeners; l != nil && (l.HTTP != nil && l.HTTP.Port == port || l.HTTPS != nil && l.HTTPS.Port == port) {
			out.Servers = append(out.Servers, s)
		}
	}
	return &out
}
