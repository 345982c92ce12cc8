package build

import (
	"net/netip"

	networkingv1 "k8s.io/api/networking/v1"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TestVirtualServerSnippets: a row per rule of the snippet annotations
// applied to spec.server-snippets and a route's location-snippets: the
// same switch, grammar and refusals, each refusal one Problem naming the
// field, the VirtualServer served without the snippet unless it denies.
func TestVirtualServerSnippets(t *testing.T) {
	allow := map[string]string{"allow-snippet-annotations": "true"}
	noMore := testOpts
	noMore.HeadersMoreAvailable = false
	const deny = `if ($http_x_bad) { return 403; }`
	for _, tc := range []struct {
		name             string
		config           map[string]string
		opts             *Options
		server, location string
		http             string
		problem          string // fragment of the one Problem; "" for none
		reason           string
		serverKept       bool
		locationKept     bool
		httpKept         bool
		status           int // of route /a; 0: proxied
	}{
		{name: "an allowed location snippet applies", config: allow, location: `add_header X-Route a;`, locationKept: true},
		{name: "an allowed server snippet applies", config: allow, server: `add_header X-Host a; rewrite ^/old/(.*)$ /a/$1 last;`, serverKept: true},
		{name: "allow-snippet-annotations false refuses a location snippet", location: `add_header X-Route a;`,
			problem: "spec.routes[0] (path /a).location-snippets is refused: the ConfigMap's allow-snippet-annotations is false (the default); the route is served without it", reason: model.ReasonUnsupported},
		{name: "allow-snippet-annotations false refuses a server snippet", server: `add_header X a;`,
			problem: "spec.server-snippets is refused: the ConfigMap's allow-snippet-annotations is false", reason: model.ReasonUnsupported},
		{name: "a refused location snippet that denies closes its route", location: deny,
			problem: "so the route answers 503", reason: model.ReasonUnsupported, status: 503},
		{name: "a refused server snippet that denies closes every route", server: `limit_req zone=one;`, config: allow,
			problem: `directive "limit_req"`, reason: model.ReasonInvalid, status: 503},
		{name: "a directive outside the allowlist", config: allow, location: `content_by_lua_block { ngx.say("x") }`,
			problem: `content_by_lua_block`, reason: model.ReasonInvalid},
		{name: "a brace that would close the server", config: allow, server: "add_header X a; }\nserver { listen 9999;",
			problem: "spec.server-snippets:", reason: model.ReasonInvalid},
		{name: "more_set_headers without headers-more", config: allow, opts: &noMore, location: `more_set_headers "X: y";`,
			problem: "headers-more module", reason: model.ReasonInvalid},
		{name: "add_header without headers-more is fine", config: allow, opts: &noMore, location: `add_header X y;`, locationKept: true},
		{name: "a location return beside block-cidrs", config: map[string]string{"allow-snippet-annotations": "true", "block-cidrs": "192.0.2.0/24"},
			location: `return 200;`, problem: "ahead of the authentication", reason: model.ReasonInvalid},
		{name: "a server return beside block-cidrs", config: map[string]string{"allow-snippet-annotations": "true", "block-cidrs": "192.0.2.0/24"},
			server: `return 200;`, problem: "ahead of the authentication, address lists, limits or closed paths", reason: model.ReasonInvalid},
		{name: "a break rewrite beside block-cidrs is fine", config: map[string]string{"allow-snippet-annotations": "true", "block-cidrs": "192.0.2.0/24"},
			location: `rewrite ^/a /b break;`, locationKept: true},
		{name: "allowed http-snippets apply to every host", config: allow, http: `add_header X-Everywhere a; proxy_hide_header X-Powered-By;`, httpKept: true},
		{name: "allow-snippet-annotations false refuses http-snippets", http: `add_header X a;`,
			problem: "spec.http-snippets is refused: the ConfigMap's allow-snippet-annotations is false", reason: model.ReasonUnsupported},
		{name: "a block in http-snippets", config: allow, http: `upstream b { server 10.0.0.1; }`,
			problem: `spec.http-snippets: line 1: directive "upstream" opens a block`, reason: model.ReasonInvalid},
		{name: "a map in http-snippets", config: allow, http: `map $http_x $b { default 1; }`,
			problem: `spec.http-snippets: map is read only in the ConfigMap's http-snippet`, reason: model.ReasonInvalid},
		{name: "a server directive in http-snippets", config: allow, http: `return 200;`,
			problem: `spec.http-snippets: line 1: directive "return" is not allowed`, reason: model.ReasonInvalid},
		{name: "refused http-snippets that deny close the VirtualServer's own routes only", config: allow, http: `satisfy any;`,
			problem: `directive "satisfy"`, reason: model.ReasonInvalid, status: 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(2)
			if tc.config != nil {
				snap.ConfigMaps = []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"}, Data: tc.config}}
			}
			vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/a", "a"), pass("/b", "b"))
			vs.Spec.ServerSnippets, vs.Spec.HTTPSnippets = tc.server, tc.http
			vs.Spec.Routes[0].LocationSnippets = tc.location
			snap.VirtualServers = []*nicv1.VirtualServer{vs, mkVirtualServer("other", "other.test", 1, pass("/", "a"))}
			opts := testOpts
			if tc.opts != nil {
				opts = *tc.opts
			}
			m, problems := Build(snap, opts)
			var found []model.Problem
			for _, p := range problems {
				if strings.Contains(p.Message, "snippets") {
					found = append(found, p)
				}
			}
			switch {
			case tc.problem == "" && len(found) > 0:
				t.Fatalf("problems %v, want none", found)
			case tc.problem != "" && (len(found) != 1 || !strings.Contains(found[0].Message, tc.problem) || found[0].Reason != tc.reason ||
				found[0].Object.Kind != "VirtualServer" || found[0].Rejected):
				t.Fatalf("problems %v, want one %s containing %q", found, tc.reason, tc.problem)
			}
			srv := server(m, "cafe.test")
			if kept := srv.Policy != nil && srv.Policy.Snippet != nil; kept != tc.serverKept {
				t.Errorf("server snippet kept %v, want %v", kept, tc.serverKept)
			}
			a := srv.Match("/a")
			if kept := a.Policy != nil && a.Policy.Snippet != nil; kept != tc.locationKept {
				t.Errorf("location snippet kept %v, want %v", kept, tc.locationKept)
			}
			switch {
			case tc.status != 0 && (a.Action.Return == nil || a.Action.Return.Status != tc.status):
				t.Errorf("/a: %+v, want %d", a.Action, tc.status)
			case tc.status == 0 && a.Action.Proxy == nil:
				t.Errorf("/a: %+v, want it proxied", a.Action)
			}
			if b := srv.Match("/b"); (b.Action.Proxy == nil) != (tc.status != 0 && (tc.server != "" || tc.http != "")) {
				t.Errorf("/b: %+v", b.Action)
			}
			// No ConfigMap server-snippet here: one in the model is the
			// folded http-snippets.
			if kept := m.Config.ServerSnippet != nil && m.Config.HTTPSnippet == nil; kept != tc.httpKept {
				t.Errorf("http-snippets kept for every host %v, want %v", kept, tc.httpKept)
			}
			if other := server(m, "other.test"); other == nil || other.Match("/").Action.Proxy == nil {
				t.Errorf("the other host is not served: %+v", other)
			}
		})
	}
}

