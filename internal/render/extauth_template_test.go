package render

import (
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
)

func init() {
	type policyCase = struct {
		name   string
		planes []string
		model  func() *model.Model
	}
	policyCases = append(policyCases, []policyCase{
		{"external-auth-templates", []string{"plain", "lua"}, func() *model.Model {
			// oauth2-proxy's recipe: / asks its own host over the loop (its
			// sign-in names the scheme and $best_http_host), /api a literal
			// host with variables in the query through an upstream, /pool the
			// same with a pool, /any the loop for the request's scheme; the
			// global URL names a literal host with a variable.
			m := policyModel(&model.Server{Host: "app.example.com", Locations: []*model.Location{
				loc(model.Prefix, "/", &model.Policy{ExternalAuth: &model.ExternalAuth{URL: "https://${host}/oauth2/auth", RedirectParam: "rd",
					SigninURL: "${scheme}://${best_http_host}/oauth2/start?rd=${scheme}://${host}${request_uri}", ResponseHeaders: []string{"X-Auth-Request-User"}}}),
				loc(model.Exact, "/api", &model.Policy{ExternalAuth: &model.ExternalAuth{URL: "http://127.0.0.1:9000/check?u=${http_x_user}&a=${arg_a}",
					Host: "127.0.0.1", RedirectParam: "rd", SigninURL: "https://login.example.com:8443/start?from=${host}"}}),
				loc(model.Exact, "/pool", &model.Policy{ExternalAuth: &model.ExternalAuth{URL: "https://127.0.0.2/check${request_uri}", Host: "127.0.0.2",
					RedirectParam: "rd", Keepalive: &model.AuthKeepalive{Connections: 4, Requests: 100, Timeout: 30 * time.Second}}}),
				loc(model.Exact, "/any", &model.Policy{ExternalAuth: &model.ExternalAuth{URL: "${scheme}://${best_http_host}:${server_port}/oauth2/auth?x=1", RedirectParam: "rd"}}),
				loc(model.Prefix, "/oauth2", nil),
			}}, &model.Server{Host: "plain.example.com", Locations: []*model.Location{loc(model.Prefix, "/", nil)}})
			m.Config.GlobalAuth = &model.ExternalAuth{URL: "http://[::1]:4180/global?h=${host}", Host: "[::1]", RedirectParam: "rd"}
			return m
		}},
		{"external-auth-escaped-uri", []string{"lua"}, func() *model.Model {
			// $escaped_request_uri, computed by Lua where it is named: in the
			// sign-in location, and in the internal location of an auth URL.
			return policyModel(&model.Server{Host: "app.example.com", Locations: []*model.Location{
				loc(model.Prefix, "/", &model.Policy{ExternalAuth: &model.ExternalAuth{URL: "https://${host}/oauth2/auth", RedirectParam: "rd",
					SigninURL: "https://${host}/oauth2/start?rd=${escaped_request_uri}"}}),
				loc(model.Exact, "/api", &model.Policy{ExternalAuth: &model.ExternalAuth{URL: "http://127.0.0.1:9000/check?uri=${escaped_request_uri}",
					Host: "127.0.0.1", RedirectParam: "rd"}}),
			}})
		}},
	}...)
}

// TestAuthTemplateRefusals: auth URLs with variables the model never
// produces are refused.
func TestAuthTemplateRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		host string
		a    *model.ExternalAuth
		lua  bool
	}{
		{"not canonical", "x.example.com", &model.ExternalAuth{URL: "https://$host/a"}, false},
		{"$host in the catch-all server", "", &model.ExternalAuth{URL: "https://${host}/a"}, false},
		{"$host with a pool", "x.example.com", &model.ExternalAuth{URL: "https://${host}/a",
			Keepalive: &model.AuthKeepalive{Connections: 1, Requests: 1, Timeout: time.Second}}, false},
		{"$host with a Host", "x.example.com", &model.ExternalAuth{URL: "https://${host}/a", Host: "evil.example"}, false},
		{"literal host not the Host", "x.example.com", &model.ExternalAuth{URL: "https://a.example/${request_uri}", Host: "b.example"}, false},
		{"variable outside the allowlist", "x.example.com", &model.ExternalAuth{URL: "https://${host}/a?x=${remote_addr}"}, false},
		{"client variable in the path", "x.example.com", &model.ExternalAuth{URL: "https://${host}/${http_x}"}, false},
		{"escaped URI without Lua", "x.example.com", &model.ExternalAuth{URL: "https://${host}/a?u=${escaped_request_uri}"}, false},
		{"escaped URI in the sign-in without Lua", "x.example.com", &model.ExternalAuth{URL: "https://${host}/a",
			SigninURL: "https://${host}/s?rd=${escaped_request_uri}"}, false},
		{"sign-in not canonical", "x.example.com", &model.ExternalAuth{URL: "https://${host}/a", SigninURL: "https://$host/s"}, true},
		{"sign-in with a quote", "x.example.com", &model.ExternalAuth{URL: "https://${host}/a", SigninURL: `https://${host}/s?"`}, true},
	} {
		tc.a.RedirectParam = "rd"
		m := policyModel(&model.Server{Host: tc.host, Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{ExternalAuth: tc.a})}})
		params := goldenParams
		if tc.lua {
			params.Dynamic = &Dynamic{Modules: []string{"/usr/lib/nginx/modules/ngx_http_lua_module.so"}}
		}
		if out, err := Render(m, params); err == nil {
			t.Errorf("%s: rendered %v", tc.name, out.Files.Names())
		}
	}
}

// TestAuthLoopOnlyWhereAsked: only the servers whose auth URL names
// $host listen on the loop's sockets, and nginx.conf declares the loop
// only while one does.
func TestAuthLoopOnlyWhereAsked(t *testing.T) {
	m := policyModel(
		&model.Server{Host: "loop.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{ExternalAuth: &model.ExternalAuth{URL: "http://${host}/auth", RedirectParam: "rd"}})}},
		&model.Server{Host: "other.example.com", Locations: []*model.Location{loc(model.Prefix, "/", nil)}})
	out, err := Render(m, goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range out.Files.Names() {
		f := string(out.Files[n])
		loop := strings.Contains(f, "auth-http.sock")
		switch {
		case strings.Contains(n, "loop.example.com") && !loop, strings.Contains(n, "other.example.com") && loop:
			t.Errorf("%s: listens on the loop: %v", n, loop)
		case n == "nginx.conf" && (!loop || !strings.Contains(f, "ssl_reject_handshake on;")):
			t.Errorf("nginx.conf declares no loop")
		}
	}
	m.Servers[0].Locations[0].Policy = nil
	if out, err = Render(m, goldenParams); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out.Files["nginx.conf"]), "auth-http.sock") {
		t.Error("nginx.conf declares the loop no server asks")
	}
}
