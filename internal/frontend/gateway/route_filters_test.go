package gateway

import (
	"reflect"
	"testing"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

func reqHeaders(h gwv1.HTTPHeaderFilter) gwv1.HTTPRouteFilter {
	return gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &h}
}

func respHeaders(h gwv1.HTTPHeaderFilter) gwv1.HTTPRouteFilter {
	return gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &h}
}

func redirectRule(r gwv1.HTTPRequestRedirectFilter) gwv1.HTTPRouteRule {
	return gwv1.HTTPRouteRule{Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &r}}}
}

func rewriteRule(match gwv1.HTTPRouteMatch, w gwv1.HTTPURLRewriteFilter) gwv1.HTTPRouteRule {
	return withFilters(proxyRule(match), gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &w})
}

func lit(s string) model.Template { return model.Template{{Literal: s}} }

// wantPolicy checks the one rule's policy.
func wantPolicy(want *model.Policy) func(*testing.T, *RouteRules, []model.Problem) {
	return func(t *testing.T, r *RouteRules, ps []model.Problem) {
		t.Helper()
		if len(ps) > 0 {
			t.Errorf("problems: %v", ps)
		}
		if got := onlyRule(t, r).Policy; !reflect.DeepEqual(got, want) {
			t.Errorf("policy\n got %#v\nwant %#v", got, want)
			if got != nil && want != nil {
				t.Errorf("snippet\n got %#v\nwant %#v", got.Snippet, want.Snippet)
			}
		}
	}
}

func TestTranslateHeaderFilters(t *testing.T) {
	hdr := func(n, v string) gwv1.HTTPHeader { return gwv1.HTTPHeader{Name: gwv1.HTTPHeaderName(n), Value: v} }
	runRows(t, []routeRow{
		// HTTPHeaderFilter.Set, Add, Remove on requests (httproute-request-header-modifier).
		{"request", newHTTPRoute("r", withFilters(proxyRule(), reqHeaders(gwv1.HTTPHeaderFilter{
			Set: []gwv1.HTTPHeader{hdr("X-Header-Set", "set-overwrites-values")},
			Add: []gwv1.HTTPHeader{hdr("X-Header-Add", "add-appends-values")}, Remove: []string{"X-Header-Remove"}}))),
			wantPolicy(&model.Policy{Snippet: &model.Snippet{
				Steps: []model.SnippetStep{
					{Set: &model.SetVariable{Name: "gateway_add_0", Value: model.Template{{Variable: "http_x_header_add"}, {Literal: ","}, {Literal: "add-appends-values"}}}},
					{If: &model.SnippetIf{Variable: "http_x_header_add", Op: "=", Then: []model.SnippetStep{
						{Set: &model.SetVariable{Name: "gateway_add_0", Value: lit("add-appends-values")}}}}},
				},
				ProxySetHeaders: []model.TemplateHeader{{Name: "X-Header-Set", Value: lit("set-overwrites-values")},
					{Name: "X-Header-Add", Value: model.Template{{Variable: "gateway_add_0"}}}, {Name: "X-Header-Remove", Value: model.Template{}}}}})},
		// ... and on responses (httproute-response-header-modifier).
		{"response", newHTTPRoute("r", withFilters(proxyRule(), respHeaders(gwv1.HTTPHeaderFilter{
			Set: []gwv1.HTTPHeader{hdr("X-Header-Set", "set")}, Add: []gwv1.HTTPHeader{hdr("X-Header-Add", "add")}, Remove: []string{"X-Header-Remove"}}))),
			wantPolicy(&model.Policy{Snippet: &model.Snippet{
				AddHeaders:       []model.TemplateHeader{{Name: "X-Header-Set", Value: lit("set"), Always: true}, {Name: "X-Header-Add", Value: lit("add"), Always: true}},
				ProxyHideHeaders: []string{"X-Header-Set", "X-Header-Remove"}}})},
		// Hostile values never reach nginx text: CRLF, "$", quotes, braces.
		{"value CRLF", newHTTPRoute("r", withFilters(proxyRule(), reqHeaders(gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{hdr("X", "a\r\nInjected: 1")}}))), refused(routeReasonUnsupportedValue, "set[0]")},
		{"value dollar", newHTTPRoute("r", withFilters(proxyRule(), respHeaders(gwv1.HTTPHeaderFilter{Add: []gwv1.HTTPHeader{hdr("X", "$remote_addr")}}))), refused(routeReasonUnsupportedValue, "'$'")},
		{"value brace", newHTTPRoute("r", withFilters(proxyRule(), reqHeaders(gwv1.HTTPHeaderFilter{Add: []gwv1.HTTPHeader{hdr("X", "a;} location / {")}}))), refused(routeReasonUnsupportedValue, "add[0]")},
		// An RFC 9110 token the model's header names do not take.
		{"name token", newHTTPRoute("r", withFilters(proxyRule(), reqHeaders(gwv1.HTTPHeaderFilter{Remove: []string{"X#y"}}))), refused(routeReasonUnsupportedValue, "remove[0]")},
		// "Only one action for a given header name is permitted."
		{"one action per name", newHTTPRoute("r", withFilters(proxyRule(), reqHeaders(gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{hdr("X", "a")}, Remove: []string{"x"}}))),
			refused(routeReasonUnsupportedValue, "one action only")},
		// HTTPRouteRule.Filters: RequestHeaderModifier cannot be repeated.
		{"repeated", newHTTPRoute("r", withFilters(proxyRule(), reqHeaders(gwv1.HTTPHeaderFilter{}), reqHeaders(gwv1.HTTPHeaderFilter{}))), refused(routeReasonUnsupportedValue, "a second")},
	})
}