// TestHTTPSnippetsOrder: the ConfigMap's http-snippet, then the
// VirtualServers' http-snippets by namespace and name (not by age), then
// the ConfigMap's server-snippet apply to every host, the Ingresses'
// included.
func TestHTTPSnippetsOrder(t *testing.T) {
	snap := world(2)
	snap.ConfigMaps = []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"},
		Data: map[string]string{"allow-snippet-annotations": "true", "http-snippet": `add_header X-Order configmap-http;`,
			"server-snippet": `add_header X-Order configmap-server;`}}}
	zeta := mkVirtualServer("zeta", "zeta.test", 0, pass("/", "a"))
	zeta.Spec.HTTPSnippets = `add_header X-Order zeta;`
	alpha := mkVirtualServer("alpha", "alpha.test", 1, pass("/", "b"))
	alpha.Spec.HTTPSnippets = `add_header X-Order alpha;`
	snap.VirtualServers = []*nicv1.VirtualServer{zeta, alpha}
	m, problems := Build(snap, testOpts)
	if len(problems) > 0 {
		t.Fatalf("problems %v", problems)
	}
	var got []string
	for _, h := range m.Config.ServerSnippet.AddHeaders {
		got = append(got, h.Value.String())
	}
	if want := "configmap-http alpha zeta configmap-server"; strings.Join(got, " ") != want {
		t.Errorf("add_header order %q, want %q", got, want)
	}
}

