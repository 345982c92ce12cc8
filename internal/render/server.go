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
	// Modifier is "=" for an exact location, "" for a prefix.
	Modifier string
	Path     string
	// Backend is the key of the backend a dynamic-mode location selects
	// ("" for none); SelectKey is its quoted form, or SelectMap the map
	// variable that selects it per host in a shared server.
	Backend   string
	SelectKey string
	SelectMap string
	// Exactly one of Return, Pass is set.
	Return int
	// Pass is the proxy directive ("proxy_pass") and PassURL its target.
	Pass, PassURL string
	// HeaderFilter and LogHook install the balancer's Lua hooks.
	HeaderFilter, LogHook bool
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
	for _, ref := range srv.Sources {
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
		if l.Match.Type == model.Exact {
			exact[l.Match.Path] = true
		} else if l.Match.Path == "/" {
			hasRoot = true
		}
	}
	var out []locationView
	add := func(l *model.Location, isExact bool, path string) error {
		q, err := Quote(path)
		if err != nil {
			return err
		}
		lv := locationView{Path: q}
		if isExact {
			lv.Modifier = "="
		}
		if err := locationBody(&lv, l, backends, lua); err != nil {
			return err
		}
		out = append(out, lv)
		return nil
	}
	for _, l := range srv.Locations {
		var err error
		m := l.Match
		switch {
		case m.Type == model.Exact:
			err = add(l, true, m.Path)
		case m.Path == "/":
			err = add(l, false, "/")
		default:
			if !exact[m.Path] {
				if err = add(l, true, m.Path); err != nil {
					return nil, err
				}
			}
			err = add(l, false, m.Path+"/")
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
		if err := add(target, true, bare); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// locationBody is what a location does. In dynamic mode every backend
// location names its key (locationView.SelectKey) and proxies to the one
// Lua upstream, whose balancer sends requests for a backend without a
// ready endpoint to a local server that answers 503, so endpoint changes
// never alter this file. In plain mode it proxies to the backend's own
// upstream, or answers 503 when there is none.
func locationBody(lv *locationView, l *model.Location, backends map[string]*model.Backend, lua bool) error {
	switch a := l.Action; {
	case a.Return != nil:
		lv.Return = a.Return.Status
		return nil
	case a.Proxy == nil:
		return fmt.Errorf("location %q has no action", l.Match.Path)
	}
	key := l.Action.Proxy.Backend
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
		if b != nil {
			switch b.Balance.Method {
			case model.Sticky:
				lv.HeaderFilter = true
			case model.LeastConn, model.EWMA, model.P2C:
				lv.LogHook = true
			}
		}
		lv.PassURL = "http://" + balancer.UpstreamName
		return nil
	}
	if b == nil || len(b.Endpoints) == 0 {
		lv.Pass, lv.Return = "", 503 // no ready endpoints
		return nil
	}
	name, err := upstreamName(key)
	if err != nil {
		return err
	}
	lv.PassURL = "http://" + name
	return nil
}
