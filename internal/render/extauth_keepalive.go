package render

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// External authentication with a keepalive pool (auth-keepalive): the
// service's host and port become an upstream of the server's file, ahead
// of its server block, with keepalive, keepalive_requests and
// keepalive_timeout; the internal location proxies to it over HTTP/1.1
// with an empty Connection header, as nginx's keepalive needs. The
// upstream sits in the server's file so that nginx blames a host it
// cannot resolve on the objects of that file, as for a literal URL. It is
// named once the file is known (serverView.name), like the maps.

// authUpstreamView is one keepalive upstream towards a service.
type authUpstreamView struct {
	// Name is set by nameAuthUpstreams; Server is host:port.
	Name, Server string
	Keepalive    int
	Requests     int
	Timeout      string
	// Scheme and Path (with the query) are the rest of the URL asked.
	Scheme, Path string
}

// planAuthKeepalive makes the location's subrequest go through a new
// upstream; PassURL is then filled by nameAuthUpstreams.
func (sp *serverPlan) planAuthKeepalive(lv *authLocationView, a *model.ExternalAuth) error {
	k := a.Keepalive
	if err := k.Validate(); err != nil {
		return err
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		return err
	}
	// planAuthTarget checked the URL is one ParseAuthURL rebuilds; it
	// must also need no escaping, as its parts are printed in quotes.
	if q, err := Quote(a.URL); err != nil || q != `"`+a.URL+`"` {
		return fmt.Errorf("auth URL %q needs escaping", a.URL)
	}
	rest, ok := strings.CutPrefix(a.URL, u.Scheme+"://"+u.Host)
	if !ok || !strings.HasPrefix(rest, "/") {
		return fmt.Errorf("auth URL %q has no path after its host", a.URL)
	}
	up := authUpstreamView{Server: authHostPort(u), Keepalive: k.Connections, Requests: k.Requests, Scheme: u.Scheme, Path: rest}
	if up.Timeout, err = nginxTime(k.Timeout); err != nil {
		return err
	}
	lv.Keepalive = len(sp.v.AuthUpstreams) + 1
	lv.PassURL = ""
	if lv.HTTPS {
		// The upstream's name would be the TLS server name otherwise.
		lv.SSLName = lv.Host
	}
	sp.v.AuthUpstreams = append(sp.v.AuthUpstreams, up)
	return nil
}

// authHostPort is a URL's host and port for an upstream's server line,
// with the scheme's port when the URL has none.
func authHostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	host := u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + port
}

// nameAuthUpstreams names the server's keepalive upstreams after id and
// points their locations at them. The views are copied: a shared file's
// view shares its slices with its first member's.
func (v *serverView) nameAuthUpstreams(id string) {
	if len(v.AuthUpstreams) == 0 {
		return
	}
	ups := make([]authUpstreamView, len(v.AuthUpstreams))
	for i, up := range v.AuthUpstreams {
		up.Name = "causeway_auth_" + id + "_" + strconv.Itoa(i)
		ups[i] = up
	}
	locs := make([]authLocationView, len(v.AuthLocations))
	for i, lv := range v.AuthLocations {
		if lv.Keepalive > 0 {
			// The name is of a fixed grammar, the rest needed no
			// escaping (planAuthKeepalive).
			up := ups[lv.Keepalive-1]
			lv.PassURL = `"` + up.Scheme + "://" + up.Name + up.Path + `"`
		}
		locs[i] = lv
	}
	v.AuthUpstreams, v.AuthLocations = ups, locs
}
