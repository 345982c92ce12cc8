package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

type serverView struct {
	// Sources are the quoted Ingresses behind the server, printed one
	// per comment line: nginx refuses any token, comments included,
	// longer than its 4 KiB read buffer.
	Sources       []string
	ServerNames   []string
	ListenHTTP    string
	ListenHTTPS   string
	DefaultServer bool
	Cert          string
	CertLua       string
	Redirect      bool
	RedirectPort  string
	Locations     []locationView
	// Maps, in a server shared by several hosts, give each location's
	// backend per host (see group.go).
	Maps []mapView
}

type locationView struct {
	Exact bool
	Path  string
	// Backend is the key of the backend a dynamic-mode location selects
	// ("" for none), and Select the directive that selects it.
	Backend string
	Select  string
	// Body holds the location's other directives, one per line, each
	// prepared from validated or quoted values.
	Body []string
}

// planServer prepares one host's server for the template.
func planServer(m *model.Model, backends map[string]*model.Backend, srv *model.Server, p Params, lua bool) (*serverView, error) {
	v := &serverView{}
	name, err := serverName(srv.Host)
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
	v.DefaultServer = srv.Host == ""
	for _, ref := range srv.Ingresses {
		q, err := Quote(ref.Namespace + "/" + ref.Name)
		if err != nil {
			return nil, err
		}
		v.Sources = append(v.Sources, q)
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
	return v, nil
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
		if lua && l.Backend != "" {
			lv.Backend = l.Backend
			if lv.Select, err = BackendDirective(l.Backend); err != nil {
				return err
			}
			lv.Select = strings.TrimSpace(lv.Select)
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
// location names its key (locationView.Select, set by the caller) and
// proxies to the one Lua upstream, whose balancer sends requests for a
// backend without a ready endpoint to a local server that answers 503, so
// endpoint changes never alter this file. In plain mode it proxies to the
// backend's own upstream, or answers 503 when there is none.
func locationBody(l *model.Location, backends map[string]*model.Backend, lua bool) ([]string, error) {
	if l.Backend == "" {
		return []string{fmt.Sprintf("return %d;", l.Status)}, nil
	}
	if lua {
		var body []string
		// The balancer runs for every request. The other hooks run only
		// where the backend's method uses them: sticky sets its
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
