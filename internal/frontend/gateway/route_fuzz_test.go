package gateway

import (
	"strings"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// FuzzTranslateHTTPRoute feeds arbitrary strings to every field of a
// route that reaches the model and checks that what comes out holds to
// the model's grammars (so nothing a user writes reaches nginx text
// unchecked), that the locations' splits are valid, and that render
// accepts them.
func FuzzTranslateHTTPRoute(f *testing.F) {
	f.Add("/a", "PathPrefix", "x-h", "v", "q", "1", "X-Set", "val", "/full", "example.org")
	f.Add("^/v[0-9]+", "RegularExpression", "h", "^a|b", "q", "v", "X", "a\r\nb", "/a;b", "a.b")
	f.Add("/a{", "Exact", "h!", "a\"b", "q-1", "$x", "X#", "$host", "/a/../b", "*.x")
	f.Fuzz(func(t *testing.T, path, pathType, hName, hValue, qName, qValue, setName, setValue, fullPath, host string) {
		m := gwv1.HTTPRouteMatch{
			Path:        &gwv1.HTTPPathMatch{Type: routePtr(gwv1.PathMatchType(pathType)), Value: routePtr(path)},
			Headers:     []gwv1.HTTPHeaderMatch{{Name: gwv1.HTTPHeaderName(hName), Value: hValue}, {Name: "r", Type: routePtr(gwv1.HeaderMatchRegularExpression), Value: hValue}},
			QueryParams: []gwv1.HTTPQueryParamMatch{{Name: gwv1.HTTPHeaderName(qName), Value: qValue}},
		}
		hdr := gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{{Name: gwv1.HTTPHeaderName(setName), Value: setValue}},
			Add: []gwv1.HTTPHeader{{Name: "A", Value: setValue}}}
		r := newHTTPRoute("r",
			withFilters(proxyRule(m), reqHeaders(hdr), respHeaders(hdr), gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite,
				URLRewrite: &gwv1.HTTPURLRewriteFilter{Hostname: routePtr(gwv1.PreciseHostname(host)),
					Path: &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: routePtr(fullPath)}}},
				gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestMirror, RequestMirror: &gwv1.HTTPRequestMirrorFilter{
					BackendRef: gwv1.BackendObjectReference{Name: gwv1.ObjectName(qName), Port: routePtr(gwv1.PortNumber(80))}, Percent: routePtr(int32(len(qValue) % 101))}}),
			gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{m}, Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect,
				RequestRedirect: &gwv1.HTTPRequestRedirectFilter{Hostname: routePtr(gwv1.PreciseHostname(host)),
					Path: &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: routePtr(fullPath)}}}}},
			gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{m}, Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect,
				RequestRedirect: &gwv1.HTTPRequestRedirectFilter{
					Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: routePtr(fullPath)}}}}},
			// backendRefs with request header edits of their own, which
			// differ: the split carries them.
			gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{pathMatch(gwv1.PathMatchPathPrefix, "/backend")}, Filters: []gwv1.HTTPRouteFilter{reqHeaders(hdr)},
				BackendRefs: []gwv1.HTTPBackendRef{filtered("a", 1, reqHeaders(gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{{Name: gwv1.HTTPHeaderName(hName), Value: hValue}},
					Add: []gwv1.HTTPHeader{{Name: gwv1.HTTPHeaderName(qName), Value: qValue}}})),
					filtered("b", 1, reqHeaders(gwv1.HTTPHeaderFilter{Remove: []string{setName}}))}})
		tr, _ := TranslateHTTPRoute(r, testEnv)
		if tr == nil {
			return
		}
		for _, rule := range tr.Rules {
			for _, m := range rule.Matches {
				checkMatch(t, m)
			}
			if p := rule.Policy; p != nil {
				checkPolicy(t, p)
			}
			if rd := rule.Redirect; rd != nil {
				for _, m := range rule.Matches {
					md := rd.Model(80, false, m.Path)
					for _, part := range md.Template {
						checkLiteral(t, part.Literal)
					}
					if md.Prefix != nil {
						checkLiteral(t, md.Prefix.Path)
						checkLiteral(t, md.Prefix.With)
					}
				}
			}
		}
		var locs []*model.Location
		for _, pe := range Compose([]*RouteRules{tr}) {
			loc, _ := pe.Location(testListener)
			if s := loc.Action.Proxy; s != nil && s.Split != nil {
				if err := s.Split.Validate(); err != nil {
					t.Errorf("split: %v", err)
				}
				if b := balancer.SplitOf(s.Split); b.Validate() != nil {
					t.Errorf("split payload: %v", b.Validate())
				}
			}
			locs = append(locs, loc)
		}
		// Render, the only writer of nginx text, must take what the
		// translation lets through.
		if _, err := renderLocations(locs, tr.Ref); err != nil {
			t.Errorf("render: %v", err)
		}
	})
}

func checkMatch(t *testing.T, m Match) {
	t.Helper()
	switch m.Path.Type {
	case model.Regex:
		if _, err := model.ParseRegex(m.Path.Path); err != nil {
			t.Errorf("regex %q: %v", m.Path.Path, err)
		}
	default:
		if err := model.ValidatePath(m.Path.Path); err != nil {
			t.Errorf("path %q: %v", m.Path.Path, err)
		}
	}
	for _, c := range m.Conditions {
		if err := c.Validate(); err != nil {
			t.Errorf("condition %+v: %v", c, err)
		}
	}
}

func checkPolicy(t *testing.T, p *model.Policy) {
	t.Helper()
	for _, m := range p.Mirrors {
		if err := m.Validate(); err != nil || m.URL != "" {
			t.Errorf("mirror %+v: %v", m, err)
		}
	}
	if p.UpstreamHost != nil {
		checkLiteral(t, string(*p.UpstreamHost))
	}
	if p.Rewrite != nil {
		if _, err := model.ParseRewriteTarget(p.Rewrite.Target, 0); err != nil {
			t.Errorf("rewrite %q: %v", p.Rewrite.Target, err)
		}
	}
	if s := p.Snippet; s != nil {
		for _, hs := range [][]model.TemplateHeader{s.ProxySetHeaders, s.AddHeaders} {
			for _, h := range hs {
				if _, err := model.ParseHeaderName(h.Name); err != nil {
					t.Errorf("header name %q: %v", h.Name, err)
				}
				for _, part := range h.Value {
					checkLiteral(t, part.Literal)
				}
			}
		}
		for _, n := range s.ProxyHideHeaders {
			if _, err := model.ParseHeaderName(n); err != nil {
				t.Errorf("header name %q: %v", n, err)
			}
		}
	}
}

// checkLiteral fails on a literal that ParseHeaderValue refuses or that
// holds what ends a directive or block.
func checkLiteral(t *testing.T, s string) {
	t.Helper()
	if _, err := model.ParseHeaderValue(s); err != nil || strings.ContainsAny(s, "\r\n{}\"\\$") {
		t.Errorf("literal %q reaches the model: %v", s, err)
	}
}
