package render

import (
	"regexp"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/flavour"
	"github.com/causeway/causeway/internal/model"
)

// TestHTTP2ByFlavour: binaries that deprecate listen's http2 parameter get
// the http2 directive in every TLS server (the host's and its www twin's)
// instead, and those that lack the directive keep the parameter.
func TestHTTP2ByFlavour(t *testing.T) {
	listenHTTP2 := regexp.MustCompile(`(?m)^\s*listen [^;]* ssl http2[ ;]`)
	for _, tc := range []struct {
		name      string
		f         flavour.Flavour
		use       bool
		param, on int
	}{
		{"nginx 1.22", flavour.Flavour{Name: flavour.Nginx, Version: []int{1, 22, 1}}, true, 3, 0},
		{"unknown", flavour.Flavour{}, true, 3, 0},
		{"nginx 1.26", flavour.Flavour{Name: flavour.Nginx, Version: []int{1, 26, 0}}, true, 0, 3},
		{"angie 1.12", flavour.Flavour{Name: flavour.Angie, Version: []int{1, 12, 1}}, true, 0, 3},
		{"angie 1.12, use-http2 false", flavour.Flavour{Name: flavour.Angie, Version: []int{1, 12, 1}}, false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := policyModel(&model.Server{Host: "h.example.com", Locations: []*model.Location{loc(model.Prefix, "/", nil)}},
				&model.Server{Host: "www.t.example.com", Policy: &model.ServerPolicy{WWWRedirect: true}, Locations: []*model.Location{loc(model.Prefix, "/", nil)}})
			m.Config.HTTP2 = tc.use
			p := goldenParams
			p.Flavour = tc.f
			out, err := Render(m, p)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, n := range out.Files.Names() {
				b.Write(out.Files[n])
			}
			conf := b.String()
			if got := len(listenHTTP2.FindAllString(conf, -1)); got != tc.param {
				t.Errorf("%d listen ... http2, want %d", got, tc.param)
			}
			if got := strings.Count(conf, "\n    http2 on;"); got != tc.on {
				t.Errorf("%d http2 on, want %d:\n%s", got, tc.on, conf)
			}
		})
	}
}
