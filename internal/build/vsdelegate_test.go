package build

import (
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
)

func labelled(ns string, labels map[string]string, vsr *nicv1.VirtualServerRoute) *nicv1.VirtualServerRoute {
	vsr.Namespace, vsr.Labels = ns, labels
	return vsr
}

func selecting(path string, labels map[string]string) nicv1.Route {
	return nicv1.Route{Path: path, RouteSelector: &metav1.LabelSelector{MatchLabels: labels}}
}

// TestDelegation: which VirtualServerRoutes serve a delegating route, a
// row per rule. want maps a request path to the VirtualServerRoute
// ("namespace/name") or VirtualServer serving it, or to the status the
// VirtualServer answers;
// problems are "Kind/name Reason" (rejected ones marked), sorted.
func TestDelegation(t *testing.T) {
	cafe := map[string]string{"app": "cafe"}
	for _, tc := range []struct {
		name     string
		routes   []nicv1.Route
		vsrs     []*nicv1.VirtualServerRoute
		want     map[string]string
		problems []string
	}{
		{name: "a routeSelector: every VirtualServerRoute of the host with the labels, in any namespace",
			routes: []nicv1.Route{pass("/", "a"), selecting("/cafe", cafe)},
			vsrs: []*nicv1.VirtualServerRoute{
				labelled("tea", map[string]string{"app": "cafe", "x": "y"}, mkVSR("tea", "cafe.test", pass("/cafe/tea", "c"))),
				labelled("coffee", cafe, mkVSR("coffee", "cafe.test", pass("/cafe/coffee", "c"), pass("=/cafe/coffee/x", "c"))),
				labelled("default", map[string]string{"app": "bar"}, mkVSR("bar", "cafe.test", pass("/cafe/bar", "c"))),
				labelled("default", cafe, mkVSR("other-host", "bar.test", pass("/cafe/juice", "c"))),
				func() *nicv1.VirtualServerRoute {
					r := labelled("default", cafe, mkVSR("foreign", "cafe.test", pass("/cafe/foreign", "c")))
					r.Spec.IngressClass = "other"
					return r
				}(),
			},
			want: map[string]string{"/cafe/tea/1": "tea/tea", "/cafe/coffee": "coffee/coffee", "/cafe/coffee/x": "coffee/coffee",
				"/cafe/bar": "default/cafe", "/cafe/juice": "default/cafe", "/cafe/foreign": "default/cafe", "/cafe": "default/cafe"},
			// (Their Services are in the default namespace only.)
			problems: []string{"VirtualServerRoute/bar Ignored", "VirtualServerRoute/coffee MissingService",
				"VirtualServerRoute/other-host NoVirtualServerFound", "VirtualServerRoute/tea MissingService"}},
		{name: "a routeSelector leaves an invalid VirtualServerRoute out and serves the others",
			routes: []nicv1.Route{selecting("/cafe", cafe)},
			vsrs: []*nicv1.VirtualServerRoute{
				labelled("default", cafe, mkVSR("outside", "cafe.test", pass("/water", "c"))),
				labelled("default", cafe, mkVSR("tea", "cafe.test", pass("/cafe/tea", "c"))),
			},
			want:     map[string]string{"/cafe/tea": "default/tea", "/water": ""},
			problems: []string{"VirtualServer/cafe Invalid", "VirtualServerRoute/outside Ignored", "VirtualServerRoute/outside Invalid"}},
		{name: "a routeSelector that selects nothing: the path answers 404",
			routes:   []nicv1.Route{pass("/", "a"), selecting("/cafe", cafe)},
			want:     map[string]string{"/cafe/tea": "404", "/x": "default/cafe"},
			problems: []string{"VirtualServer/cafe Invalid"}},
		{name: "a VirtualServerRoute serves one route: named first, then selected",
			routes: []nicv1.Route{{Path: "/cafe", Route: "tea"}, selecting("/", cafe)},
			vsrs: []*nicv1.VirtualServerRoute{
				labelled("default", cafe, mkVSR("tea", "cafe.test", pass("/cafe/tea", "c"))),
				labelled("default", cafe, mkVSR("root", "cafe.test", pass("/x", "c"))),
			},
			want:     map[string]string{"/cafe/tea": "default/tea", "/x": "default/root"},
			problems: []string{"VirtualServer/cafe Invalid"}},
		{name: "a VirtualServerRoute serves one route: selected first, then named",
			routes: []nicv1.Route{selecting("/", cafe), {Path: "/cafe", Route: "tea"}},
			vsrs: []*nicv1.VirtualServerRoute{
				labelled("default", cafe, mkVSR("tea", "cafe.test", pass("/cafe/tea", "c"))),
			},
			want:     map[string]string{"/cafe/tea": "default/tea", "/cafe/x": "404"},
			problems: []string{"VirtualServer/cafe Invalid"}},
		{name: "a subroute never takes a path already served: the later VirtualServerRoute is left out",
			routes: []nicv1.Route{pass("/cafe/own", "a"), selecting("/cafe", cafe)},
			vsrs: []*nicv1.VirtualServerRoute{
				labelled("default", cafe, mkVSR("a", "cafe.test", pass("/cafe/tea", "c"))),
				labelled("default", cafe, mkVSR("b", "cafe.test", pass("/cafe/tea", "c"), pass("/cafe/b", "c"))),
				labelled("default", cafe, mkVSR("c", "cafe.test", pass("/cafe/own", "c"))),
			},
			want: map[string]string{"/cafe/tea": "default/a", "/cafe/b": "", "/cafe/own": "default/cafe"},
			problems: []string{"VirtualServer/cafe Invalid", "VirtualServer/cafe Invalid",
				"VirtualServerRoute/b Ignored", "VirtualServerRoute/c Ignored"}},
		{name: "a named VirtualServerRoute whose subroute takes a served path answers 404",
			routes:   []nicv1.Route{{Path: "/cafe", Route: "tea"}, pass("/cafe/tea", "a")},
			vsrs:     []*nicv1.VirtualServerRoute{mkVSR("tea", "cafe.test", pass("/cafe/tea", "c"), pass("/cafe/x", "c"))},
			want:     map[string]string{"/cafe/tea": "default/cafe", "/cafe/x": "404"},
			problems: []string{"VirtualServer/cafe Invalid", "VirtualServerRoute/tea Ignored"}},
		{name: "exact: the one subroute of the path",
			routes: []nicv1.Route{pass("/", "a"), {Path: "=/cafe", Route: "tea"}},
			vsrs:   []*nicv1.VirtualServerRoute{mkVSR("tea", "cafe.test", pass("=/cafe", "c"))},
			want:   map[string]string{"/cafe": "default/tea", "/cafe/x": "default/cafe"}},
		{name: "exact: another path is invalid",
			routes:   []nicv1.Route{pass("/", "a"), {Path: "=/cafe", Route: "tea"}},
			vsrs:     []*nicv1.VirtualServerRoute{mkVSR("tea", "cafe.test", pass("/cafe", "c"))},
			want:     map[string]string{"/cafe": "404", "/cafe/x": "default/cafe"},
			problems: []string{"VirtualServer/cafe Invalid", "VirtualServerRoute/tea Invalid rejected"}},
		{name: "regex: the routes naming one VirtualServerRoute, one subroute each, in the VirtualServer's order",
			routes: []nicv1.Route{{Path: "~*^/cafe/[a-z]+$", Route: "re"}, pass("~*^/cafe/tea", "a"), {Path: "~* ^/cafe/", Route: "re"}},
			vsrs:   []*nicv1.VirtualServerRoute{mkVSR("re", "cafe.test", pass("~*^/cafe/", "c"), pass("~*^/cafe/[a-z]+$", "c"))},
			want:   map[string]string{"/cafe/tea": "default/re", "/cafe/tea/1": "default/cafe", "/cafe/1": "default/re"}},
		{name: "regex: a path without its subroute makes every route naming it answer 404",
			routes:   []nicv1.Route{pass("/", "a"), {Path: "~*^/cafe/[a-z]+$", Route: "re"}, {Path: "~*^/cafe/", Route: "re"}},
			vsrs:     []*nicv1.VirtualServerRoute{mkVSR("re", "cafe.test", pass("~*^/cafe/[a-z]+$", "c"))},
			want:     map[string]string{"/cafe/tea": "404", "/cafe/1": "404", "/x": "default/cafe"},
			problems: []string{"VirtualServer/cafe Invalid", "VirtualServer/cafe Invalid", "VirtualServerRoute/re Invalid rejected"}},
		{name: "regex: a routeSelector from a regex path",
			routes: []nicv1.Route{pass("/", "a"), selecting("~*^/cafe/[0-9]+$", cafe)},
			vsrs: []*nicv1.VirtualServerRoute{
				labelled("default", cafe, mkVSR("a", "cafe.test", pass("~*^/cafe/[0-9]+$", "c"))),
				labelled("default", cafe, mkVSR("b", "cafe.test", pass("~*^/cafe/[0-9]+$", "c"))),
			},
			want:     map[string]string{"/cafe/1": "default/a", "/cafe/x": "default/cafe"},
			problems: []string{"VirtualServer/cafe Invalid", "VirtualServerRoute/b Ignored"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(3)
			snap.VirtualServers = []*nicv1.VirtualServer{mkVirtualServer("cafe", "cafe.test", 0, tc.routes...)}
			snap.VirtualServerRoutes = tc.vsrs
			m, problems := Build(snap, testOpts)
			srv := server(m, "cafe.test")
			for path, want := range tc.want {
				l := srv.Match(path)
				got := ""
				switch {
				case l == nil:
				case l.Action.Return != nil && l.Source.Kind == "VirtualServer":
					got = fmt.Sprint(l.Action.Return.Status)
				default:
					got = l.Source.Namespace + "/" + l.Source.Name
				}
				if got != want {
					t.Errorf("%s: served by %q, want %q", path, got, want)
				}
			}
			got := describeProblems(problems)
			if !slices.Equal(got, tc.problems) {
				t.Errorf("problems %q\nwant %q\n(%v)", got, tc.problems, problems)
			}
		})
	}
}
