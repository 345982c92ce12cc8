package render

import (
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// twinView is a server block that redirects a host's www./non-www. twin
// name to the host (ingress-nginx's from-to-www-redirect).
type twinView struct {
	// Name is the quoted server_name; Target the quoted redirect URL.
	Name, Target string
}

// planServerPolicy prints srv.Policy into v. names and taken (which may
// be nil) hold every name a server already answers to; aliases and twins
// that one has taken are left out, as ingress-nginx does (a real host
// always beats an alias), and the names used here are added to names.
func planServerPolicy(v *serverView, srv *model.Server, p Params, names, taken map[string]bool) error {
	pol := srv.Policy
	if pol == nil {
		return nil
	}
	claim := func(name string) (string, bool, error) {
		if names[name] || taken[name] {
			return "", false, nil
		}
		if !dnsChars(name, true) || len(name) > 253 {
			return "", false, fmt.Errorf("server name %q is not a DNS name", name)
		}
		q, err := serverName(name)
		if err != nil {
			return "", false, err
		}
		names[name] = true
		v.names = append(v.names, name)
		return q, true, nil
	}
	for _, a := range pol.Aliases {
		q, ok, err := claim(a)
		if err != nil {
			return fmt.Errorf("alias: %w", err)
		}
		if ok {
			v.ServerNames = append(v.ServerNames, q)
		}
	}
	var err error
	if pol.SSLCiphers != "" {
		if v.TLSCiphers, err = ciphers(pol.SSLCiphers); err != nil {
			return err
		}
	}
	if pol.PreferServerCiphers != nil {
		v.PreferServerCiphers = onoff(*pol.PreferServerCiphers)
	}
	if pol.AppRoot != "" {
		if v.AppRoot, err = appRootURL(pol.AppRoot); err != nil {
			return err
		}
	}
	v.Redirect = v.Redirect || pol.ForceSSLRedirect
	v.PreserveTrailingSlash = pol.PreserveTrailingSlash
	if !pol.WWWRedirect || srv.Host == "" || srv.Wildcard() {
		return nil
	}
	twin, found := strings.CutPrefix(srv.Host, "www.")
	if !found {
		twin = "www." + srv.Host
	}
	q, ok, err := claim(twin)
	if err != nil || !ok {
		return err
	}
	uri := varRedirectURI
	if pol.PreserveTrailingSlash {
		uri = varRequestURI
	}
	target, err := hostRedirectURL(srv.Host, p.HTTPPort != 80 || p.HTTPSPort != 443, uri)
	if err != nil {
		return err
	}
	v.Twins = append(v.Twins, twinView{Name: q, Target: target})
	return nil
}
