package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

type serverView struct {
	Sources       string
	ServerName    string
	ListenHTTP    string
	ListenHTTPS   string
	DefaultServer bool
	Cert          string
	CertLua       string
	Redirect      bool
	RedirectPort  string
	Locations     []locationView
}

type locationView struct {
	Exact bool
	Path  string
	// Body holds the location's directives, one per line, each prepared
	// from validated or quoted values.
	Body []string
}

func renderServer(m *model.Model, backends map[string]*model.Backend, srv *model.Server, p Params, lua bool) ([]byte, error) {
	var v serverView
	var err error
	if v.ServerName, err = serverName(srv.Host); err != nil {
		return nil, err
	}
	if v.ListenHTTP, err = listen(p.ListenAddress, p.HTTPPort); err != nil {
		return nil, err
	}
	if v.ListenHTTPS, err = listen(p.ListenAddress, p.HTTPSPort); err != nil {
		return nil, err
	}
	v.DefaultServer = srv.Host == ""
	var sources []string
	for _, ref := range srv.Ingresses {
		q, err := Quote(ref.Namespace + "/" + ref.Name)
		if err != nil {
			return nil, err
		}
		sources = append(sources, q)
	}
	v.Sources = strings.Join(sources, " ")
	if v.Sources == "" {
		v.Sources = "none"
	}
	if srv.TLS != nil && srv.TLS.Secret != "" {
		mode := certAtReload
		switch {
		case m.Config.ReloadFreeCertificates && lua:
			mode = certLua
		case m.Config.ReloadFreeCertificates:
			mode = certPerHandshake
		}
		if v.Cert, v.CertLua, err = certDirectives(p.StateDir, srv.TLS.Secret, mode); err != nil {
			return nil, err
		}
	}
	v.Redirect = srv.SSLRedirect
	if p.HTTPSPort != 443 {
		v.RedirectPort = ":" + strconv.Itoa(p.HTTPSPort)
	}
	if v.Locations, err = locations(backends, srv, lua); err != nil {
		return nil, err
	}
	return execute("server.conf.tmpl", &v)
}

// locations maps Ingress paths onto nginx locations. nginx checks "="
// locations first, then picks the longest matching prefix, which is exactly
// the Ingress rule (longest match, Exact first on a tie) provided that a
// Prefix path P becomes two locations: "= P" for the path itself and "P/"
// for everything below it. The Prefix "= P" is dropped when an Exact P
// exists, because Exact wins the tie. The root prefix is "/", and the
// server's default answers through "/" when no Prefix "/" exists.
func locations(backends map[string]*model.Backend, srv *model.Server, lua bool) ([]locationView, error) {
	exact := map[string]bool{}
	hasRoot := false
	for _, l := range srv.Locations {
		if l.Type == model.Exact {
			exact[l.Path] = true
		} else if l.Path == "/" {
			hasRoot = true
		}
	}
	var out []locationView
	add := func(l *model.Location, isExact bool, path string) error {
		q, err := Quote(path)
		if err != nil {
			return err
		}
		lv := locationView{Exact: isExact, Path: q}
		if lv.Body, err = locationBody(l, backends, lua); err != nil {
			return err
		}
		out = append(out, lv)
		return nil
	}
	for _, l := range srv.Locations {
		var err error
		switch {
		case l.Type == model.Exact:
			err = add(l, true, l.Path)
		case l.Path == "/":
			err = add(l, false, "/")
		default:
			if !exact[l.Path] {
				if err = add(l, true, l.Path); err != nil {
					return nil, err
				}
			}
			err = add(l, false, l.Path+"/")
		}
		if err != nil {
			return nil, err
		}
	}
	if !hasRoot && srv.Default != nil {
		if err := add(srv.Default, false, "/"); err != nil {
			return nil, err
		}
	}
	// nginx answers "/foo" with a 301 to "/foo/" when a proxied location
	// "/foo/" exists and nothing else names "/foo" exactly. Ingress has no
	// such redirect, so every such path gets an explicit "= /foo" routed to
	// whatever the Ingress rules say "/foo" matches.
	named := map[string]bool{}
	for _, l := range srv.Locations {
		named[l.Path] = true // Exact P is "= P"; Prefix P emits "= P" too
	}
	for _, l := range srv.Locations {
		bare := strings.TrimSuffix(l.Path, "/")
		if l.Type != model.Exact || bare == "" || bare == l.Path || named[bare] {
			continue
		}
		named[bare] = true
		target := srv.Match(bare)
		if target == nil {
			target = srv.Default
		}
		if target == nil {
			target = &model.Location{Status: 404}
		}
		if err := add(target, true, bare); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// locationBody is what a location does. In dynamic mode every backend
// location names its key and proxies to the one Lua upstream (the Lua
// access hook answers 503 while the backend has no ready endpoint), so
// endpoint changes never alter this file. In plain mode it proxies to the
// backend's own upstream, or answers 503 when there is none.
func locationBody(l *model.Location, backends map[string]*model.Backend, lua bool) ([]string, error) {
	if l.Backend == "" {
		return []string{fmt.Sprintf("return %d;", l.Status)}, nil
	}
	if lua {
		set, err := balancer.BackendDirective(l.Backend)
		if err != nil {
			return nil, err
		}
		body := []string{strings.TrimSpace(set)}
		// The access hook is inherited from the http level. The others
		// run only where the backend's method uses them: sticky sets its
		// cookie in the header filter; least_conn, ewma and p2c count
		// in-flight requests and latency in the log phase. Round robin
		// and chash need neither, which saves two Lua calls per request.
		var method balancer.Method
		if b := backends[l.Backend]; b != nil {
			method = b.Balance.Method
		}
		switch method {
		case balancer.Sticky:
			body = append(body, `header_filter_by_lua_block { require("causeway.balancer").header_filter() }`)
		case balancer.LeastConn, balancer.EWMA, balancer.P2C:
			body = append(body, `log_by_lua_block { require("causeway.balancer").log() }`)
		}
		return append(body, "proxy_pass http://"+balancer.UpstreamName+";"), nil
	}
	if b := backends[l.Backend]; b == nil || len(b.Endpoints) == 0 {
		return []string{"return 503;"}, nil // no ready endpoints
	}
	name, err := upstreamName(l.Backend)
	if err != nil {
		return nil, err
	}
	return []string{"proxy_pass http://" + name + ";"}, nil
}
