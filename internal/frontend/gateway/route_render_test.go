package gateway

import (
	"slices"
	"strings"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
)

// TestRouteLocationsRender renders what the translation gives (header
// modifiers, rewrites, redirects and splits with answers): render, the
// only writer of nginx text, must accept every value, and print them.
func TestRouteLocationsRender(t *testing.T) {
	hdr := gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{{Name: "X-Set", Value: "one; two"}},
		Add: []gwv1.HTTPHeader{{Name: "X-Add", Value: "added"}}, Remove: []string{"X-Remove"}}
	prefix := pathMatch(gwv1.PathMatchPathPrefix, "/prefix/one")
	headerV2 := gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{headerMatch("version", "two")},
		QueryParams: []gwv1.HTTPQueryParamMatch{{Name: "animal", Value: "whale"}}, Method: routePtr(gwv1.HTTPMethodGet)}
	red := redirectRule(gwv1.HTTPRequestRedirectFilter{Scheme: routePtr("https"), Hostname: routePtr(gwv1.PreciseHostname("example.org")), StatusCode: routePtr(301)})
	red.Matches = []gwv1.HTTPRouteMatch{headerV2}
	routes := translateRoutes(t, newHTTPRoute("r",
		withFilters(proxyRule(pathMatch(gwv1.PathMatchExact, "/headers")), reqHeaders(hdr), respHeaders(hdr)),
		rewriteRule(prefix, gwv1.HTTPURLRewriteFilter{Hostname: routePtr(gwv1.PreciseHostname("rewritten.example.org")),
			Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr("/one")}}),
		rewriteRule(pathMatch(gwv1.PathMatchPathPrefix, "/strip"), gwv1.HTTPURLRewriteFilter{
			Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr("/")}}),
		red,
		gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{backendRef("infra-backend-v1", 3), backendRef("nonexistent", 1)}},
		proxyRule(pathMatch(gwv1.PathMatchRegularExpression, "/v[0-9]+/.*")),
		withMatches(redirectRule(gwv1.HTTPRequestRedirectFilter{StatusCode: routePtr(307),
			Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr("/new")}}),
			pathMatch(gwv1.PathMatchPathPrefix, "/old")),
		withMatches(redirectRule(gwv1.HTTPRequestRedirectFilter{
			Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr("/")}}),
			pathMatch(gwv1.PathMatchPathPrefix, "/gone.v1")),
	))
	locs, ps := composeLocations(t, routes)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	out, err := renderLocations(locs, routes[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for name, data := range out.Files {
		if strings.Contains(name, "example.com") {
			text.Write(data)
		}
	}
	conf := text.String()
	for _, want := range []string{
		`proxy_set_header "X-Set" "one; two";`,
		`set $gateway_add_0 "${http_x_add},added";`,
		`if ($http_x_add = "") {`,
		`proxy_set_header "X-Add" "${gateway_add_0}";`,
		`proxy_set_header "X-Remove" "";`,
		`proxy_hide_header "X-Remove";`,
		`add_header "X-Set" "one; two" always;`,
		`proxy_set_header Host "rewritten.example.org";`,
		`rewrite "(?i)^/prefix/one(.*)" "/one$1" break;`,
		`rewrite "(?i)^/strip/?(.*)" "/$1" break;`,
		`location ~* "^/v[0-9]+/.*\\z" {`,
		`return 301 "https://example.org${request_uri}";`,
		`return 500;`,
		// ReplacePrefixMatch: the rest is cut from the raw URI.
		`if ($request_uri ~ "^/old(/[^?]*)?(\\?.*)?\\z") {`,
		`return 307 "${scheme}://${host}/new$1$2";`,
		`if ($request_uri ~ "^/gone\\.v1/?([^?]*)(\\?.*)?\\z") {`,
		`return 302 "${scheme}://${host}/$1$2";`,
		`return 400;`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("no %q in\n%s", want, conf)
		}
	}
}

// renderLocations renders locs as the server of example.com on the Lua
// data plane, with a backend for every key they name.
func renderLocations(locs []*model.Location, source model.ObjectRef) (*render.Output, error) {
	m := &model.Model{Config: model.DefaultConfig(), Servers: []*model.Server{{Host: "example.com", Locations: locs, Sources: []model.ObjectRef{source}}}}
	for _, l := range locs {
		var keys []string
		if p := l.Action.Proxy; p != nil {
			keys = append(keys, p.Backend)
			if p.Split != nil {
				keys = append(keys, p.Split.Backends()...)
			}
		}
		for _, k := range keys {
			if k != "" && !slices.ContainsFunc(m.Backends, func(b *model.Backend) bool { return b.Key == k }) {
				parts := strings.Split(k, "/")
				m.Backends = append(m.Backends, &model.Backend{Key: k, Namespace: parts[0], Service: parts[1], Port: parts[2],
					Endpoints: []model.Endpoint{{Address: "10.0.0.1", Port: 8080}}, Balance: model.Balance{Method: model.RoundRobin}})
			}
		}
	}
	slices.SortFunc(m.Backends, func(a, b *model.Backend) int { return strings.Compare(a.Key, b.Key) })
	out, err := render.Render(m, render.Params{StateDir: layout.Dir("/var/lib/causeway"), HTTPPort: 80, HTTPSPort: 443,
		Dynamic: &render.Dynamic{Modules: []string{"/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"}}})
	return out, err
}
