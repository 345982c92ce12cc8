package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestBrotliOnlyWithItsModule: nginx never sees brotli directives without
// the module loaded, whatever the Config says.
func TestBrotliOnlyWithItsModule(t *testing.T) {
	m := &model.Model{Config: model.DefaultConfig()}
	m.Config.Brotli.Enabled = true
	for _, tc := range []struct {
		module string
		want   bool
	}{{"", false}, {"/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so", true}} {
		p := goldenParams
		p.BrotliModule = tc.module
		out, err := Render(m, p)
		if err != nil {
			t.Fatal(err)
		}
		conf := string(out.Files["nginx.conf"])
		if got := strings.Contains(conf, "brotli on;"); got != tc.want || strings.Contains(conf, "brotli_filter_module") != tc.want {
			t.Errorf("module %q: brotli on = %v, want %v:\n%s", tc.module, got, tc.want, conf)
		}
	}
}

// TestMIMETypesLeaveOutTextHTML: nginx always compresses text/html and
// warns when a list names it.
func TestMIMETypesLeaveOutTextHTML(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"text/html"}, ""},
		{[]string{"application/json", "text/html", "text/css"}, "application/json text/css"},
		{[]string{"*"}, "*"},
	} {
		if got, err := mimeTypes(tc.in); err != nil || got != tc.want {
			t.Errorf("mimeTypes(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := mimeTypes([]string{"text/css;gzip off"}); err == nil {
		t.Error("a type the model would refuse is printed")
	}
}

// TestServerHeaderCleared: server-tokens false removes the Server header
// when headers-more can be loaded, and only then loads it.
func TestServerHeaderCleared(t *testing.T) {
	const mod = "/usr/lib/nginx/modules/ngx_http_headers_more_filter_module.so"
	for _, tc := range []struct {
		module string
		tokens bool
		want   bool
	}{{"", false, false}, {mod, false, true}, {mod, true, false}, {"", true, false}} {
		m := &model.Model{Config: model.DefaultConfig()}
		m.Config.ServerTokens = tc.tokens
		p := goldenParams
		p.HeadersMoreModule = tc.module
		out, err := Render(m, p)
		if err != nil {
			t.Fatal(err)
		}
		conf := string(out.Files["nginx.conf"])
		if got := strings.Contains(conf, "more_clear_headers Server;"); got != tc.want || strings.Contains(conf, "headers_more_filter_module") != tc.want {
			t.Errorf("module %q, server-tokens %v: clear = %v, want %v", tc.module, tc.tokens, got, tc.want)
		}
	}
}
