package build

import (
	"slices"
	"testing"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TestUnusedVirtualServerRoutesAndPolicies: a VirtualServerRoute or Policy
// that no served VirtualServer uses is still checked, and a
// VirtualServerRoute is told why it is not served, one row per rule.
func TestUnusedVirtualServerRoutesAndPolicies(t *testing.T) {
	for _, tc := range []struct {
		name string
		vss  []*nicv1.VirtualServer
		vsr  *nicv1.VirtualServerRoute
		pol  *nicv1.Policy
		want []string // "Kind/name Reason [rejected]"
	}{
		{name: "a VirtualServerRoute whose host no VirtualServer has",
			vsr:  mkVSR("menu", "cafe.test", pass("/menu", "c")),
			want: []string{"VirtualServerRoute/menu NoVirtualServerFound"}},
		{name: "one the VirtualServer of its host does not delegate to",
			vss:  []*nicv1.VirtualServer{mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"))},
			vsr:  mkVSR("menu", "cafe.test", pass("/menu", "c")),
			want: []string{"VirtualServerRoute/menu Ignored"}},
		{name: "one delegated to by a VirtualServer that lost its host is ignored by the owner",
			vss: []*nicv1.VirtualServer{mkVirtualServer("old", "cafe.test", 0, pass("/", "a")),
				mkVirtualServer("young", "cafe.test", 5, pass("/", "a"), nicv1.Route{Path: "/menu", Route: "menu"})},
			vsr:  mkVSR("menu", "cafe.test", pass("/menu", "c")),
			want: []string{"VirtualServer/young Collision", "VirtualServerRoute/menu Ignored"}},
		{name: "an unused invalid one is rejected as written",
			vsr:  mkVSR("menu", "cafe.test", pass("/menu", "nope")),
			want: []string{"VirtualServerRoute/menu Invalid rejected"}},
		{name: "a used one raises nothing more",
			vss: []*nicv1.VirtualServer{mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"), nicv1.Route{Path: "/menu", Route: "menu"})},
			vsr: mkVSR("menu", "cafe.test", pass("/menu", "c"))},
		{name: "a used invalid one is reported once",
			vss:  []*nicv1.VirtualServer{mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"), nicv1.Route{Path: "/menu", Route: "menu"})},
			vsr:  mkVSR("menu", "cafe.test", pass("/menu", "nope")),
			want: []string{"VirtualServer/cafe Invalid", "VirtualServerRoute/menu Invalid rejected"}},
		{name: "one of another class is not ours",
			vsr: func() *nicv1.VirtualServerRoute {
				r := mkVSR("menu", "cafe.test", pass("/menu", "nope"))
				r.Spec.IngressClass = "nginx"
				return r
			}()},
		{name: "an unused valid Policy is no problem",
			pol: mkPolicy("lan", nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{Allow: []string{"10.0.0.0/8"}}})},
		{name: "an unused invalid Policy is rejected",
			pol:  mkPolicy("broken", nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{}}),
			want: []string{"Policy/broken Invalid rejected"}},
		{name: "an invalid Policy of another class is not ours",
			pol: mkPolicy("broken", nicv1.PolicySpec{IngressClass: "nginx", AccessControl: &nicv1.AccessControl{}})},
		{name: "a used invalid Policy is reported once on itself",
			vss: func() []*nicv1.VirtualServer {
				vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"))
				vs.Spec.Policies = []nicv1.PolicyReference{{Name: "broken"}}
				return []*nicv1.VirtualServer{vs}
			}(),
			pol:  mkPolicy("broken", nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{}}),
			want: []string{"Policy/broken Invalid rejected", "VirtualServer/cafe Invalid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(3)
			snap.VirtualServers = tc.vss
			if tc.vsr != nil {
				snap.VirtualServerRoutes = []*nicv1.VirtualServerRoute{tc.vsr}
			}
			if tc.pol != nil {
				snap.Policies = []*nicv1.Policy{tc.pol}
			}
			_, problems := Build(snap, testOpts)
			got := describeProblems(problems)
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems %q, want %q\n(%v)", got, tc.want, problems)
			}
		})
	}
}

// describeProblems is each problem as "Kind/name Reason [rejected]",
// sorted.
func describeProblems(ps []model.Problem) []string {
	var out []string
	for _, p := range ps {
		s := p.Object.Kind + "/" + p.Object.Name + " " + p.Reason
		if p.Rejected {
			s += " rejected"
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
