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
