package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestHTTPSRedirectShape checks the two shapes of the redirect to HTTPS:
// the ConfigMap's (its code, the HTTPS port when it is not 443, one
// trailing slash dropped) and a VirtualServer's tls.redirect, which is
// NGINX Ingress Controller's (its own code and basis, the host and URI as
// sent, no port on the controller's listeners).
func TestHTTPSRedirectShape(t *testing.T) {
	tls := &model.ServerTLS{Secret: "shop/tls"}
	listeners := &model.ServerListeners{HTTPS: &model.HTTPListener{Name: "https-9443", Port: 9443, SSL: true}}
	for _, tc := range []struct {
		name      string
		redirect  *model.HTTPSRedirect
		listeners *model.ServerListeners
		want      string
	}{
		{"the ConfigMap's", nil, nil,
			"if ($causeway_forwarded_proto = \"http\") {\n        return 308 https://$host:8443$causeway_redirect_uri;"},
		{"a VirtualServer's, on the scheme", &model.HTTPSRedirect{Code: 301, BasedOn: model.RedirectOnScheme}, nil,
			"if ($causeway_forwarded_proto = \"http\") {\n        return 301 https://$host$request_uri;"},
		{"a VirtualServer's, on X-Forwarded-Proto", &model.HTTPSRedirect{Code: 302, BasedOn: model.RedirectOnForwardedProto}, nil,
			"if ($http_x_forwarded_proto = \"http\") {\n        return 302 https://$host$request_uri;"},
		{"a VirtualServer's on its own HTTPS listener keeps that port", &model.HTTPSRedirect{Code: 301, BasedOn: model.RedirectOnScheme}, listeners,
			"if ($causeway_forwarded_proto = \"http\") {\n        return 301 https://$host:9443$request_uri;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &model.Server{Host: "a.example.com", TLS: tls, SSLRedirect: true, HTTPSRedirect: tc.redirect,
				Listeners: tc.listeners, Locations: []*model.Location{loc(model.Prefix, "/", nil)}}
			m := policyModel(srv)
			m.Secrets = []*model.TLSSecret{{Namespace: "shop", Name: "tls", PEM: []byte("pem")}}
			if tc.listeners != nil {
				m.HTTPListeners = []*model.HTTPListener{tc.listeners.HTTPS}
			}
			p := goldenParams
			p.HTTPSPort = 8443
			out, err := Render(m, p)
			if err != nil {
				t.Fatal(err)
			}
			for name, f := range out.Files {
				if strings.HasPrefix(name, "servers/a.example.com") {
					if !strings.Contains(string(f), tc.want) {
						t.Errorf("%s:\n%s\nwant %s", name, f, tc.want)
					}
					return
				}
			}
			t.Errorf("no server file in %v", out.Files.Names())
		})
	}
	for _, bad := range []model.HTTPSRedirect{{Code: 200, BasedOn: model.RedirectOnScheme}, {Code: 301, BasedOn: "header"}} {
		srv := &model.Server{Host: "a.example.com", SSLRedirect: true, HTTPSRedirect: &bad, Locations: []*model.Location{loc(model.Prefix, "/", nil)}}
		if _, err := Render(policyModel(srv), goldenParams); err == nil {
			t.Errorf("%+v rendered", bad)
		}
	}
}