// TestVirtualServerRouteSnippets: a subroute's location-snippets apply to
// its location; one without takes the delegating route's, as in NGINX
// Ingress Controller.
func TestVirtualServerRouteSnippets(t *testing.T) {
	snap := world(3)
	snap.ConfigMaps = []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"},
		Data: map[string]string{"allow-snippet-annotations": "true"}}}
	vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"), nicv1.Route{Path: "/coffee", Route: "coffee", LocationSnippets: `add_header X-From vs;`})
	own := pass("/coffee/own", "c")
	own.LocationSnippets = `add_header X-From vsr;`
	snap.VirtualServers = []*nicv1.VirtualServer{vs}
	snap.VirtualServerRoutes = []*nicv1.VirtualServerRoute{mkVSR("coffee", "cafe.test", pass("/coffee", "c"), own)}
	m, problems := Build(snap, testOpts)
	if len(problems) > 0 {
		t.Fatalf("problems %v", problems)
	}
	srv := server(m, "cafe.test")
	for path, want := range map[string]string{"/coffee": "vs", "/coffee/own": "vsr", "/": ""} {
		l := srv.Match(path)
		got := ""
		if l.Policy != nil && l.Policy.Snippet != nil {
			got = l.Policy.Snippet.AddHeaders[0].Value.String()
		}
		if got != want {
			t.Errorf("%s: X-From %q, want %q", path, got, want)
		}
	}
}

// TestHTTPSnippetsAccess: the allow and deny lines of a VirtualServer's
// http-snippets restrict every host, as at nginx's http level: its own,
// other VirtualServers' (before and after it by name) and the Ingresses'.
func TestHTTPSnippetsAccess(t *testing.T) {
	snap := world(2)
	snap.ConfigMaps = []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"},
		Data: map[string]string{"allow-snippet-annotations": "true"}}}
	mid := mkVirtualServer("mid", "mid.test", 0, pass("/", "a"))
	mid.Spec.HTTPSnippets = `deny 192.0.2.0/24;`
	snap.VirtualServers = []*nicv1.VirtualServer{mkVirtualServer("alpha", "alpha.test", 1, pass("/", "a")), mid,
		mkVirtualServer("zeta", "zeta.test", 2, pass("/", "b"))}
	snap.Ingresses = []*networkingv1.Ingress{mkIngress("default", "shop", 3, rule("shop.test", path("/", "Prefix", "svc-a", 80)))}
	m, problems := Build(snap, testOpts)
	if len(problems) > 0 {
		t.Fatalf("problems %v", problems)
	}
	bad, good := netip.MustParseAddr("192.0.2.7"), netip.MustParseAddr("198.51.100.7")
	for _, host := range []string{"alpha.test", "mid.test", "zeta.test", "shop.test", ""} {
		srv := server(m, host)
		for _, l := range append(srv.Locations, srv.Default) {
			if l.Action.Return != nil {
				continue // the controller's own 404 checks nobody
			}
			var acc *model.AccessList
			if l.Policy != nil {
				acc = l.Policy.Access
			}
			if acc.Allows(bad) || !acc.Allows(good) {
				t.Errorf("host %q path %q: access %+v, want 192.0.2.0/24 denied and others allowed", host, l.Match.Path, acc)
			}
		}
	}
}