func TestTranslateRedirect(t *testing.T) {
	red := func(want Redirect) func(*testing.T, *RouteRules, []model.Problem) {
		return func(t *testing.T, r *RouteRules, ps []model.Problem) {
			if got := onlyRule(t, r).Redirect; got == nil || *got != want {
				t.Errorf("redirect %+v, want %+v", got, want)
			}
		}
	}
	runRows(t, []routeRow{
		// HTTPRequestRedirectFilter.StatusCode default 302; Hostname (httproute-redirect-host-and-status).
		{"host", newHTTPRoute("r", redirectRule(gwv1.HTTPRequestRedirectFilter{Hostname: routePtr(gwv1.PreciseHostname("example.org"))})), red(Redirect{Hostname: "example.org", Code: 302})},
		// Scheme, Port, StatusCode 301/303/307/308 (httproute-redirect-port-and-scheme, -30x-redirect).
		{"scheme port", newHTTPRoute("r", redirectRule(gwv1.HTTPRequestRedirectFilter{Scheme: routePtr("https"), Port: routePtr(gwv1.PortNumber(8443)), StatusCode: routePtr(308)})),
			red(Redirect{Scheme: "https", Port: 8443, Code: 308})},
		// Path ReplaceFullPath (httproute-redirect-path).
		{"full path", newHTTPRoute("r", redirectRule(gwv1.HTTPRequestRedirectFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: routePtr("/full")}})),
			red(Redirect{FullPath: "/full", Code: 302})},
		// Path ReplacePrefixMatch (httproute-redirect-path): each match's
		// own prefix is replaced, so only PathPrefix matches may have it.
		{"prefix path", newHTTPRoute("r", redirectRule(gwv1.HTTPRequestRedirectFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr("/p")}})),
			red(Redirect{PrefixWith: "/p", ReplacePrefix: true, Code: 302})},
		{"prefix path of an exact match", newHTTPRoute("r", withMatches(redirectRule(gwv1.HTTPRequestRedirectFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr("/p")}}),
			pathMatch(gwv1.PathMatchPathPrefix, "/a"), pathMatch(gwv1.PathMatchExact, "/b"))),
			refused(routeReasonUnsupportedValue, "ReplacePrefixMatch needs PathPrefix matches")},
		{"prefix path hostile", newHTTPRoute("r", redirectRule(gwv1.HTTPRequestRedirectFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr("/a$host")}})),
			refused(routeReasonUnsupportedValue, "replacePrefixMatch")},
		{"status", newHTTPRoute("r", redirectRule(gwv1.HTTPRequestRedirectFilter{StatusCode: routePtr(304)})), refused(routeReasonUnsupportedValue, "statusCode 304")},
		{"scheme", newHTTPRoute("r", redirectRule(gwv1.HTTPRequestRedirectFilter{Scheme: routePtr("ftp")})), refused(routeReasonUnsupportedValue, `scheme "ftp"`)},
		{"hostname", newHTTPRoute("r", redirectRule(gwv1.HTTPRequestRedirectFilter{Hostname: routePtr(gwv1.PreciseHostname("a\r\nb"))})), refused(routeReasonUnsupportedValue, "hostname")},
		{"full path hostile", newHTTPRoute("r", redirectRule(gwv1.HTTPRequestRedirectFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: routePtr("/a;return 200")}})),
			refused(routeReasonUnsupportedValue, "replaceFullPath")},
		// "RequestRedirect filter must not be used together with backendRefs".
		{"with backendRefs", newHTTPRoute("r", withFilters(proxyRule(), redirectRule(gwv1.HTTPRequestRedirectFilter{}).Filters...)), refused(routeReasonIncompatibleFilters, "no backendRefs")},
	})
}

