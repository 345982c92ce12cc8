package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// Without the Lua balancer, the split's first backend (web) serves every
// request of /split (the controller reports it): its own edits apply to
// the header variables as the access hook would apply them, after the
// rule's add (which the variable starts from); nothing picks, so no hook.
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
	for _, want := range []string{`proxy_set_header "X-Rule" "r";`, `set $causeway_header_backend $http_backend;`,
		`set $causeway_header_backend "web";`, `proxy_set_header "Backend" $causeway_header_backend;`,
		`set $causeway_header_x_hadd "${gateway_add_0}";`,
		"if ($causeway_header_x_hadd != \"\") {\n            set $causeway_header_x_hadd \"${causeway_header_x_hadd},web\";\n        }",
		"if ($causeway_header_x_hadd = \"\") {\n            set $causeway_header_x_hadd \"web\";\n        }",
		`set $causeway_header_x_hgone $http_x_gone;`} {
		if !strings.Contains(split, want) {
			t.Errorf("no %q in\n%s", want, split)
		}
	}
	for _, not := range []string{"access_by_lua", `"api"`, `set $causeway_header_x_hgone ""`} {
		if strings.Contains(split, not) {
			t.Errorf("%q in\n%s", not, split)
		}
	}
}
