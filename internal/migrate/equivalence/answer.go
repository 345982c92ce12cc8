package equivalence

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// side is one model, indexed for answering requests.
type side struct {
	m *model.Model
	// gateway: the servers of Gateway listeners answer, by scheme;
	// otherwise the servers of the controller's own ports.
	gateway  bool
	backends map[string]*model.Backend
	// servers are the servers that answer each scheme, exact names
	// first looked up in exact.
	servers map[string][]*model.Server
	exact   map[string]map[string]*model.Server
	// passthrough are the backends TLS is passed to, by server name: the
	// HTTPS port's on the Ingress side, the TLS listeners' on the
	// Gateway side.
	passthrough map[string]string
}

func newSide(m *model.Model, gateway bool) *side {
	s := &side{m: m, gateway: gateway, backends: map[string]*model.Backend{},
		servers: map[string][]*model.Server{}, exact: map[string]map[string]*model.Server{"http": {}, "https": {}},
		passthrough: map[string]string{}}
	var routes []*model.PassthroughRoute
	if m.Passthrough != nil && !gateway {
		routes = m.Passthrough.Routes
	}
	for _, l := range m.SNIListeners {
		if gateway {
			routes = append(routes, l.Routes...)
		}
	}
	for _, r := range routes {
		s.passthrough[r.Host] = r.Backend
	}
	for _, b := range m.Backends {
		s.backends[b.Key] = b
	}
	for _, srv := range m.Servers {
		for _, scheme := range []string{"http", "https"} {
			if !s.serves(srv, scheme) {
				continue
			}
			s.servers[scheme] = append(s.servers[scheme], srv)
			names := []string{srv.Host}
			if srv.Policy != nil {
				names = append(names, srv.Policy.Aliases...)
			}
			for _, n := range names {
				if _, taken := s.exact[scheme][n]; !taken && n != "" && !srv.Wildcard() {
					s.exact[scheme][n] = srv
				}
			}
		}
	}
	return s
}

// serves reports whether srv answers requests of scheme on this side.
func (s *side) serves(srv *model.Server, scheme string) bool {
	l := srv.Listeners
	if !s.gateway {
		return l == nil
	}
	return l != nil && (scheme == "http" && l.HTTP != nil || scheme == "https" && l.HTTPS != nil)
}

// server finds the server of host as nginx does: exact names and
// aliases, then the longest wildcard, then the catch-all.
func (s *side) server(scheme, host string) *model.Server {
	if srv := s.exact[scheme][host]; srv != nil {
		return srv
	}
	var wildcard, catchAll *model.Server
	for _, srv := range s.servers[scheme] {
		switch {
		case srv.Host == "":
			if catchAll == nil {
				catchAll = srv
			}
		case srv.Wildcard() && srv.AnyDepth && strings.HasSuffix(host, srv.Host[1:]) && len(host) > len(srv.Host)-1,
			srv.Wildcard() && !srv.AnyDepth && model.HostMatches(srv.Host, host):
			if wildcard == nil || len(srv.Host) > len(wildcard.Host) {
				wildcard = srv
			}
		}
	}
	if wildcard != nil {
		return wildcard
	}
	return catchAll
}

// answer is how one side answers a request: the server and location
// that do (when one does), and what they do, in words.
type answer struct {
	srv  *model.Server
	loc  *model.Location
	what string
}

// answer answers a GET of path on host over scheme, in nginx's order:
// TLS passthrough, the server's app-root and HTTPS redirects, then the
// location.
func (s *side) answer(r request) answer {
	if b, ok := s.passthrough[r.host]; ok && r.scheme == "https" {
		return answer{what: "TLS passed through to " + b}
	}
	srv := s.server(r.scheme, r.host)
	if srv == nil {
		return answer{what: "no server for the host: 404"}
	}
	pol := srv.Policy
	if pol == nil {
		pol = &model.ServerPolicy{}
	}
	if pol.AppRoot != "" && r.path == "/" {
		return answer{srv: srv, what: "redirect 302 to " + rootSlash(r.scheme+"://"+r.host+pol.AppRoot)}
	}
	if r.scheme == "http" && (srv.SSLRedirect || pol.ForceSSLRedirect) {
		uri := r.path
		if !pol.PreserveTrailingSlash {
			uri = strings.TrimSuffix(uri, "/")
		}
		code := s.m.Config.HTTPRedirectCode
		if code == 0 {
			code = 308
		}
		return answer{srv: srv, what: fmt.Sprintf("redirect %d to %s", code, rootSlash("https://"+r.host+uri))}
	}
	loc := srv.Match(r.path)
	if loc == nil {
		loc = srv.Default
	}
	if loc == nil {
		return answer{srv: srv, what: "no location: 404"}
	}
	return answer{srv: srv, loc: loc, what: s.action(loc.Action, r)}
}

