package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// Without the Lua balancer, the split's first backend serves every
// request of /split (the controller reports it) with its own edits, as a
// rule's filter gives them; nothing picks, so no variable or hook.
func TestSplitHeadersPlain(t *testing.T) {
	m, params := goldenCase(t, "lua-gateway-backend-headers")
	params.Dynamic = nil
	for _, b := range m.Backends {
		b.Endpoints = []model.Endpoint{{Address: "10.0.0.1", Port: 8080}}
	}
	out, err := Render(m, params)
	if err != nil {
		t.Fatal(err)
	}
	var conf string
	for _, n := range out.Files.Names() {
		if strings.Contains(n, "app.example.com") {
			conf = string(out.Files[n])
		}
	}
	split := conf[strings.Index(conf, `location = "/split"`):]
	split = split[:strings.Index(split, "\n    }")]
	for _, want := range []string{`proxy_set_header "X-Rule" "r";`, `proxy_set_header "Backend" "web";`,
		`set $gateway_add_0 "${http_x_add},web";`, `proxy_set_header "X-Add" "${gateway_add_0}";`} {
		if !strings.Contains(split, want) {
			t.Errorf("no %q in\n%s", want, split)
		}
	}
	for _, not := range []string{"causeway_header", "access_by_lua", "X-Gone", `"api"`} {
		if strings.Contains(split, not) {
			t.Errorf("%q in\n%s", not, split)
		}
	}
}
