package render

import (
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// External authentication towards a Service (NGINX Ingress Controller's
// externalAuth Policy): the internal location proxies to the Service's
// backend like any location, with the same endpoints and balancing. In
// the Lua data plane it names the backend in $causeway_auth_backend and
// goes through its own upstream, because a subrequest shares the
// variables of the request it authorizes: setting $causeway_backend would
// send that request to the authentication service too. In plain mode it
// proxies to the backend's upstream, and answers 503 (so the request
// gets 500) while the Service has no ready endpoint.

// planAuthTarget fills where the internal location sends the subrequest:
// the URL of auth-url, or the backend of externalAuth.
func (sp *serverPlan) planAuthTarget(lv *authLocationView, a *model.ExternalAuth) error {
	if a.Backend == "" && strings.Contains(a.URL, "$") {
		return sp.planAuthTemplate(lv, a)
	}
	if a.Backend == "" {
		lv.HTTPS = strings.HasPrefix(a.URL, "https://")
		// The model's grammars are checked again: a URL they would not
		// give back unchanged is refused.
		if u, _, err := model.ParseAuthURL(a.URL); err != nil || u != a.URL {
			return fmt.Errorf("auth URL %q is not one ParseAuthURL returns", a.URL)
		}
		var err error
		if lv.PassURL, err = Quote(a.URL); err != nil {
			return fmt.Errorf("auth URL: %w", err)
		}
		if lv.Host, err = Quote(string(a.Host)); err != nil {
			return fmt.Errorf("auth host: %w", err)
		}
		if a.Keepalive != nil {
			return sp.planAuthKeepalive(lv, a)
		}
		return nil
	}
	if a.Keepalive != nil {
		return fmt.Errorf("auth backend %q with keepalive: only an auth URL has a pool of its own", a.Backend)
	}
	if a.URL != "" {
		return fmt.Errorf("auth backend %q with a URL too", a.Backend)
	}
	if err := model.ValidatePath(a.URI); err != nil {
		return fmt.Errorf("auth URI: %w", err)
	}
	if err := balancer.ValidateKey(a.Backend); err != nil {
		return err
	}
	scheme := "http://"
	if a.TLS != nil {
		scheme = "https://"
		ssl, err := sp.planSSL(a.TLS)
		if err != nil {
			return fmt.Errorf("auth backend TLS: %w", err)
		}
		lv.SSL = ssl
	}
	// The request's host, as NGINX Ingress Controller sends it.
	lv.Host = "$host"
	if sp.rc.lua {
		// ValidateKey admits nothing that needs escaping in quotes.
		lv.AuthBackend = `"` + a.Backend + `"`
		lv.PassURL = scheme + balancer.AuthUpstreamName + a.URI
		return nil
	}
	name, err := upstreamName(a.Backend)
	if err != nil {
		return err
	}
	if b := sp.rc.backends[a.Backend]; b == nil || len(b.Endpoints) == 0 {
		lv.Return = 503
		return nil
	}
	if a.TLS != nil {
		name = tlsUpstream(name)
	}
	lv.PassURL = scheme + name + a.URI
	return nil
}

// signinURI is error_page's target for a 401: a path of this server,
// quoted.
func signinURI(a *model.ExternalAuth) (string, error) {
	if a.SigninURL != "" {
		return "", fmt.Errorf("auth sign-in URI %q with a sign-in URL too", a.SigninURI)
	}
	if err := model.ValidatePath(a.SigninURI); err != nil {
		return "", fmt.Errorf("auth sign-in URI: %w", err)
	}
	return Quote(a.SigninURI)
}

// planAuthBalancer declares the upstream of authentication Services in
// the Lua data plane, when a location asks one.
func (v *mainView) planAuthBalancer(m *model.Model) {
	if v.lua == nil {
		return
	}
	for _, s := range m.Servers {
		for _, l := range s.Locations {
			if l.Policy != nil && l.Policy.ExternalAuth != nil && l.Policy.ExternalAuth.Backend != "" {
				v.AuthBalancer = balancer.AuthUpstreamName
				return
			}
		}
	}
}