func TestRedirectModel(t *testing.T) {
	v := func(n string) model.TemplatePart { return model.TemplatePart{Variable: n} }
	l := func(s string) model.TemplatePart { return model.TemplatePart{Literal: s} }
	for _, row := range []struct {
		name  string
		r     Redirect
		port  int
		https bool
		want  model.Template
	}{
		{"request's all", Redirect{Code: 302}, 80, false, model.Template{v("scheme"), l("://"), v("host"), v("request_uri")}},
		// "If redirect scheme is empty, the redirect port MUST be the Gateway RouteListener port."
		{"listener port", Redirect{Code: 302}, 8080, false, model.Template{v("scheme"), l("://"), v("host"), l(":8080"), v("request_uri")}},
		// "the redirect port MUST be the well-known port associated with the redirect scheme".
		{"scheme's port", Redirect{Scheme: "https", Code: 302}, 8080, false, model.Template{l("https://"), v("host"), v("request_uri")}},
		{"explicit port", Redirect{Scheme: "http", Hostname: "example.org", Port: 8080, Code: 302}, 80, false, model.Template{l("http://"), l("example.org"), l(":8080"), v("request_uri")}},
		// "SHOULD NOT add the port number ... HTTPS and port 443".
		{"https 443", Redirect{Port: 443, Code: 302}, 443, true, model.Template{v("scheme"), l("://"), v("host"), v("request_uri")}},
		{"full path", Redirect{FullPath: "/f", Code: 301}, 80, false, model.Template{v("scheme"), l("://"), v("host"), l("/f"), v("is_args"), v("args")}},
		// ReplacePrefixMatch: the template stops before the path, which
		// the model's Prefix makes of the matched prefix.
		{"prefix path", Redirect{PrefixWith: "/new", ReplacePrefix: true, Code: 301}, 80, false, model.Template{v("scheme"), l("://"), v("host")}},
	} {
		t.Run(row.name, func(t *testing.T) {
			match := model.Match{Type: model.Prefix, Path: "/old"}
			got := row.r.Model(row.port, row.https, match)
			if got.Code != row.r.Code || !reflect.DeepEqual(got.Template, row.want) {
				t.Errorf("got %d %v, want %v", got.Code, got.Template, row.want)
			}
			if want := row.r.ReplacePrefix; (got.Prefix != nil) != want ||
				want && *got.Prefix != (model.RedirectPrefix{Path: "/old", With: row.r.PrefixWith}) {
				t.Errorf("prefix %+v", got.Prefix)
			}
		})
	}
}

