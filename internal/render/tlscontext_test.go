package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestContextCert: a row per rule of which servers get an SSL context of
// their own (the default certificate) and which use the catch-all's.
func TestContextCert(t *testing.T) {
	const dc = "/d.pem$causeway_cert_reload"
	plainDef := func() *serverView {
		return &serverView{DefaultServer: true, ListenHTTP: "80", ListenHTTPS: "443"}
	}
	host := func() *serverView { return &serverView{ListenHTTP: "80", ListenHTTPS: "443"} }
	for _, tc := range []struct {
		name   string
		def    func() *serverView
		v      func() *serverView
		shares bool
	}{
		{"a host without TLS settings shares a plain catch-all's", plainDef, host, true},
		{"the catch-all itself has one", plainDef, plainDef, false},
		{"no catch-all", func() *serverView { return nil }, host, false},
		{"its own certificate (Cert is printed instead)", plainDef, func() *serverView { v := host(); v.Cert = "/own.pem"; return v }, false},
		{"a certificate by Lua", plainDef, func() *serverView { v := host(); v.CertLua = certsServe + `("/x") }`; return v }, false},
		{"ssl-ciphers", plainDef, func() *serverView { v := host(); v.TLSCiphers = `"HIGH"`; return v }, false},
		{"ssl-prefer-server-ciphers", plainDef, func() *serverView { v := host(); v.PreferServerCiphers = "off"; return v }, false},
		{"client certificates", plainDef, func() *serverView { v := host(); v.ClientTLS = &clientTLSView{Verify: "on"}; return v }, false},
		{"stapling", plainDef, func() *serverView { v := host(); v.StaplingFile = "/o"; return v }, false},
		{"refused handshakes", plainDef, func() *serverView { v := host(); v.RejectHandshake = true; return v }, false},
		{"other TLS addresses", plainDef, func() *serverView { v := host(); v.ListenHTTPS = "8443"; return v }, false},
		{"more TLS addresses", plainDef, func() *serverView { v := host(); v.ListenHTTPSMore = []string{"8443"}; return v }, false},
		{"the auth loop's sockets", plainDef, func() *serverView { v := host(); v.AuthLoop = &authLoopView{}; return v }, false},
		{"a Gateway's catch-all", plainDef, func() *serverView { v := host(); v.DefaultServer = true; return v }, false},
		{"a catch-all refusing handshakes", func() *serverView { d := plainDef(); d.RejectHandshake = true; return d }, host, false},
		{"a catch-all asking for client certificates", func() *serverView { d := plainDef(); d.ClientTLS = &clientTLSView{Verify: "optional"}; return d }, host, false},
		{"a catch-all with ciphers of its own", func() *serverView { d := plainDef(); d.TLSCiphers = `"HIGH"`; return d }, host, false},
		{"a catch-all with a certificate of its own", func() *serverView { d := plainDef(); d.Cert = "/own.pem"; return d }, host, false},
		// The Lua module looks the handler up in the server SNI chose.
		{"a catch-all serving the hosts table's certificates", func() *serverView {
			d := plainDef()
			d.CertLua = certsServeTable + `("/d.pem") }`
			return d
		}, host, false},
		{"a catch-all serving a certificate by Lua", func() *serverView { d := plainDef(); d.CertLua = certsServe + `("/d.pem") }`; return d }, host, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def, v := tc.def(), tc.v()
			if tc.name == "the catch-all itself has one" {
				v = def
			}
			setContextCert(v, def, shareCatchAll(def, false), dc)
			want := dc
			if tc.shares || v.Cert != "" {
				want = ""
			}
			if v.ContextCert() != want {
				t.Fatalf("context certificate %q, want %q", v.ContextCert(), want)
			}
		})
	}
	// A catch-all that will serve the hosts table's certificates by Lua
	// (hop.go) is not shared either.
	def, v := plainDef(), host()
	setContextCert(v, def, shareCatchAll(def, true), dc)
	if v.ContextCert() != dc {
		t.Fatal("a host shares the context of a catch-all that may get a Lua certificate")
	}
	// Without a TLS listener there is no context to have.
	v = &serverView{ListenHTTP: "80"}
	setContextCert(v, nil, false, dc)
	if v.ContextCert() != "" {
		t.Fatalf("an HTTP-only server got %q", v.ContextCert())
	}
}

