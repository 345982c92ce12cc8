package nic

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TestTranslateVirtualServerRoute: a VirtualServerRoute checked for the
// paths delegated to it, a row per rule (NGINX Ingress Controller's).
func TestTranslateVirtualServerRoute(t *testing.T) {
	vsr := func(host string, subroutes ...nicv1.Route) *nicv1.VirtualServerRoute {
		return &nicv1.VirtualServerRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "coffee"},
			Spec: nicv1.VirtualServerRouteSpec{Host: host, Upstreams: []nicv1.Upstream{{Name: "c", Service: "coffee", Port: 80}}, Subroutes: subroutes}}
	}
	passTo := func(p string) nicv1.Route { return nicv1.Route{Path: p, Action: &nicv1.Action{Pass: "c"}} }
	prefix := []model.Match{{Type: model.StringPrefix, Path: "/coffee"}}
	exact := []model.Match{{Type: model.Exact, Path: "/coffee"}}
	regex := []model.Match{{Type: model.Regex, Path: "/coffee/[0-9]+"}, {Type: model.Regex, Path: "/tea$"}}
	for _, tc := range []struct {
		name    string
		in      *nicv1.VirtualServerRoute
		parents []model.Match
		routes  int
		err     string
	}{
		{"subroutes under the prefix", vsr("cafe.test", passTo("/coffee"), passTo("=/coffee/latte"), passTo("~* ^/coffee/[0-9]+")), prefix, 3, ""},
		{"another host", vsr("bar.test", passTo("/coffee")), prefix, 0, "is not the host"},
		{"a subroute outside the prefix", vsr("cafe.test", passTo("/tea")), prefix, 0, "must start with"},
		{"a subroute delegating further", vsr("cafe.test", nicv1.Route{Path: "/coffee/x", Route: "x"}), prefix, 0, "cannot delegate further"},
		{"a subroute selecting further", vsr("cafe.test", nicv1.Route{Path: "/coffee/x",
			RouteSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}), nil, 0, "cannot delegate further"},
		{"an undefined upstream", vsr("cafe.test", nicv1.Route{Path: "/coffee", Action: &nicv1.Action{Pass: "nope"}}), prefix, 0, "does not define"},
		{"on its own, any paths", vsr("cafe.test", passTo("/tea"), passTo("=/x")), nil, 2, ""},

		{"exact: the one subroute of the path", vsr("cafe.test", passTo("= /coffee")), exact, 1, ""},
		{"exact: another path", vsr("cafe.test", passTo("=/coffee/x")), exact, 0, "must be the VirtualServer route's exact path =/coffee"},
		{"exact: a prefix of the path", vsr("cafe.test", passTo("/coffee")), exact, 0, "must be the VirtualServer route's exact path"},
		{"exact: two subroutes", vsr("cafe.test", passTo("=/coffee"), passTo("/coffee/x")), exact, 0, "must have one subroute"},

		{"regex: one subroute per path", vsr("cafe.test", passTo("~*^/tea$"), passTo("~* ^/coffee/[0-9]+")), regex, 2, ""},
		{"regex: without ^ is the same path", vsr("cafe.test", passTo("~*/tea$"), passTo("~*/coffee/[0-9]+")), regex, 2, ""},
		{"regex: a path missing", vsr("cafe.test", passTo("~*^/tea$")), regex, 0, "no subroute has the regex path ~*^/coffee/[0-9]+"},
		{"regex: a path no route delegates", vsr("cafe.test", passTo("~*^/tea$"), passTo("~*^/coffee/[0-9]+"), passTo("~*^/x")), regex, 0,
			"no VirtualServer route delegating to it has this regex path"},
		{"regex: a prefix subroute", vsr("cafe.test", passTo("~*^/tea$"), passTo("~*^/coffee/[0-9]+"), passTo("/tea")), regex, 0,
			"no VirtualServer route delegating to it has this regex path"},
		{"regex: a case-sensitive subroute", vsr("cafe.test", passTo("~*^/tea$"), passTo("~ ^/coffee/[0-9]+")), regex, 0, "no subroute has the regex path ~*^/coffee"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := TranslateVirtualServerRoute(tc.in, "cafe.test", nil, tc.parents...)
			switch {
			case tc.err == "" && (err != nil || len(out.Routes) != tc.routes):
				t.Errorf("err %v, routes %+v", err, out)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("err %v, want one with %q", err, tc.err)
			}
		})
	}
}