func TestTranslateURLRewrite(t *testing.T) {
	host := model.HeaderValue("one.example.org")
	prefix := pathMatch(gwv1.PathMatchPathPrefix, "/prefix/one/")
	runRows(t, []routeRow{
		// HTTPURLRewriteFilter.Hostname (httproute-rewrite-host).
		{"hostname", newHTTPRoute("r", rewriteRule(gwv1.HTTPRouteMatch{}, gwv1.HTTPURLRewriteFilter{Hostname: routePtr(gwv1.PreciseHostname("one.example.org"))})),
			wantPolicy(&model.Policy{UpstreamHost: &host})},
		// ReplaceFullPath and ReplacePrefixMatch (httproute-rewrite-path).
		{"full", newHTTPRoute("r", rewriteRule(prefix, gwv1.HTTPURLRewriteFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: routePtr("/one")}})),
			wantPolicy(&model.Policy{Rewrite: &model.Rewrite{Target: "/one"}})},
		{"prefix", newHTTPRoute("r", rewriteRule(prefix, gwv1.HTTPURLRewriteFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr("/one/")}})),
			wantPolicy(&model.Policy{Rewrite: &model.Rewrite{Target: "/one", Prefix: true}})},
		// Replacing with "/" (or "") strips the prefix by path elements.
		{"prefix to root", newHTTPRoute("r", rewriteRule(prefix, gwv1.HTTPURLRewriteFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr("/")}})),
			wantPolicy(&model.Policy{Rewrite: &model.Rewrite{Target: "/", Prefix: true, Strip: true}})},
		{"prefix to empty", newHTTPRoute("r", rewriteRule(prefix, gwv1.HTTPURLRewriteFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr("")}})),
			wantPolicy(&model.Policy{Rewrite: &model.Rewrite{Target: "/", Prefix: true, Strip: true}})},
		// The root prefix's rest lacks its "/": the target gives it.
		{"root prefix", newHTTPRoute("r", rewriteRule(gwv1.HTTPRouteMatch{}, gwv1.HTTPURLRewriteFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr("/a")}})),
			wantPolicy(&model.Policy{Rewrite: &model.Rewrite{Target: "/a/", Prefix: true}})},
		{"root prefix to root", newHTTPRoute("r", rewriteRule(gwv1.HTTPRouteMatch{}, gwv1.HTTPURLRewriteFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr("/")}})),
			wantPolicy(&model.Policy{Rewrite: &model.Rewrite{Target: "/", Prefix: true}})},
		// "ReplacePrefixMatch is only compatible with a PathPrefix HTTPRouteMatch."
		{"prefix of exact", newHTTPRoute("r", rewriteRule(pathMatch(gwv1.PathMatchExact, "/a"), gwv1.HTTPURLRewriteFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr("/b")}})),
			refused(routeReasonUnsupportedValue, "exactly one PathPrefix")},
		{"hostile", newHTTPRoute("r", rewriteRule(prefix, gwv1.HTTPURLRewriteFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: routePtr("/a{b}")}})),
			refused(routeReasonUnsupportedValue, "replaceFullPath")},
		// "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both".
		{"with redirect", newHTTPRoute("r", gwv1.HTTPRouteRule{Filters: []gwv1.HTTPRouteFilter{
			{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{}},
			{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{}}}}),
			refused(routeReasonIncompatibleFilters, "do not go together")},
	})
}

