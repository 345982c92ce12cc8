package configmap

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

// TestListenerTLSKeys is the table of good, edge and bad values of the
// listener TLS, HSTS and HTTP/2 keys: a good value sets the field, a bad
// one keeps the default with a Problem.
func TestListenerTLSKeys(t *testing.T) {
	def := model.DefaultConfig()
	type check func(model.Config) any
	cases := []struct {
		key   string
		field check
		good  map[string]any
		bad   []string
	}{
		{"use-http2", func(c model.Config) any { return c.HTTP2 },
			map[string]any{"false": false, "true": true, "FALSE": false, "0": false, "1": true},
			[]string{"", "no", "off", "yes ", " true"}},
		{"http2-max-concurrent-streams", func(c model.Config) any { return c.HTTP2MaxConcurrentStreams },
			map[string]any{"1": 1, "128": 128, "65536": 65536},
			[]string{"", "0", "-1", "65537", "1e3", "12 8", "0x80", "128;"}},
		{"ssl-protocols", func(c model.Config) any { return c.SSLProtocols },
			map[string]any{
				"TLSv1.3":                []string{"TLSv1.3"},
				"TLSv1.2 TLSv1.3":        []string{"TLSv1.2", "TLSv1.3"},
				"TLSv1.1,TLSv1.2":        []string{"TLSv1.1", "TLSv1.2"},
				"tlsv1.2  TLSv1.2":       []string{"TLSv1.2"},
				"TLSv1 TLSv1.1 TLSv1.2 ": []string{"TLSv1", "TLSv1.1", "TLSv1.2"},
			},
			[]string{"", "SSLv3", "SSLv2 TLSv1.2", "TLSv1.4", "TLSv1.2,,TLSv1.3", "TLSv1.2;", strings.Repeat("TLSv1.2 ", 9)}},
		{"ssl-ciphers", func(c model.Config) any { return c.SSLCiphers },
			map[string]any{
				"ECDHE-RSA-AES128-GCM-SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
				"HIGH:!aNULL:!MD5":            "HIGH:!aNULL:!MD5",
				"ECDHE+AESGCM:@SECLEVEL=0":    "ECDHE+AESGCM:@SECLEVEL=0",
				strings.Repeat("A", 1024):     strings.Repeat("A", 1024),
			},
			[]string{"", "..", "HIGH::MEDIUM", "HIGH:", "!", "@SECLEVEL=9", "@FOO", "HIGH+", "HIGH MEDIUM", "HIGH'", `HIGH"`, "HIGH;", strings.Repeat("A", 1025), "HIGH\n"}},
		{"ssl-session-ticket-key", func(c model.Config) any { return c.SSLSessionTicketKey },
			map[string]any{
				strings.Repeat("AAAA", 16):          make([]byte, 48),
				strings.Repeat("AAAA", 26) + "AAA=": make([]byte, 80),
			},
			[]string{"", strings.Repeat("A", 48), strings.Repeat("A", 80), strings.Repeat("AAAA", 15), strings.Repeat("AAAA", 20), "not base64!"}},
		{"ssl-session-ticket-key-secret", func(c model.Config) any { return c.SSLSessionTicketKeyFrom },
			map[string]any{"causeway/tickets": &model.ObjectName{Namespace: "causeway", Name: "tickets"}},
			[]string{"tickets", "a/b/c", "Causeway/tickets"}},
		{"ssl-reject-handshake", func(c model.Config) any { return c.SSLRejectHandshake },
			map[string]any{"true": true, "false": false, "TRUE": true, "0": false},
			[]string{"", "on", "yes", "true "}},
		{"enable-underscores-in-headers", func(c model.Config) any { return c.UnderscoresInHeaders },
			map[string]any{"true": true, "false": false, "1": true},
			[]string{"", "on", "yes"}},
		{"ssl-ecdh-curve", func(c model.Config) any { return c.SSLECDHCurves },
			map[string]any{
				"auto":                    []string(nil),
				"X25519":                  []string{"X25519"},
				"X25519:prime256v1:P-384": []string{"X25519", "prime256v1", "P-384"},
			},
			[]string{"", "AUTO", "x25519", "X25519:", ":X25519", "X25519:X25519", "X25519 prime256v1", "brainpoolP256r1", "auto:X25519"}},
		{"ssl-session-cache", func(c model.Config) any { return c.SSLSessionCache },
			map[string]any{"false": false, "true": true},
			[]string{"", "off"}},
		{"ssl-session-cache-size", func(c model.Config) any { return c.SSLSessionCacheSize },
			map[string]any{"64k": int64(64 << 10), "10m": int64(10 << 20), "1g": int64(1 << 30), "20M": int64(20 << 20)},
			[]string{"", "0", "63k", "2g", "10mb", "-10m", "10 m", "1.5m"}},
		{"ssl-session-timeout", func(c model.Config) any { return c.SSLSessionTimeout },
			map[string]any{"10m": 10 * time.Minute, "1": time.Second, "24h": 24 * time.Hour, "300s": 5 * time.Minute},
			[]string{"", "0", "25h", "1d", "10M", "-1", "1m30s", "10 m"}},
		{"ssl-session-tickets", func(c model.Config) any { return c.SSLSessionTickets },
			map[string]any{"true": true, "false": false},
			[]string{"", "on"}},
		{"hsts", func(c model.Config) any { return c.HSTS.Enabled },
			map[string]any{"false": false, "True": true},
			[]string{"", "off"}},
		{"hsts-include-subdomains", func(c model.Config) any { return c.HSTS.IncludeSubdomains },
			map[string]any{"false": false, "true": true},
			[]string{"", "1 "}},
		{"hsts-preload", func(c model.Config) any { return c.HSTS.Preload },
			map[string]any{"true": true, "false": false},
			[]string{"", "preload"}},
		{"hsts-max-age", func(c model.Config) any { return c.HSTS.MaxAge },
			map[string]any{"0": int64(0), "31536000": int64(31536000), "63072000": int64(63072000), "2147483647": int64(2147483647)},
			[]string{"", "-1", "+5", "2147483648", "99999999999", "1y", "31536000; preload", "1e9", " 5"}},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			for v, want := range tc.good {
				cfg, problems := parseOne(tc.key, v)
				if len(problems) != 0 {
					t.Errorf("%q: problems %v", v, problems)
				}
				if got := tc.field(cfg); !reflect.DeepEqual(got, want) {
					t.Errorf("%q: got %#v, want %#v", v, got, want)
				}
			}
			bad := append(append([]string(nil), tc.bad...), testcorpus.Injection...)
			for _, v := range bad {
				cfg, problems := parseOne(tc.key, v)
				if len(problems) != 1 || !strings.Contains(problems[0].Message, "the default is used") {
					t.Errorf("%q: problems %v, want one keeping the default", v, problems)
				}
				if got, want := tc.field(cfg), tc.field(def); !reflect.DeepEqual(got, want) {
					t.Errorf("%q: got %#v, want the default %#v", v, got, want)
				}
			}
		})
	}
}

func TestHSTSValue(t *testing.T) {
	for h, want := range map[model.HSTS]string{
		model.DefaultConfig().HSTS:   "max-age=31536000; includeSubDomains",
		{MaxAge: 0}:                  "max-age=0",
		{MaxAge: 600, Preload: true}: "max-age=600; preload",
		{MaxAge: 63072000, IncludeSubdomains: true, Preload: true}: "max-age=63072000; includeSubDomains; preload",
	} {
		if got := h.Value(); got != want {
			t.Errorf("%+v: %q, want %q", h, got, want)
		}
	}
}
