package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestConfigHeaders: add-headers' Strict-Transport-Security replaces the
// HSTS key's, and a value the model would refuse never reaches nginx.conf.
func TestConfigHeaders(t *testing.T) {
	m := &model.Model{Config: model.DefaultConfig()}
	m.Config.AddHeaders = []model.Header{{Name: "Strict-Transport-Security", Value: "max-age=60"}}
	out, err := Render(m, goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	conf := string(out.Files["nginx.conf"])
	if strings.Contains(conf, "$causeway_hsts") || !strings.Contains(conf, `add_header "Strict-Transport-Security" "max-age=60" always;`) {
		t.Errorf("add-headers' Strict-Transport-Security must replace HSTS:\n%s", conf)
	}
	for _, bad := range []model.Config{
		{AddHeaders: []model.Header{{Name: "X-A", Value: "$host"}}},
		{ProxySetHeaders: []model.Header{{Name: "X A", Value: "v"}}},
		{ProxySetHeaders: []model.Header{{Name: "X-A", Value: "a\nb"}}},
		{HideHeaders: []string{"X-A;"}},
	} {
		m := &model.Model{Config: model.DefaultConfig()}
		m.Config.AddHeaders, m.Config.ProxySetHeaders, m.Config.HideHeaders = bad.AddHeaders, bad.ProxySetHeaders, bad.HideHeaders
		if _, err := Render(m, goldenParams); err == nil {
			t.Errorf("%+v rendered", bad)
		}
	}
}

// TestServerHeaderNeedsServerTokens: as in ingress-nginx, the backend's
// Server header is passed on only with server-tokens too.
func TestServerHeaderNeedsServerTokens(t *testing.T) {
	for _, tc := range []struct{ allow, tokens, want bool }{
		{false, false, false}, {true, false, false}, {false, true, false}, {true, true, true},
	} {
		m := &model.Model{Config: model.DefaultConfig()}
		m.Config.AllowBackendServerHeader, m.Config.ServerTokens = tc.allow, tc.tokens
		out, err := Render(m, goldenParams)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(out.Files["nginx.conf"]), "proxy_pass_header Server;"); got != tc.want {
			t.Errorf("allow %v, server-tokens %v: proxy_pass_header Server = %v, want %v", tc.allow, tc.tokens, got, tc.want)
		}
	}
}

// TestCustomHeaderReplacesFixedLine: a custom request header line (a
// Gateway filter's, a snippet's, proxy-set-headers') of the name of one
// Causeway always sends (X-Real-IP, X-Forwarded-*, X-Request-ID...)
// replaces that line: nginx sends every proxy_set_header line of a name.
func TestCustomHeaderReplacesFixedLine(t *testing.T) {
	own := &model.Snippet{ProxySetHeaders: []model.TemplateHeader{
		{Name: "X-Forwarded-For", Value: model.Template{{Literal: "from-filter"}}},
		{Name: "x-request-id", Value: model.Template{{Literal: "mine"}}}}}
	m := policyModel(&model.Server{Host: "h.example.com", Locations: []*model.Location{
		loc(model.Prefix, "/", &model.Policy{Snippet: own}),
	}})
	m.Config.ProxySetHeaders = []model.Header{{Name: "X-Real-IP", Value: "from-configmap"}}
	out, err := Render(m, goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for name, f := range out.Files {
		if strings.HasPrefix(name, "servers/") {
			b.Write(f)
		}
	}
	conf := strings.ToLower(b.String())
	for name, want := range map[string]string{"x-forwarded-for": "from-filter", "x-request-id": "mine", "x-real-ip": "from-configmap"} {
		lines := strings.Count(conf, "proxy_set_header "+name+" ") + strings.Count(conf, `proxy_set_header "`+name+`" `)
		if lines != 1 || !strings.Contains(conf, want) {
			t.Errorf("%s: %d lines, want one, the custom %q:\n%s", name, lines, want, conf)
		}
	}
	if !strings.Contains(conf, "proxy_set_header x-forwarded-host $causeway_forwarded_host;") {
		t.Errorf("the fixed lines no custom one names must stay:\n%s", conf)
	}
}
