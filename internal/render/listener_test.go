package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// renderAll renders m with the golden parameters and joins every file.
func renderAll(t *testing.T, m *model.Model) string {
	t.Helper()
	out, err := Render(m, goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, n := range out.Files.Names() {
		b.Write(out.Files[n])
	}
	return b.String()
}

// TestHSTSInLocations: a location that adds response headers repeats the
// http level's Strict-Transport-Security (nginx inherits add_header only
// into levels that add none), unless HSTS is off or its own headers set
// the header.
func TestHSTSInLocations(t *testing.T) {
	const line = `add_header "Strict-Transport-Security" $causeway_hsts always;`
	for _, tc := range []struct {
		name    string
		hsts    bool
		headers []model.Header
		want    int
	}{
		{"custom headers repeat it", true, []model.Header{{Name: "X-Frame-Options", Value: "DENY"}}, 1},
		{"off", false, []model.Header{{Name: "X-Frame-Options", Value: "DENY"}}, 0},
		{"own value wins", true, []model.Header{{Name: "strict-transport-security", Value: "max-age=5"}}, 0},
		{"no headers inherit it", true, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := policyModel(&model.Server{Host: "h.example.com",
				Locations: []*model.Location{loc(model.Prefix, "/", &model.Policy{ResponseHeaders: tc.headers})}})
			m.Config.HSTS.Enabled = tc.hsts
			conf := renderAll(t, m)
			if got := strings.Count(conf, line); got != tc.want {
				t.Fatalf("%d repeated HSTS lines, want %d:\n%s", got, tc.want, conf)
			}
			if got := strings.Contains(conf, "add_header Strict-Transport-Security $causeway_hsts always;"); got != tc.hsts {
				t.Fatalf("http-level HSTS present %v, want %v", got, tc.hsts)
			}
		})
	}
}

// TestDefaultCertificateFile: the http level presents
// --default-ssl-certificate's Secret file, read per handshake.
func TestDefaultCertificateFile(t *testing.T) {
	m := policyModel(&model.Server{Host: "h.example.com", Locations: []*model.Location{loc(model.Prefix, "/", nil)}})
	m.Secrets = []*model.TLSSecret{{Namespace: "causeway", Name: "fallback", PEM: []byte("x")}}
	m.DefaultCertificate = "causeway/fallback"
	conf := renderAll(t, m)
	if !strings.Contains(conf, "ssl_certificate /var/lib/causeway/secrets/causeway_fallback.pem$causeway_cert_reload;") {
		t.Fatalf("default certificate is not the Secret's file:\n%s", conf)
	}
	m.DefaultCertificate = "causeway/absent"
	if _, err := Render(m, goldenParams); err == nil {
		t.Fatal("a default certificate outside the model's Secrets must be refused")
	}
}

// TestListenerTLSRevalidates: values that bypass the ConfigMap's parsers
// are refused, not printed.
func TestListenerTLSRevalidates(t *testing.T) {
	for name, set := range map[string]func(*model.Config){
		"protocol": func(c *model.Config) { c.SSLProtocols = []string{"TLSv1.2;"} },
		"sslv3":    func(c *model.Config) { c.SSLProtocols = []string{"SSLv3"} },
		"ciphers":  func(c *model.Config) { c.SSLCiphers = "HIGH; evil" },
		"curve":    func(c *model.Config) { c.SSLECDHCurves = []string{"X25519;"} },
		"cache":    func(c *model.Config) { c.SSLSessionCacheSize = -1 },
		"timeout":  func(c *model.Config) { c.SSLSessionTimeout = -1 },
		"max-age":  func(c *model.Config) { c.HSTS.MaxAge = -1 },
	} {
		m := policyModel()
		set(&m.Config)
		if _, err := Render(m, goldenParams); err == nil {
			t.Errorf("%s: rendered", name)
		}
	}
}
