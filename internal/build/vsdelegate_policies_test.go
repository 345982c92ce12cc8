package build

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

func page(code int) nicv1.ErrorPage {
	return nicv1.ErrorPage{Codes: []int{code}, Return: &nicv1.ErrorPageReturn{ActionReturn: nicv1.ActionReturn{Body: "x"}}}
}

func withPolicies(r nicv1.Route, names ...string) nicv1.Route {
	for _, n := range names {
		r.Policies = append(r.Policies, nicv1.PolicyReference{Name: n})
	}
	return r
}

func withPages(r nicv1.Route, pages ...nicv1.ErrorPage) nicv1.Route {
	r.ErrorPages = append([]nicv1.ErrorPage{}, pages...)
	return r
}

// delegatedPolicy describes what a location applies: "500", or its
// access lists, rate limit and error page codes.
func delegatedPolicy(l *model.Location) string {
	if r := l.Action.Return; r != nil {
		return fmt.Sprint(r.Status)
	}
	var out []string
	if p := l.Policy; p != nil {
		if a := p.Access; a != nil {
			out = append(out, fmt.Sprintf("allow%v deny%v", a.Allow, a.Deny))
		}
		if p.Limits != nil {
			out = append(out, "limit")
		}
		for _, pg := range p.ResponsePages {
			out = append(out, fmt.Sprintf("page%v", pg.Codes))
		}
	}
	return strings.Join(out, " ")
}

// TestDelegatedRoutePolicies: a delegating route's policies go to the
// subroutes without policies of their own, all of them or none (not per
// kind), each replacing the VirtualServer's of its kind; its errorPages
// go to the subroutes without errorPages (errorPages: [] keeps none). A
// row per rule; want maps a request path to what its location applies,
// problems are "Kind/name Reason" sorted.
func TestDelegatedRoutePolicies(t *testing.T) {
	cafe := map[string]string{"app": "cafe"}
	for _, tc := range []struct {
		name     string
		spec     []string // the VirtualServer's own Policies
		route    nicv1.Route
		vsrs     []*nicv1.VirtualServerRoute
		want     map[string]string
		problems []string
	}{
		{name: "a subroute without policies takes the route's, which replace the VirtualServer's of their kind",
			spec:  []string{"allow-lan"},
			route: withPolicies(nicv1.Route{Path: "/cafe", Route: "tea"}, "deny-one"),
			vsrs:  []*nicv1.VirtualServerRoute{mkVSR("tea", "cafe.test", pass("/cafe/tea", "c"))},
			want:  map[string]string{"/cafe/tea": "allow[] deny[10.0.0.1/32]", "/": "allow[10.0.0.0/8] deny[]"}},
		{name: "a subroute with policies of its own takes none of the route's, even of another kind",
			spec:  []string{"allow-lan"},
			route: withPolicies(nicv1.Route{Path: "/cafe", Route: "tea"}, "deny-one"),
			vsrs: []*nicv1.VirtualServerRoute{mkVSR("tea", "cafe.test", pass("/cafe/tea", "c"),
				withPolicies(pass("/cafe/limited", "c"), "limit"))},
			want: map[string]string{"/cafe/tea": "allow[] deny[10.0.0.1/32]", "/cafe/limited": "allow[10.0.0.0/8] deny[] limit"}},
		{name: "a routeSelector's policies go to every VirtualServerRoute it selects",
			route: withPolicies(selecting("/cafe", cafe), "deny-one"),
			vsrs: []*nicv1.VirtualServerRoute{
				labelled("default", cafe, mkVSR("tea", "cafe.test", pass("/cafe/tea", "c"))),
				labelled("default", cafe, mkVSR("coffee", "cafe.test", pass("/cafe/coffee", "c"))),
			},
			want: map[string]string{"/cafe/tea": "allow[] deny[10.0.0.1/32]", "/cafe/coffee": "allow[] deny[10.0.0.1/32]"}},
		{name: "policies that every subroute replaces are reported on the VirtualServer",
			route:    withPolicies(nicv1.Route{Path: "/cafe", Route: "tea"}, "deny-one"),
			vsrs:     []*nicv1.VirtualServerRoute{mkVSR("tea", "cafe.test", withPolicies(pass("/cafe/tea", "c"), "limit"))},
			want:     map[string]string{"/cafe/tea": "limit"},
			problems: []string{"VirtualServer/cafe Unsupported"}},
		{name: "a missing Policy of the route: the subroutes taking it answer 500, the others serve",
			route: withPolicies(nicv1.Route{Path: "/cafe", Route: "tea"}, "nope"),
			vsrs: []*nicv1.VirtualServerRoute{mkVSR("tea", "cafe.test", pass("/cafe/tea", "c"),
				withPolicies(pass("/cafe/limited", "c"), "limit"))},
			want:     map[string]string{"/cafe/tea": "500", "/cafe/limited": "limit"},
			problems: []string{"VirtualServer/cafe Invalid", "VirtualServerRoute/tea Invalid"}},
		{name: "a subroute without errorPages takes the route's; with its own or errorPages: [], not",
			route: withPages(nicv1.Route{Path: "/cafe", Route: "tea"}, page(404)),
			vsrs: []*nicv1.VirtualServerRoute{mkVSR("tea", "cafe.test", pass("/cafe/tea", "c"),
				withPages(pass("/cafe/own", "c"), page(502)), withPages(pass("/cafe/none", "c")))},
			want: map[string]string{"/cafe/tea": "page[404]", "/cafe/own": "page[502]", "/cafe/none": "", "/": ""}},
		{name: "errorPages that every subroute replaces are reported on the VirtualServer",
			route:    withPages(selecting("/cafe", cafe), page(404)),
			vsrs:     []*nicv1.VirtualServerRoute{labelled("default", cafe, mkVSR("tea", "cafe.test", withPages(pass("/cafe/tea", "c"), page(502))))},
			want:     map[string]string{"/cafe/tea": "page[502]"},
			problems: []string{"VirtualServer/cafe Unsupported"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(3)
			snap.Policies = []*nicv1.Policy{
				mkPolicy("allow-lan", nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{Allow: []string{"10.0.0.0/8"}}}),
				mkPolicy("deny-one", nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{Deny: []string{"10.0.0.1"}}}),
				mkPolicy("limit", nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s", Key: "${binary_remote_addr}"}}),
			}
			vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"), tc.route)
			for _, n := range tc.spec {
				vs.Spec.Policies = append(vs.Spec.Policies, nicv1.PolicyReference{Name: n})
			}
			snap.VirtualServers = []*nicv1.VirtualServer{vs}
			snap.VirtualServerRoutes = tc.vsrs
			m, problems := Build(snap, testOpts)
			srv := server(m, "cafe.test")
			for path, want := range tc.want {
				if got := delegatedPolicy(srv.Match(path)); got != want {
					t.Errorf("%s: %q, want %q", path, got, want)
				}
			}
			got := describeProblems(problems)
			if !slices.Equal(got, tc.problems) {
				t.Errorf("problems %q\nwant %q\n(%v)", got, tc.problems, problems)
			}
		})
	}
}
