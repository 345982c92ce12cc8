package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
)

// A backend verified by a ConfigMap's CA bundle or the system's: the
// bundle's path, and an error for what cannot be printed (nginx would
// refuse the whole configuration, or verify against nothing).
func TestUpstreamTLSCASources(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tls     model.UpstreamTLS
		params  Params
		want    string
		wantErr string
	}{
		{name: "a ConfigMap's", tls: model.UpstreamTLS{CAConfigMap: "shop/backend-ca", Verify: true},
			want: `proxy_ssl_trusted_certificate "/var/lib/causeway/secrets/shop_backend-ca_configmap_ca.pem";`},
		{name: "the system's", tls: model.UpstreamTLS{SystemCAs: true, Verify: true},
			want: `proxy_ssl_trusted_certificate "/etc/ssl/certs/ca-certificates.crt";`},
		{name: "the system's elsewhere", tls: model.UpstreamTLS{SystemCAs: true, Verify: true},
			params: Params{SystemCAFile: "/etc/pki/tls/certs/ca-bundle.crt"},
			want:   `proxy_ssl_trusted_certificate "/etc/pki/tls/certs/ca-bundle.crt";`},
		{name: "a ConfigMap not in the model", tls: model.UpstreamTLS{CAConfigMap: "shop/missing", Verify: true}, wantErr: "not in the model"},
		{name: "both", tls: model.UpstreamTLS{CAConfigMap: "shop/backend-ca", SystemCAs: true, Verify: true}, wantErr: "both"},
		{name: "a malformed key", tls: model.UpstreamTLS{CAConfigMap: "no-slash", Verify: true}, wantErr: "no-slash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tls := tc.tls
			m := policyModel(&model.Server{Host: "tls.example.com", Locations: []*model.Location{
				loc(model.Prefix, "/", &model.Policy{Protocol: model.ProtocolHTTPS, UpstreamTLS: &tls}),
			}})
			m.ProxyCAs = []*model.ProxyCA{{Namespace: "shop", Name: "backend-ca", CA: []byte("ca")}, {Namespace: "", Name: "no-slash", CA: []byte("ca")}}
			p := tc.params
			p.StateDir, p.HTTPPort, p.HTTPSPort = layout.Dir("/var/lib/causeway"), 80, 443
			out, err := Render(m, p)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v; want one holding %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var all strings.Builder
			for _, data := range out.Files {
				all.Write(data)
			}
			if !strings.Contains(all.String(), tc.want) {
				t.Errorf("no %q in\n%s", tc.want, all.String())
			}
		})
	}
}

// A ConfigMap's CA bundle is read at reload only: a changed one changes
// the version.
func TestProxyCAChangesVersion(t *testing.T) {
	version := func(ca string) string {
		m := policyModel(&model.Server{Host: "tls.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{Protocol: model.ProtocolHTTPS, UpstreamTLS: &model.UpstreamTLS{CAConfigMap: "shop/backend-ca", Verify: true}}),
		}})
		m.ProxyCAs = []*model.ProxyCA{{Namespace: "shop", Name: "backend-ca", CA: []byte(ca)}}
		out, err := Render(m, Params{StateDir: layout.Dir("/var/lib/causeway"), HTTPPort: 80, HTTPSPort: 443})
		if err != nil {
			t.Fatal(err)
		}
		return out.Version
	}
	if version("one") == version("two") {
		t.Errorf("the version does not follow the CA bundle")
	}
}
