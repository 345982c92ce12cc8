package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestOCSPStapling: with enable-ocsp, a certificate served by Lua names
// its OCSP file whether a response exists yet or not (so a new response
// changes no configuration); one loaded at reload gets nginx's own
// stapling of the response file, only when there is one.
func TestOCSPStapling(t *testing.T) {
	lua := goldenParams
	lua.Dynamic = &Dynamic{Modules: []string{"/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"}}
	for _, tc := range []struct {
		name           string
		params         Params
		reloadFree     bool
		staple         []byte
		want, wantNone string
	}{
		{"lua, no response yet", lua, true, nil, `serve("/var/lib/causeway/secrets/shop_tls.pem", "/var/lib/causeway/secrets/shop_tls.ocsp")`, "ssl_stapling"},
		{"lua, a response", lua, true, []byte("der"), `serve("/var/lib/causeway/secrets/shop_tls.pem", "/var/lib/causeway/secrets/shop_tls.ocsp")`, "ssl_stapling"},
		{"at reload, a response", goldenParams, false, []byte("der"), `ssl_stapling_file "/var/lib/causeway/secrets/shop_tls.ocsp";`, "by_lua"},
		{"at reload, none yet", goldenParams, false, nil, `ssl_certificate "/var/lib/causeway/secrets/shop_tls.pem";`, "ssl_stapling"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := policyModel(&model.Server{Host: "tls.example.com", TLS: &model.ServerTLS{Secret: "shop/tls"},
				Locations: []*model.Location{loc(model.Prefix, "/", nil)}})
			m.Secrets = []*model.TLSSecret{{Namespace: "shop", Name: "tls", PEM: []byte("pem"), OCSP: tc.staple}}
			m.Config.EnableOCSP, m.Config.ReloadFreeCertificates = true, tc.reloadFree
			out, err := Render(m, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			var conf string
			for name, data := range out.Files {
				if strings.Contains(name, "tls.example.com") {
					conf = string(data)
				}
			}
			if !strings.Contains(conf, tc.want) || strings.Contains(conf, tc.wantNone) {
				t.Fatalf("server file lacks %q or holds %q:\n%s", tc.want, tc.wantNone, conf)
			}
		})
	}
}
