package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
)

// gatewayRouteFields put a value into each field of an HTTPRoute that
// reaches the model (and so possibly nginx text).
var gatewayRouteFields = map[string]func(r *gwv1.HTTPRouteRule, v string){
	"exact path": func(r *gwv1.HTTPRouteRule, v string) {
		r.Matches = []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: gwPtr(gwv1.PathMatchExact), Value: gwPtr("/" + v)}}}
	},
	"prefix path": func(r *gwv1.HTTPRouteRule, v string) {
		r.Matches = []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: gwPtr(gwv1.PathMatchPathPrefix), Value: gwPtr("/" + v)}}}
	},
	"regex path": func(r *gwv1.HTTPRouteRule, v string) {
		r.Matches = []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: gwPtr(gwv1.PathMatchRegularExpression), Value: gwPtr("/" + v)}}}
	},
	"header match": func(r *gwv1.HTTPRouteRule, v string) {
		r.Matches = []gwv1.HTTPRouteMatch{{Headers: []gwv1.HTTPHeaderMatch{{Name: gwv1.HTTPHeaderName(v), Value: v}}}}
	},
	"header regex match": func(r *gwv1.HTTPRouteRule, v string) {
		r.Matches = []gwv1.HTTPRouteMatch{{Headers: []gwv1.HTTPHeaderMatch{{Name: "x", Type: gwPtr(gwv1.HeaderMatchRegularExpression), Value: v}}}}
	},
	"request header": func(r *gwv1.HTTPRouteRule, v string) {
		set := []gwv1.HTTPHeader{{Name: gwv1.HTTPHeaderName("X-" + v), Value: v}}
		add := []gwv1.HTTPHeader{{Name: gwv1.HTTPHeaderName("Y-" + v), Value: v}}
		r.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gwv1.HTTPHeaderFilter{Set: set, Add: add}}}
	},
	"backend request header": func(r *gwv1.HTTPRouteRule, v string) {
		// Two backendRefs whose edits differ: the split carries them.
		a, b := r.BackendRefs[0], r.BackendRefs[0]
		a.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gwv1.HTTPHeaderFilter{
			Set: []gwv1.HTTPHeader{{Name: gwv1.HTTPHeaderName("X-" + v), Value: v}}, Add: []gwv1.HTTPHeader{{Name: gwv1.HTTPHeaderName("Y-" + v), Value: v}}}}}
		b.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gwv1.HTTPHeaderFilter{
			Set: []gwv1.HTTPHeader{{Name: gwv1.HTTPHeaderName("X-" + v), Value: "b"}}}}}
		r.BackendRefs = []gwv1.HTTPBackendRef{a, b}
	},
	"response header": func(r *gwv1.HTTPRouteRule, v string) {
		h := []gwv1.HTTPHeader{{Name: gwv1.HTTPHeaderName("X-" + v), Value: v}}
		r.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gwv1.HTTPHeaderFilter{Set: h}}}
	},
	"rewrite": func(r *gwv1.HTTPRouteRule, v string) {
		r.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{
			Hostname: gwPtr(gwv1.PreciseHostname(v + ".example.com")),
			Path:     &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: gwPtr("/" + v)}}}}
	},
	"redirect": func(r *gwv1.HTTPRouteRule, v string) {
		r.BackendRefs = nil
		r.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{
			Hostname: gwPtr(gwv1.PreciseHostname(v + ".example.com")),
			Path:     &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: gwPtr("/" + v)}}}}
	},
	"prefix redirect": func(r *gwv1.HTTPRouteRule, v string) {
		r.BackendRefs = nil
		r.Matches = []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: gwPtr(gwv1.PathMatchPathPrefix), Value: gwPtr("/" + v)}}}
		r.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{
			Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: gwPtr("/" + v)}}}}
	},
	"mirror": func(r *gwv1.HTTPRouteRule, v string) {
		r.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestMirror, RequestMirror: &gwv1.HTTPRequestMirrorFilter{
			BackendRef: gwv1.BackendObjectReference{Name: gwv1.ObjectName(v), Port: gwPtr(gwv1.PortNumber(80))}, Percent: gwPtr(int32(35))}}}
	},
	"cors": func(r *gwv1.HTTPRouteRule, v string) {
		r.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterCORS, CORS: &gwv1.HTTPCORSFilter{
			AllowOrigins: []gwv1.CORSOrigin{gwv1.CORSOrigin("https://" + v + ".example.com")}, AllowHeaders: []gwv1.HTTPHeaderName{gwv1.HTTPHeaderName(v)}}}}
	},
}