// TestDelegatingRoutes: how a VirtualServer's delegating routes are read,
// a row per rule.
func TestDelegatingRoutes(t *testing.T) {
	sel := func(labels map[string]string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: labels}
	}
	for _, tc := range []struct {
		name     string
		routes   []nicv1.Route
		err      string
		problems []string
		check    func(*testing.T, []Route)
	}{
		{name: "named, from a prefix, an exact and a regex path",
			routes: []nicv1.Route{{Path: "=/exact", Route: "coffee"}, {Path: "/coffee", Route: "other/coffee"}, {Path: "~*^/x", Route: "x"}},
			check: func(t *testing.T, r []Route) {
				if len(r) != 4 || r[1].Delegate != "shop/coffee" || r[1].Match.Type != model.Exact || r[2].Delegate != "other/coffee" ||
					r[3].Delegate != "shop/x" || r[3].Match != (model.Match{Type: model.Regex, Path: "/x"}) {
					t.Errorf("routes %+v", r)
				}
			}},
		{name: "a routeSelector",
			routes: []nicv1.Route{{Path: "/coffee", RouteSelector: sel(map[string]string{"app": "coffee", "example.com/tier": "a"})}},
			check: func(t *testing.T, r []Route) {
				if len(r) != 2 || r[1].Delegate != "" || r[1].Selector.String() != "app=coffee,example.com/tier=a" ||
					!r[1].Selects(map[string]string{"app": "coffee", "example.com/tier": "a", "x": "y"}) ||
					r[1].Selects(map[string]string{"app": "coffee"}) || r[1].Selects(map[string]string{"app": "coffee", "example.com/tier": "b"}) ||
					r[0].Selects(map[string]string{}) {
					t.Errorf("routes %+v", r)
				}
			}},
		{name: "matchExpressions select with Kubernetes' semantics",
			routes: []nicv1.Route{{Path: "/coffee", RouteSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "coffee"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
					{Key: "canary", Operator: metav1.LabelSelectorOpDoesNotExist}}}}},
			check: func(t *testing.T, r []Route) {
				for _, tc := range []struct {
					labels map[string]string
					want   bool
				}{
					{map[string]string{"app": "coffee", "tier": "a"}, true},
					{map[string]string{"app": "coffee", "tier": "b", "x": "y"}, true},
					{map[string]string{"app": "coffee", "tier": "c"}, false},
					{map[string]string{"app": "coffee"}, false},
					{map[string]string{"app": "coffee", "tier": "a", "canary": "1"}, false},
					{map[string]string{"app": "tea", "tier": "a"}, false},
				} {
					if got := r[1].Selects(tc.labels); got != tc.want {
						t.Errorf("%v: selected %v, want %v", tc.labels, got, tc.want)
					}
				}
			}},
		{name: "matchExpressions alone",
			routes: []nicv1.Route{{Path: "/coffee", RouteSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}}}},
			check: func(t *testing.T, r []Route) {
				if !r[1].Selects(map[string]string{"app": "x"}) || r[1].Selects(map[string]string{"b": "x"}) {
					t.Errorf("selector %v", r[1].Selector)
				}
			}},
		{name: "an unknown operator", routes: []nicv1.Route{{Path: "/coffee", RouteSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}}}, err: "routeSelector"},
		{name: "In without values", routes: []nicv1.Route{{Path: "/coffee", RouteSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn}}}}}, err: "routeSelector"},
		{name: "a routeSelector without labels", routes: []nicv1.Route{{Path: "/coffee", RouteSelector: sel(nil)}},
			err: "routeSelector must name at least one label in matchLabels or matchExpressions"},
		{name: "an empty label value", routes: []nicv1.Route{{Path: "/coffee", RouteSelector: sel(map[string]string{"app": ""})}},
			err: "matchLabels[app]: the value must not be empty"},
		{name: "a bad label name", routes: []nicv1.Route{{Path: "/coffee", RouteSelector: sel(map[string]string{"a b": "c"})}},
			err: `label "a b"`},
		{name: "a bad label value", routes: []nicv1.Route{{Path: "/coffee", RouteSelector: sel(map[string]string{"app": "a b"})}},
			err: `matchLabels[app] "a b"`},
		{name: "route and routeSelector", routes: []nicv1.Route{{Path: "/coffee", Route: "c", RouteSelector: sel(map[string]string{"a": "b"})}},
			err: "exactly one of action, splits, route and routeSelector"},
		{name: "action and routeSelector", routes: []nicv1.Route{{Path: "/coffee", Action: &nicv1.Action{Pass: "tea"},
			RouteSelector: sel(map[string]string{"a": "b"})}}, err: "exactly one of"},
		{name: "matches with a routeSelector", routes: []nicv1.Route{{Path: "/coffee", RouteSelector: sel(map[string]string{"a": "b"}),
			Matches: []nicv1.Match{{Action: &nicv1.Action{Pass: "tea"}}}}}, err: "not a route or routeSelector"},
		{name: "one VirtualServerRoute named from a prefix and a regex path",
			routes: []nicv1.Route{{Path: "/coffee", Route: "coffee"}, {Path: "~*^/x", Route: "shop/coffee"}},
			err:    "the routes naming VirtualServerRoute shop/coffee must all be prefix paths"},
		{name: "one VirtualServerRoute named from two regex paths",
			routes: []nicv1.Route{{Path: "~*^/y", Route: "coffee"}, {Path: "~* ^/x", Route: "shop/coffee"}}},
		{name: "policies and errorPages of a delegating route are read, for its subroutes",
			routes: []nicv1.Route{{Path: "/coffee", RouteSelector: sel(map[string]string{"a": "b"}), Policies: []nicv1.PolicyReference{{Name: "p"}},
				ErrorPages: []nicv1.ErrorPage{{Codes: []int{404}, Return: &nicv1.ErrorPageReturn{ActionReturn: nicv1.ActionReturn{Body: "x"}}}}}},
			check: func(t *testing.T, r []Route) {
				if len(r) != 2 || !slices.Equal(r[1].Policies, []string{"shop/p"}) || len(r[1].ErrorPages) != 1 || r[1].ErrorPages[0].Codes[0] != 404 {
					t.Errorf("routes %+v", r)
				}
			}},
		{name: "errorPages: [] on a subroute is kept apart from no errorPages",
			routes: []nicv1.Route{{Path: "/coffee", Route: "c", ErrorPages: []nicv1.ErrorPage{}}},
			check: func(t *testing.T, r []Route) {
				if len(r) != 2 || r[1].ErrorPages == nil || r[0].ErrorPages != nil {
					t.Errorf("routes %+v", r)
				}
			}},
		{name: "an invalid error page of a delegating route",
			routes: []nicv1.Route{{Path: "/coffee", Route: "c", ErrorPages: []nicv1.ErrorPage{{Codes: []int{404}}}}},
			err:    "errorPages[0] must have exactly one of redirect and return"},
		{name: "an invalid Policy reference of a delegating route",
			routes: []nicv1.Route{{Path: "/coffee", Route: "c", Policies: []nicv1.PolicyReference{{Name: "a b"}}}},
			err:    ".policies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSpec()
			s.Routes = append(s.Routes, tc.routes...)
			out := translates(t, s, tc.err, tc.problems)
			if out == nil {
				return
			}
			if tc.check != nil {
				tc.check(t, out.Routes)
			}
		})
	}
}
