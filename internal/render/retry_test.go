package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// A route's retry on the plain data plane: nginx's own round robin
// tries each endpoint at most once, so no $causeway_tries is set; the
// conditions and the tries are those of the Lua data plane (golden case
// lua-gateway-retry).
func TestRouteRetryPlain(t *testing.T) {
	pol := &model.Policy{Retry: model.Retry{Route: &model.RouteRetry{Codes: []model.RetryCode{500, 503}, Attempts: 2}}}
	m := policyModel(&model.Server{Host: "h.example.com", Locations: []*model.Location{loc(model.Prefix, "/", pol)}})
	out, err := Render(m, goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	conf := string(out.Files[out.Files.Names()[1]])
	for _, want := range []string{"proxy_next_upstream error timeout http_500 http_503 non_idempotent;", "proxy_next_upstream_tries 3;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("no %q in\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "causeway_tries") {
		t.Errorf("$causeway_tries on the plain data plane:\n%s", conf)
	}
}
