package render

import (
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// External authentication URLs with variables (model.URLTemplate), as
// oauth2-proxy's recipe writes them. nginx builds them per request from
// the template's parts, printed here inside quotes: literals that need no
// escaping and braced variables of the model's allowlist. Two of
// ingress-nginx's variables are Causeway's own:
//   - $escaped_request_uri is $causeway_escaped_request_uri, which the Lua
//     data plane computes in the location that needs it (nginx has no
//     URL-encoding of its own; ingress-nginx uses set-misc's
//     set_escape_uri), and only there: the sign-in location runs for
//     401s only;
//   - $best_http_host is $causeway_best_http_host, a map of nginx.conf:
//     the Host header as sent, or $host without one.
//
// An auth URL whose host is $host does not look the host up in DNS, which
// would need a resolver and lead back to this nginx anyway: the internal
// location proxies to the server of the request's host over a private
// unix socket (the loop), which every server asking it listens on, with
// the Host header and TLS server name $host. The socket has no PROXY
// protocol, so it works whatever the public listeners need. A request
// that comes over the loop carries Causeway-Auth-Loop, and a loop asked
// again from it answers 508: a service path that is itself protected by
// $host authentication would otherwise recurse until nginx runs out of
// connections.

// The loop's upstreams: their names end in the scheme, so that a
// template with $scheme picks one per request.
const (
	authLoopUpstream = "causeway_auth_loop_"
	authLoopHeader   = "Causeway-Auth-Loop"
)

// authLoopView is the loop's sockets, for the listen lines of the servers
// that ask it and for nginx.conf's upstreams and default server.
type authLoopView struct {
	HTTP, HTTPS string
}

// planAuthLoop returns the loop's sockets, checked to need no quoting.
func planAuthLoop(p Params) (*authLoopView, error) {
	var v authLoopView
	var err error
	if v.HTTP, err = quotedPathBody(p.StateDir.AuthLoopSocket("http")); err != nil {
		return nil, err
	}
	if v.HTTPS, err = quotedPathBody(p.StateDir.AuthLoopSocket("https")); err != nil {
		return nil, err
	}
	return &v, nil
}

// templateVar is the nginx variable a template's variable is printed as.
func templateVar(name string, lua bool) (string, error) {
	if !model.URLTemplateVar(name) {
		return "", fmt.Errorf("URL template variable %q is not allowed", name)
	}
	switch name {
	case model.URLVarEscapedRequestURI:
		if !lua {
			return "", fmt.Errorf("$%s needs the Lua data plane", name)
		}
		return "causeway_escaped_request_uri", nil
	case model.URLVarBestHTTPHost:
		return "causeway_best_http_host", nil
	}
	return name, nil
}

// templateText prints parts for the inside of a quoted string, and says
// whether they use $escaped_request_uri.
func templateText(parts []model.URLPart, lua bool) (string, bool, error) {
	var b strings.Builder
	escaped := false
	for _, p := range parts {
		if p.Var != "" {
			v, err := templateVar(p.Var, lua)
			if err != nil {
				return "", false, err
			}
			escaped = escaped || p.Var == model.URLVarEscapedRequestURI
			b.WriteString("${" + v + "}")
			continue
		}
		if q, err := Quote(p.Literal); err != nil || q != `"`+p.Literal+`"` || strings.ContainsAny(p.Literal, "{} \t;#") {
			return "", false, fmt.Errorf("URL template literal %q must not need quoting", p.Literal)
		}
		b.WriteString(p.Literal)
	}
	return b.String(), escaped, nil
}

// planAuthTemplate fills where the internal location sends the
// subrequest of an auth URL with variables.
func (sp *serverPlan) planAuthTemplate(lv *authLocationView, a *model.ExternalAuth) error {
	t, err := model.AuthURLTemplate(a.URL)
	if err != nil || t.String() != a.URL {
		return fmt.Errorf("auth URL %q is not one ParseAuthURL returns", a.URL)
	}
	rest, escaped, err := templateText(t.Rest, sp.rc.lua)
	if err != nil {
		return fmt.Errorf("auth URL: %w", err)
	}
	lv.EscapedURI = escaped
	if !t.SelfHost() {
		if string(a.Host) != t.Host {
			return fmt.Errorf("auth host %q is not the URL's %q", a.Host, t.Host)
		}
		lv.HTTPS = t.Scheme == "https"
		if lv.Host, err = Quote(t.Host); err != nil {
			return fmt.Errorf("auth host: %w", err)
		}
		server := t.Host + ":" + map[string]string{"http": "80", "https": "443"}[t.Scheme]
		if t.Port != 0 {
			server = fmt.Sprintf("%s:%d", t.Host, t.Port)
		}
		return sp.planAuthUpstream(lv, a.Keepalive, t.Scheme, server, rest)
	}
	switch {
	case a.Keepalive != nil:
		return fmt.Errorf("auth URL %q with $host has no pool of its own", a.URL)
	case a.Host != "":
		return fmt.Errorf("auth URL %q with $host and a Host %q", a.URL, a.Host)
	case sp.srv.Host == "":
		// The build closes these paths: $host would be the client's choice.
		return fmt.Errorf("auth URL %q with $host in the catch-all server", a.URL)
	}
	if sp.rc.authLoop == nil {
		if sp.rc.authLoop, err = planAuthLoop(sp.rc.p); err != nil {
			return err
		}
	}
	sp.v.AuthLoop = sp.rc.authLoop
	scheme := t.Scheme
	if scheme == "" {
		scheme = "${scheme}"
	}
	// The server of the request's host answers on the loop whatever the
	// template's host variable: $best_http_host's port part would not
	// change which server that is.
	lv.PassURL = `"` + scheme + "://" + authLoopUpstream + scheme + rest + `"`
	lv.Host, lv.SSLName, lv.Loop = "$host", "$host", true
	lv.HTTPS = t.Scheme != "http"
	return nil
}

// signinTemplate prints a sign-in URL with variables into s: the
// redirect parameter is added as for a literal URL where the template's
// query is known.
func (sp *serverPlan) signinTemplate(s *signinLocationView, a *model.ExternalAuth) error {
	t, err := model.ParseURLTemplate(a.SigninURL)
	if err != nil || t.String() != a.SigninURL {
		return fmt.Errorf("sign-in URL %q is not one ParseSigninURL returns", a.SigninURL)
	}
	text, escaped, err := templateText(t.Parts(), sp.rc.lua)
	if err != nil {
		return fmt.Errorf("sign-in URL: %w", err)
	}
	var b strings.Builder
	b.WriteString(text)
	s.EscapedURI = escaped
	if sp.rc.lua && !t.QueryHas(a.RedirectParam) && !t.RequestURIInPath() {
		sep := "?"
		if t.QueryKnown() {
			sep = "&"
		}
		b.WriteString(sep + a.RedirectParam + "=${causeway_auth_rd}")
		s.RD = true
	}
	s.Return = `"` + b.String() + `"`
	return nil
}

// planMainAuthTemplates plans what nginx.conf holds for the servers' URL
// templates: the loop's upstreams and default server when a location
// asks its own host, and the $causeway_best_http_host map when a
// template names $best_http_host.
func (v *mainView) planMainAuthTemplates(m *model.Model, p Params) error {
	loop := false
	add := func(a *model.ExternalAuth) {
		if a == nil {
			return
		}
		for i, u := range []string{a.URL, a.SigninURL} {
			if t, err := model.ParseURLTemplate(u); err == nil && strings.Contains(u, "$") {
				v.BestHTTPHost = v.BestHTTPHost || t.Uses(model.URLVarBestHTTPHost)
				loop = loop || i == 0 && t.SelfHost()
			}
		}
	}
	for _, s := range m.Servers {
		for _, l := range s.Locations {
			if l.Policy != nil {
				add(l.Policy.ExternalAuth)
			}
		}
		if l := s.Default; l != nil && l.Policy != nil {
			add(l.Policy.ExternalAuth)
		}
	}
	if loop {
		var err error
		if v.AuthLoop, err = planAuthLoop(p); err != nil {
			return err
		}
	}
	return nil
}