func gwPtr[T any](v T) *T { return &v }

// gatewayRouteModel translates an HTTPRoute of one rule whose field holds
// v (and a second rule with a header match, so a split is rendered) into
// a Model; nil when the translation refuses the rule.
func gatewayRouteModel(t *testing.T, field, v string) *model.Model {
	t.Helper()
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{
		BackendObjectReference: gwv1.BackendObjectReference{Name: "svc", Port: gwPtr(gwv1.PortNumber(80))}}}}}
	// The second rule has the same filters (one location applies one
	// policy) and a header match of the first rule's path.
	split := rule
	gatewayRouteFields[field](&rule, v)
	gatewayRouteFields[field](&split, v)
	path := gwv1.HTTPRouteMatch{}.Path
	if len(rule.Matches) > 0 {
		path = rule.Matches[0].Path
	}
	split.Matches = []gwv1.HTTPRouteMatch{{Path: path, Headers: []gwv1.HTTPHeaderMatch{{Name: "version", Value: "two"}}}}
	hr := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "route"}, Spec: gwv1.HTTPRouteSpec{Rules: []gwv1.HTTPRouteRule{rule, split}}}
	env := gateway.RouteEnv{ServicePort: func(ns, name string, port int32) (bool, bool) { return true, port == 80 }}
	r, _ := gateway.TranslateHTTPRoute(hr, env)
	if r == nil || len(r.Rules) != 2 {
		return nil
	}
	// A mirror whose backend is refused is left out of the rule served:
	// refused too.
	mirrors := 0
	for _, f := range rule.Filters {
		if f.Type == gwv1.HTTPRouteFilterRequestMirror {
			mirrors++
		}
	}
	if len(r.Rules[0].Mirrors) != mirrors {
		return nil
	}
	var locs []*model.Location
	listener := gateway.RouteListener{Owner: model.ObjectRef{Kind: "Gateway", Namespace: "ns", Name: "gw"}, Name: "http", Host: "gw.test", Port: 80}
	for _, pe := range gateway.Compose([]*gateway.RouteRules{r}) {
		l, ps := pe.Location(listener)
		if len(ps) > 0 {
			return nil
		}
		locs = append(locs, l)
	}
	return &model.Model{Config: model.DefaultConfig(),
		Servers:  []*model.Server{{Host: "gw.test", Locations: locs, Sources: []model.ObjectRef{r.Ref}}},
		Backends: []*model.Backend{{Key: "ns/svc/80", Namespace: "ns", Service: "svc", Port: "80", Balance: model.Balance{Method: model.RoundRobin}}}}
}

// TestHostileGatewayRouteValues puts every hostile value into every
// HTTPRoute field that reaches the model: each is refused by the
// translation, or rendered with the directive structure of a benign
// value into a configuration nginx -t accepts, on both data planes.
func TestHostileGatewayRouteValues(t *testing.T) {
	t.Parallel()
	fields := slices.Sorted(func(yield func(string) bool) {
		for f := range gatewayRouteFields {
			if !yield(f) {
				return
			}
		}
	})
	for _, plane := range dataPlanes {
		for _, field := range fields {
			benign := gatewayRouteModel(t, field, "benign")
			if benign == nil {
				t.Fatalf("%s: the benign value is refused", field)
			}
			baseline := mustRenderFor(t, benign, plane)
			t.Run(plane+"/"+field+"/benign", func(t *testing.T) { nginxTest(t, baseline, benign) })
			for i, v := range hostile {
				t.Run(fmt.Sprintf("%s/%s/%d", plane, field, i), func(t *testing.T) {
					m := gatewayRouteModel(t, field, v)
					if m == nil {
						return // refused
					}
					out := mustRenderFor(t, m, plane)
					if got, want := skeleton(t, out), skeleton(t, baseline); got != want {
						t.Fatalf("value %q in %s changed the directive structure:\n%s", v, field, diffLines(want, got))
					}
					if strings.ContainsAny(v, "\r\n") {
						t.Fatalf("value %q with a line break was served", v)
					}
					nginxTest(t, out, m)
				})
			}
		}
	}
}
