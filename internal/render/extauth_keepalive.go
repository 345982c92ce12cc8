package render

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// External authentication through an upstream of the server's file: with
// a keepalive pool (auth-keepalive), and for an auth URL with variables
// and a literal host (extauth_template.go), whose proxy_pass names
// variables: nginx would resolve a literal host per request then, which
// needs a resolver, while an upstream's host is resolved when nginx loads
// the file. The upstream sits ahead of the server block, so that nginx
// blames a host it cannot resolve on the objects of that file, as for a
// literal URL. It is named once the file is known (serverView.name), like
// the maps. With keepalive, the internal location proxies to it over
// HTTP/1.1 with an empty Connection header, as nginx's keepalive needs.

// authUpstreamView is one upstream towards a service.
type authUpstreamView struct {
	// Name is set by nameAuthUpstreams; Server is host:port.
	Name, Server string
	// Keepalive, Requests and Timeout are the pool's; 0 for none.
	Keepalive int
	Requests  int    `json:",omitempty"`
	Timeout   string `json:",omitempty"`
	// Scheme and Path (with the query, and braced variables) are the
	// rest of the URL asked; Path needs no escaping inside quotes.
	Scheme, Path string
}

// planAuthKeepalive makes the location's subrequest to a literal URL go
// through a new upstream with a pool.
func (sp *serverPlan) planAuthKeepalive(lv *authLocationView, a *model.ExternalAuth) error {
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
	return sp.planAuthUpstream(lv, a.Keepalive, u.Scheme, authHostPort(u), rest)
}

// planAuthUpstream makes the location's subrequest go through a new
// upstream towards server, with k's pool (nil for none); PassURL is then
// filled by nameAuthUpstreams. path is printed as is inside quotes.
func (sp *serverPlan) planAuthUpstream(lv *authLocationView, k *model.AuthKeepalive, scheme, server, path string) error {
	if scheme != "http" && scheme != "https" {
		return fmt.Errorf("auth upstream scheme %q", scheme)
	}
	up := authUpstreamView{Server: server, Scheme: scheme, Path: path}
	if k != nil {
		if err := k.Validate(); err != nil {
			return err
		}
		up.Keepalive, up.Requests = k.Connections, k.Requests
		var err error
		if up.Timeout, err = nginxTime(k.Timeout); err != nil {
			return err
		}
		lv.Keepalive = true
	}
	lv.Upstream = len(sp.v.AuthUpstreams) + 1
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

// nameAuthUpstreams names the server's upstreams after id and points
// their locations at them. The views are copied: a shared file's view
// shares its slices with its first member's.
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
		if lv.Upstream > 0 {
			// The name is of a fixed grammar, the rest needed no
			// escaping (planAuthUpstream's callers).
			up := ups[lv.Upstream-1]
			lv.PassURL = `"` + up.Scheme + "://" + up.Name + up.Path + `"`
		}
		locs[i] = lv
	}
	v.AuthUpstreams, v.AuthLocations = ups, locs
}