func TestTranslateMirrorCORSExtension(t *testing.T) {
	mirror := func(m gwv1.HTTPRequestMirrorFilter) gwv1.HTTPRouteFilter {
		return gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestMirror, RequestMirror: &m}
	}
	toRef := func(name string) gwv1.BackendObjectReference { return backendRef(name).BackendObjectReference }
	v2 := Backend{Namespace: "infra", Service: "infra-backend-v2", Port: 8080}
	mirrors := func(want ...Mirror) func(*testing.T, *RouteRules, []model.Problem) {
		return func(t *testing.T, r *RouteRules, ps []model.Problem) {
			rule := onlyRule(t, r)
			if got := rule.Mirrors; !reflect.DeepEqual(got, want) {
				t.Errorf("mirrors %+v, want %+v", got, want)
			}
			// The location's policy copies to each, but for 0%.
			var wantModel, got []model.Mirror
			for _, m := range want {
				if m.Percent > 0 {
					wantModel = append(wantModel, model.Mirror{Backend: m.Backend.Key(), RequestBody: true, Percent: m.Percent})
				}
			}
			if rule.Policy != nil {
				got = rule.Policy.Mirrors
			}
			if !reflect.DeepEqual(got, wantModel) {
				t.Errorf("policy mirrors %+v, want %+v", got, wantModel)
			}
		}
	}
	runRows(t, []routeRow{
		// RequestMirror, several (httproute-request-mirror, -multiple-mirrors, -percentage-mirror).
		{"mirrors", newHTTPRoute("r", withFilters(proxyRule(), mirror(gwv1.HTTPRequestMirrorFilter{BackendRef: toRef("infra-backend-v2")}),
			mirror(gwv1.HTTPRequestMirrorFilter{BackendRef: toRef("infra-backend-v2"), Fraction: &gwv1.Fraction{Numerator: 1, Denominator: routePtr(int32(4))}}))),
			mirrors(Mirror{Backend: v2, Percent: 100}, Mirror{Backend: v2, Percent: 25})},
		{"percent 0", newHTTPRoute("r", withFilters(proxyRule(), mirror(gwv1.HTTPRequestMirrorFilter{BackendRef: toRef("infra-backend-v2"), Percent: routePtr(int32(0))}),
			mirror(gwv1.HTTPRequestMirrorFilter{BackendRef: toRef("infra-backend-v2"), Percent: routePtr(int32(35))}))),
			mirrors(Mirror{Backend: v2, Percent: 0}, Mirror{Backend: v2, Percent: 35})},
		{"fraction", newHTTPRoute("r", withFilters(proxyRule(), mirror(gwv1.HTTPRequestMirrorFilter{BackendRef: toRef("infra-backend-v2"), Fraction: &gwv1.Fraction{Numerator: 1, Denominator: routePtr(int32(3))}}))),
			refused(routeReasonUnsupportedValue, "whole percentage")},
		// A mirror whose backend is missing is dropped, the rule served.
		{"missing", newHTTPRoute("r", withFilters(proxyRule(), mirror(gwv1.HTTPRequestMirrorFilter{BackendRef: toRef("nonexistent")}))),
			func(t *testing.T, r *RouteRules, ps []model.Problem) {
				mirrors()(t, r, ps)
				hasProblem(t, ps, routeCondResolvedRefs, routeReasonBackendNotFound, "requestMirror.backendRef")
				hasProblem(t, ps, routeCondResolvedRefs, routeReasonBackendNotFound, "the mirror is left out")
			}},
		// HTTPCORSFilter (httproute-cors).
		{"cors", newHTTPRoute("r", withFilters(proxyRule(), gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterCORS, CORS: &gwv1.HTTPCORSFilter{
			AllowOrigins: []gwv1.CORSOrigin{"https://www.foo.com", "https://*.bar.com"}, AllowCredentials: routePtr(true),
			AllowMethods: []gwv1.HTTPMethodWithWildcard{"GET", "OPTIONS"}, AllowHeaders: []gwv1.HTTPHeaderName{"x-header-1"},
			ExposeHeaders: []gwv1.HTTPHeaderName{"x-header-3"}, MaxAge: 3600}})),
			wantPolicy(&model.Policy{CORS: &model.CORS{AnyDepth: true, AnswerPreflights: true, Origins: []string{"https://www.foo.com", "https://*.bar.com"}, Credentials: true,
				Methods: []string{"GET", "OPTIONS"}, Headers: []string{"x-header-1"}, ExposeHeaders: []string{"x-header-3"}, MaxAge: time.Hour}})},
		{"cors any", newHTTPRoute("r", withFilters(proxyRule(), gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterCORS, CORS: &gwv1.HTTPCORSFilter{
			AllowOrigins: []gwv1.CORSOrigin{"*"}, AllowMethods: []gwv1.HTTPMethodWithWildcard{"*"}}})),
			wantPolicy(&model.Policy{CORS: &model.CORS{AllowAnyOrigin: true, MaxAge: 5 * time.Second, Methods: []string{"*"}}})},
		// "*" with credentials: the request's own values are echoed
		// (httproute-cors "cors-wildcard-methods-headers").
		{"cors any credentials", newHTTPRoute("r", withFilters(proxyRule(), gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterCORS, CORS: &gwv1.HTTPCORSFilter{
			AllowOrigins: []gwv1.CORSOrigin{"*"}, AllowMethods: []gwv1.HTTPMethodWithWildcard{"*"}, AllowHeaders: []gwv1.HTTPHeaderName{"*"},
			AllowCredentials: routePtr(true)}})),
			wantPolicy(&model.Policy{CORS: &model.CORS{AllowAnyOrigin: true, Echo: true, Credentials: true, MaxAge: 5 * time.Second,
				Methods: []string{"*"}, Headers: []string{"*"}}})},
		{"cors listed origin, any method, credentials", newHTTPRoute("r", withFilters(proxyRule(), gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterCORS, CORS: &gwv1.HTTPCORSFilter{
			AllowOrigins: []gwv1.CORSOrigin{"https://a.example"}, AllowMethods: []gwv1.HTTPMethodWithWildcard{"*"}, AllowCredentials: routePtr(true)}})),
			wantPolicy(&model.Policy{CORS: &model.CORS{AnswerPreflights: true, Origins: []string{"https://a.example"}, Echo: true, Credentials: true, MaxAge: 5 * time.Second,
				Methods: []string{"*"}}})},
		{"cors expose any credentials", newHTTPRoute("r", withFilters(proxyRule(), gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterCORS, CORS: &gwv1.HTTPCORSFilter{
			AllowOrigins: []gwv1.CORSOrigin{"*"}, ExposeHeaders: []gwv1.HTTPHeaderName{"*"}, AllowCredentials: routePtr(true)}})),
			refused(routeReasonUnsupportedValue, "exposeHeaders * with allowCredentials")},
		{"cors hostile origin", newHTTPRoute("r", withFilters(proxyRule(), gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterCORS, CORS: &gwv1.HTTPCORSFilter{
			AllowOrigins: []gwv1.CORSOrigin{"https://a.com\"; add_header X 1"}}})), refused(routeReasonUnsupportedValue, "allowOrigins[0]")},
		// "If a reference to a custom filter type cannot be resolved, the filter MUST NOT be skipped."
		{"extension ref", newHTTPRoute("r", withFilters(proxyRule(), gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterExtensionRef, ExtensionRef: &gwv1.LocalObjectReference{Name: "x"}})),
			refused(routeReasonUnsupportedValue, "ExtensionRef")},
		// HTTPRouteFilterType: unknown values are UnsupportedValue.
		{"unknown filter", newHTTPRoute("r", withFilters(proxyRule(), gwv1.HTTPRouteFilter{Type: "Compress"})), refused(routeReasonUnsupportedValue, `"Compress"`)},
	})
}

// withMatches gives rule the matches ms.
func withMatches(rule gwv1.HTTPRouteRule, ms ...gwv1.HTTPRouteMatch) gwv1.HTTPRouteRule {
	rule.Matches = ms
	return rule
}