// action says what a location's action does with r.
func (s *side) action(a model.Action, r request) string {
	switch {
	case a.Redirect != nil:
		return redirect(a.Redirect, r)
	case a.Return != nil:
		return "return " + strconv.Itoa(a.Return.Status)
	case a.Proxy != nil:
		return "proxy to " + s.proxy(a.Proxy, r)
	}
	return "nothing"
}

func redirect(rd *model.Redirect, r request) string {
	url := rd.URL
	if url == "" {
		url = expand(rd.Template, r)
	}
	return fmt.Sprintf("redirect %d to %s", rd.Code, rootSlash(url))
}

// rootSlash writes an absolute URL without a path with the path "/",
// which it means (RFC 9110, 4.2.3).
func rootSlash(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if ok && !strings.ContainsAny(rest, "/?#") {
		return scheme + "://" + rest + "/"
	}
	return url
}

// expand evaluates a template for r; a variable it does not know stays
// as written.
func expand(t model.Template, r request) string {
	var b strings.Builder
	for _, p := range t {
		switch p.Variable {
		case "":
			b.WriteString(p.Literal)
		case "scheme":
			b.WriteString(r.scheme)
		case "host", "best_http_host", "server_name":
			b.WriteString(r.host)
		case "request_uri", "uri", "escaped_request_uri":
			b.WriteString(r.path)
		case "is_args", "args", "query_string":
		default:
			b.WriteString("$" + p.Variable)
		}
	}
	return b.String()
}

// proxy describes where a proxy sends r: its backend, or its split's
// rules and weights (the weights as shares, so that 9:1 and 90:10 read
// alike), and the fallback.
func (s *side) proxy(p *model.Proxy, r request) string {
	var b strings.Builder
	if sp := p.Split; sp != nil {
		if sp.Primary != "" {
			fmt.Fprintf(&b, "canary split of %s (a pick without endpoints goes to it): ", sp.Primary)
		}
		for _, rule := range sp.Rules {
			var conds []string
			for _, c := range rule.Conditions {
				conds = append(conds, condition(c))
			}
			fmt.Fprintf(&b, "when %s: %s; ", strings.Join(conds, " and "), targets(sp, rule.Targets, r))
		}
		b.WriteString("otherwise " + targets(sp, sp.Default, r))
	} else {
		b.WriteString(p.Backend)
	}
	if p.Fallback != "" {
		b.WriteString(", " + p.Fallback + " while it has no endpoint")
	}
	return b.String()
}

func condition(c model.Condition) string {
	name := c.Name
	if c.Kind == model.ConditionHeader {
		name = strings.ToLower(name)
	}
	op := " " + string(c.Match) + " "
	if c.Negate {
		op = " not" + op
	}
	return string(c.Kind) + " " + name + op + strconv.Quote(c.Value)
}

// targets lists a split's targets with their shares of the requests.
func targets(sp *model.Split, ts []model.Target, r request) string {
	total := 0
	for _, t := range ts {
		total += t.Weight
	}
	var out []string
	for _, t := range ts {
		if t.Weight == 0 {
			continue
		}
		what := t.Backend
		if t.Answer > 0 && t.Answer <= len(sp.Answers) {
			a := sp.Answers[t.Answer-1]
			if a.Redirect != nil {
				what = redirect(a.Redirect, r)
			} else if a.Return != nil {
				what = "return " + strconv.Itoa(a.Return.Status)
			}
		}
		if total != t.Weight {
			what += " " + strconv.FormatFloat(math.Round(float64(t.Weight)*10000/float64(total))/100, 'f', -1, 64) + "%"
		}
		out = append(out, what)
	}
	if len(out) == 0 {
		return "nothing (no weight)"
	}
	return strings.Join(out, ", ")
}
