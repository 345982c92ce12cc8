package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

func init() {
	policyCases = append(policyCases, struct {
		name   string
		planes []string
		model  func() *model.Model
	}{"external-auth-service", []string{"plain", "lua"}, func() *model.Model {
		// / asks the shop/errors Service over plain HTTP and sends a 401
		// to the sign-in path; /tls asks it over verified TLS; /none asks
		// a Service without endpoints (plain mode answers 503 there).
		m := policyModel(&model.Server{Host: "svcauth.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{ExternalAuth: &model.ExternalAuth{Backend: "shop/errors/80", URI: "/auth",
				SigninURI: "/oauth2/signin", RedirectParam: "rd"}}),
			loc(model.Exact, "/tls", &model.Policy{ExternalAuth: &model.ExternalAuth{Backend: "shop/errors/80", URI: "/check",
				TLS:           &model.UpstreamTLS{Verify: true, VerifyDepth: 2, Name: "auth.shop.svc", ServerName: true, CASecret: "shop/auth-ca"},
				RedirectParam: "rd"}}),
			loc(model.Exact, "/none", &model.Policy{ExternalAuth: &model.ExternalAuth{Backend: "shop/gone/80", URI: "/", RedirectParam: "rd"}}),
		}})
		m.ProxySecrets = []*model.ProxySecret{{Namespace: "shop", Name: "auth-ca", CA: []byte("ca")}}
		return m
	}})
}

// TestAuthBackendRefusals: values the model never produces are refused.
func TestAuthBackendRefusals(t *testing.T) {
	for name, a := range map[string]*model.ExternalAuth{
		"URL and backend":  {URL: "http://127.0.0.1/", Backend: "shop/web/80", URI: "/"},
		"relative URI":     {Backend: "shop/web/80", URI: "auth"},
		"URI with space":   {Backend: "shop/web/80", URI: "/a b"},
		"URI with dollar":  {Backend: "shop/web/80", URI: "/$host"},
		"bad key":          {Backend: `shop/"web/80`, URI: "/"},
		"sign-in variable": {Backend: "shop/web/80", URI: "/", SigninURI: "/$request_uri"},
		"two sign-ins":     {Backend: "shop/web/80", URI: "/", SigninURI: "/in", SigninURL: "https://a.example/"},
		"verify no CA":     {Backend: "shop/web/80", URI: "/", TLS: &model.UpstreamTLS{Verify: true}},
	} {
		a.RedirectParam = "rd"
		m := policyModel(&model.Server{Host: "x.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{ExternalAuth: a})}})
		if _, err := Render(m, goldenParams); err == nil {
			t.Errorf("%s: rendered", name)
		}
	}
}

// TestAuthBackendKeepsRequestBackend: in the Lua data plane the
// subrequest never sets $causeway_backend, which it shares with the
// request it authorizes.
func TestAuthBackendKeepsRequestBackend(t *testing.T) {
	m := policyModel(&model.Server{Host: "x.example.com", Locations: []*model.Location{
		loc(model.Prefix, "/", &model.Policy{ExternalAuth: &model.ExternalAuth{Backend: "shop/errors/80", URI: "/", RedirectParam: "rd"}})}})
	params := goldenParams
	params.Dynamic = &Dynamic{Modules: []string{"/usr/lib/nginx/modules/ngx_http_lua_module.so"}}
	out, err := Render(m, params)
	if err != nil {
		t.Fatal(err)
	}
	conf := string(out.Files[out.Files.Names()[1]])
	i := strings.Index(conf, "location = \"/_causeway_auth_0\"")
	if i < 0 {
		t.Fatalf("no auth location in\n%s", conf)
	}
	auth := conf[i:]
	auth = auth[:strings.Index(auth, "}")]
	if strings.Contains(auth, "causeway_backend ") || !strings.Contains(auth, `set $causeway_auth_backend "shop/errors/80";`) ||
		!strings.Contains(auth, "proxy_pass http://causeway_auth_balancer/;") {
		t.Errorf("auth location:\n%s", auth)
	}
	if !strings.Contains(string(out.Files["nginx.conf"]), "upstream causeway_auth_balancer {") {
		t.Error("nginx.conf declares no causeway_auth_balancer")
	}
}
