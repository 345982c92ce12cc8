package render

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// geoIP2Params are goldenParams with nginx's geoip2 module and a City,
// a Country and an ASN database.
func geoIP2Params() Params {
	p := goldenParams
	p.GeoIP2Module = "/usr/lib/nginx/modules/ngx_http_geoip2_module.so"
	p.GeoIP2Databases = []GeoIP2Database{
		{Edition: "GeoLite2-ASN", Path: "/etc/ingress-controller/geoip/GeoLite2-ASN.mmdb"},
		{Edition: "GeoLite2-City", Path: "/etc/ingress-controller/geoip/GeoLite2-City.mmdb"},
		{Edition: "GeoIP2-ISP", Path: "/etc/ingress-controller/geoip/GeoIP2-ISP.mmdb"},
	}
	return p
}

// TestGeoIP2Golden renders use-geoip2 with three databases into
// testdata/geoip2: each variable from the first edition that sets it
// ($geoip2_asn from ASN, not ISP), the rest empty.
func TestGeoIP2Golden(t *testing.T) {
	m := policyModel(&model.Server{Host: "geo.example.com", Locations: []*model.Location{loc(model.Prefix, "/", nil)}})
	m.Config.GeoIP2 = model.GeoIP2Config{Enabled: true, AutoReload: 60 * time.Minute}
	out, err := Render(m, geoIP2Params())
	if err != nil {
		t.Fatal(err)
	}
	compareGolden(t, filepath.Join("testdata", "geoip2", "golden"), out.Files)
}

// TestGeoIP2Defined: the variables are defined, empty, whenever
// use-geoip2 is on or the access log prints one, whatever nginx has;
// the module is loaded only with use-geoip2, the module and a database.
func TestGeoIP2Defined(t *testing.T) {
	withLog, err := model.ParseLogFormat(`$remote_addr $geoip2_city_country_code`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		cfg          func(*model.Config)
		params       Params
		defined, lib bool
	}{
		{"off", func(*model.Config) {}, geoIP2Params(), false, false},
		{"on", func(c *model.Config) { c.GeoIP2.Enabled = true }, geoIP2Params(), true, true},
		{"on without the module", func(c *model.Config) { c.GeoIP2.Enabled = true }, goldenParams, true, false},
		{"off, read by the log", func(c *model.Config) { c.LogFormat = withLog }, geoIP2Params(), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := policyModel(&model.Server{Host: "geo.example.com", Locations: []*model.Location{loc(model.Prefix, "/", nil)}})
			tc.cfg(&m.Config)
			out, err := Render(m, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			conf := string(out.Files["nginx.conf"])
			defined := strings.Contains(conf, "$geoip2_city_country_code source=") || strings.Contains(conf, "geo $geoip2_city_country_code {")
			if got := defined; got != tc.defined {
				t.Errorf("$geoip2_city_country_code defined: %v, want %v", got, tc.defined)
			}
			if got := strings.Contains(conf, "ngx_http_geoip2_module.so"); got != tc.lib {
				t.Errorf("module loaded: %v, want %v", got, tc.lib)
			}
		})
	}
}
