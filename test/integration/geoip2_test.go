package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/geoiptest"
	"github.com/causeway/causeway/test/harness"
)

// TestGeoIP2: with use-geoip2, the databases of --geoip2-dir (tiny ones
// written here, mapping loopback clients) set ingress-nginx's $geoip2_*
// variables, which snippets read (a header, a refusal by country) and the
// access log prints; an address no database knows gets empty values.
func TestGeoIP2(t *testing.T) {
	t.Parallel()
	requireModule(t, "ngx_http_geoip2_module.so")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	from := loopbackIP()
	geoiptest.Write(t, filepath.Join(dir, "GeoLite2-City.mmdb"), "GeoLite2-City", map[string]geoiptest.Record{
		"127.0.0.0/24": geoiptest.City("FR", "France", "Paris", "IDF"),
		from + "/32":   geoiptest.City("NZ", "New Zealand", "Wellington", "WGN"),
	})
	geoiptest.Write(t, filepath.Join(dir, "GeoLite2-ASN.mmdb"), "GeoLite2-ASN", map[string]geoiptest.Record{
		"127.0.0.0/24": geoiptest.ASN(64500, "Example Transit"),
	})
	for _, f := range []string{"GeoLite2-City.mmdb", "GeoLite2-ASN.mmdb"} {
		os.Chmod(filepath.Join(dir, f), 0o644)
	}
	web := startBackend(t, "web")
	ing := annotatedIngressYAML("web", "geo.test", "web", "configuration-snippet",
		"if ($geoip2_city_country_code = \"NZ\") { return 451; }\n"+
			"add_header X-Country \"$geoip2_city_country_code/$geoip2_city\" always;\nadd_header X-ASN \"$geoip2_asn $geoip2_org\" always;")
	c := startController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("default", "web", 80, web) + ing,
		"config.yaml": configMapYAML(map[string]string{"use-geoip2": "true", "allow-snippet-annotations": "true",
			"log-format-upstream": "geo $remote_addr $geoip2_city_country_code $request_uri"}),
	}, "--geoip2-dir", dir, "--maxmind-edition-ids", "GeoLite2-City,GeoLite2-ASN")

	r := c.Get("geo.test", "/paris")
	if r.Status != 200 || r.Header.Get("X-Country") != "FR/Paris" || r.Header.Get("X-ASN") != "64500 Example Transit" {
		t.Fatalf("from 127.0.0.1: %d, X-Country %q, X-ASN %q", r.Status, r.Header.Get("X-Country"), r.Header.Get("X-ASN"))
	}
	if line := c.logLine("/paris", func(l string) bool { return strings.HasPrefix(l, "geo ") }); !strings.Contains(line, "127.0.0.1 FR /paris") {
		t.Fatalf("access log line %q, want the country", line)
	}
	if r := c.do(harness.Request{Host: "geo.test", Path: "/", From: from}); r.Status != 451 {
		t.Fatalf("from %s (NZ): %d, want 451 from the snippet", from, r.Status)
	}
	// An address the databases do not know: empty values.
	stranger := "127.0.1.7"
	if r := c.do(harness.Request{Host: "geo.test", Path: "/", From: stranger}); r.Status != 200 || r.Header.Get("X-Country") != "/" {
		t.Fatalf("from %s: %d, X-Country %q, want empty values", stranger, r.Status, r.Header.Get("X-Country"))
	}
	// Off: the snippet that reads the variables is refused.
	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"allow-snippet-annotations": "true"}))
	eventually(t, 10*time.Second, func() error {
		if r := c.Get("geo.test", "/"); r.Header.Get("X-Country") != "" {
			return fmt.Errorf("X-Country %q after use-geoip2 went off", r.Header.Get("X-Country"))
		}
		return nil
	})
}

// TestGeoIP2WithoutModule: where nginx cannot load the geoip2 module (an
// empty modules directory here; Angie's vendored build always), use-geoip2
// still defines the variables, empty, so the snippets reading them are
// served, and a Problem on the ConfigMap says why.
func TestGeoIP2WithoutModule(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	ing := annotatedIngressYAML("web", "geo.test", "web", "configuration-snippet",
		"add_header X-Country \"$geoip2_city_country_code/$geoip2_city\" always;")
	c := startController(t, map[string]string{
		"app.yaml":    ingressClass + serviceYAML("default", "web", 80, web) + ing,
		"config.yaml": configMapYAML(map[string]string{"use-geoip2": "true", "allow-snippet-annotations": "true"}),
	}, "--nginx-modules-dir", t.TempDir(), "--geoip2-dir", t.TempDir())
	if r := c.Get("geo.test", "/"); r.Status != 200 || r.Header.Get("X-Country") != "/" || r.Reply.Service != "web" {
		t.Fatalf("%d, X-Country %q; want 200 with empty values", r.Status, r.Header.Get("X-Country"))
	}
	eventually(t, 10*time.Second, func() error {
		if !strings.Contains(c.log.String(), "geoip2 module (ngx_http_geoip2_module.so") {
			return fmt.Errorf("no Problem names the missing module")
		}
		return nil
	})
}