// TestCheckSharedContext: a server without a context of its own whose text
// sets a server-level ssl_ directive fails; locations and maps do not count.
func TestCheckSharedContext(t *testing.T) {
	v := &serverView{ServerNames: []string{`"a.test"`}, ListenHTTPS: "443"}
	for _, tc := range []struct {
		text string
		fail bool
	}{
		{"# x\nserver {\n    listen 443 ssl;\n    location / {\n        proxy_ssl_verify on;\n    }\n}\n", false},
		{"# x\nserver {\n    listen 443 ssl;\n    ssl_verify_client on;\n}\n", true},
		{"# x\nserver {\n    listen 443 ssl;\n    ssl_ciphers HIGH;\n}\n", true},
		{"# x\nserver {\n    listen 443 ssl;\n    ssl_certificate_by_lua_block { x }\n}\n", true},
		{"# x\nmap $host $m {\n    ssl_x.test 1;\n}\nserver {\n    listen 443 ssl;\n}\n", false},
	} {
		if err := checkSharedContext(v, []byte(tc.text)); (err != nil) != tc.fail {
			t.Errorf("%q: error %v, want failure %v", tc.text, err, tc.fail)
		}
	}
	own := &serverView{ListenHTTPS: "443", contextCert: "/d.pem"}
	if err := checkSharedContext(own, []byte("# x\nserver {\n    ssl_verify_client on;\n}\n")); err != nil {
		t.Errorf("a server with a context of its own: %v", err)
	}
}

// TestSSLContextsRendered: in a whole render the catch-all carries the
// default certificate, which the http level no longer sets; a plain host
// and a shared file of hosts use its context; a host with a setting of its
// own, or any host beside a catch-all that refuses handshakes, gets the
// default certificate in a context of its own.
func TestSSLContextsRendered(t *testing.T) {
	const line = "ssl_certificate /var/lib/causeway/secrets/_default.pem$causeway_cert_reload;"
	model1 := func(reject bool) *model.Model {
		m := policyModel(
			&model.Server{Host: "plain.example.com", Locations: []*model.Location{loc(model.Prefix, "/", nil)}},
			&model.Server{Host: "ciphers.example.com", Locations: []*model.Location{loc(model.Prefix, "/", nil)},
				Policy: &model.ServerPolicy{SSLCiphers: "HIGH"}},
			&model.Server{Host: "", Locations: []*model.Location{loc(model.Prefix, "/", nil)}},
		)
		m.Config.SSLRejectHandshake = reject
		return m
	}
	// With the Lua module, two alike hosts share a shape, whose hop server
	// makes the catch-all serve the hosts table's certificates by Lua.
	alike := func(m *model.Model) *model.Model {
		for _, h := range []string{"a.example.com", "b.example.com"} {
			m.Servers = append(m.Servers, &model.Server{Host: h, Sources: []model.ObjectRef{ingA},
				Locations: []*model.Location{loc(model.Prefix, "/alike", nil)}})
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		reject bool
		model  func(*model.Model) *model.Model
		p      Params
		want   map[string]bool // file name prefix: has the default certificate
	}{
		{"plain catch-all", false, nil, goldenParams, map[string]bool{"servers/_default": true, "servers/plain.": false, "servers/ciphers.": true}},
		{"catch-all refusing handshakes", true, nil, goldenParams, map[string]bool{"servers/_default": true, "servers/plain.": true, "servers/ciphers.": true}},
		{"Lua, no shape shared", false, nil, luaParams, map[string]bool{"servers/plain.": false, "servers/ciphers.": true}},
		{"Lua, a shape shared: the catch-all's certificate is Lua's", false, alike, luaParams,
			map[string]bool{"servers/_default": true, "servers/plain.": true, "servers/_shared": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := model1(tc.reject)
			if tc.model != nil {
				m = tc.model(m)
			}
			out, err := Render(m, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out.Files["nginx.conf"]), "ssl_certificate ") {
				t.Fatal("nginx.conf sets a certificate at the http level")
			}
			for prefix, want := range tc.want {
				found := false
				for name, text := range out.Files {
					if strings.HasPrefix(name, prefix) {
						found = true
						if got := strings.Contains(string(text), line); got != want {
							t.Errorf("%s: default certificate %v, want %v:\n%s", name, got, want, text)
						}
					}
				}
				if !found {
					t.Errorf("no file %s*", prefix)
				}
			}
		})
	}
}
