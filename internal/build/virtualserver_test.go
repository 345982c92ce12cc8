package build

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

func mkVirtualServer(name, host string, age int, routes ...nicv1.Route) *nicv1.VirtualServer {
	return &nicv1.VirtualServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(age) * time.Second))},
		Spec: nicv1.VirtualServerSpec{Host: host,
			Upstreams: []nicv1.Upstream{{Name: "a", Service: svcName(0), Port: 80}, {Name: "b", Service: svcName(1), Port: 80}},
			Routes:    routes},
	}
}

func pass(path, upstream string) nicv1.Route {
	return nicv1.Route{Path: path, Action: &nicv1.Action{Pass: upstream}}
}

func reasonsOf(ps []model.Problem, kind, name string) []string {
	var out []string
	for _, p := range ps {
		if p.Object.Kind == kind && p.Object.Name == name {
			out = append(out, p.Reason)
		}
	}
	return out
}

// TestVirtualServerRoutes: a VirtualServer's routes keep nginx's meaning:
// a string prefix, exact paths first, then regexes in the order written,
// then the longest prefix.
func TestVirtualServerRoutes(t *testing.T) {
	snap := world(3)
	snap.VirtualServers = []*nicv1.VirtualServer{mkVirtualServer("cafe", "cafe.test", 0,
		pass("/tea", "a"), pass("=/tea/exact", "b"), pass("~*^/tea/[0-9]+$", "b"), pass("/", "b"),
		nicv1.Route{Path: "/old", Action: &nicv1.Action{Redirect: &nicv1.ActionRedirect{URL: "https://cafe.test/new", Code: 302}}},
		nicv1.Route{Path: "/gone", Action: &nicv1.Action{Return: &nicv1.ActionReturn{Code: 410}}},
	)}
	m, problems := Build(snap, testOpts)
	if len(problems) != 0 {
		t.Fatalf("problems %v", problems)
	}
	srv := server(m, "cafe.test")
	if srv == nil || srv.Regex {
		t.Fatalf("server %+v", srv)
	}
	a, b := "default/"+svcName(0)+"/80", "default/"+svcName(1)+"/80"
	for _, tc := range []struct {
		path string
		want string // backend key, or "302", "410"
	}{
		{"/tea", a}, {"/teapot", a}, {"/tea/cup", a}, {"/tea/exact", b}, {"/tea/42", b}, {"/TEA/42", b}, {"/tea/42/x", a},
		{"/coffee", b}, {"/old", "302"}, {"/gone", "410"},
	} {
		l := srv.Match(tc.path)
		got := ""
		switch {
		case l == nil:
		case l.Action.Proxy != nil:
			got = l.Action.Proxy.Backend
		case l.Action.Redirect != nil:
			got = "302"
		case l.Action.Return != nil:
			got = "410"
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s goes to %q, want %q", tc.path, got, tc.want)
		}
	}
	if srv.Locations[0].Match != (model.Match{Type: model.StringPrefix, Path: "/tea"}) {
		t.Errorf("routes are not kept in the order written: %+v", srv.Locations[0].Match)
	}
}

// TestVirtualServerOwnsItsHost: one host belongs to one VirtualServer or to
// Ingresses, the oldest; the others get a Collision, and keep their other
// hosts.
func TestVirtualServerOwnsItsHost(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ingAge    int
		vsAge     int
		second    bool // a second, younger VirtualServer on the host
		owner     string
		collision []string // kind/name with a Collision
	}{
		{name: "an older Ingress keeps the host", ingAge: 0, vsAge: 5, owner: "Ingress", collision: []string{"VirtualServer/cafe"}},
		{name: "an older VirtualServer keeps the host", ingAge: 5, vsAge: 0, owner: "VirtualServer", collision: []string{"Ingress/web"}},
		{name: "the older of two VirtualServers", ingAge: 9, vsAge: 0, second: true, owner: "VirtualServer",
			collision: []string{"Ingress/web", "VirtualServer/cafe-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(3)
			snap.Ingresses = []*networkingv1.Ingress{mkIngress("default", "web", tc.ingAge,
				rule("cafe.test", path("/", "Prefix", svcName(0), 80)), rule("other.test", path("/", "Prefix", svcName(0), 80)))}
			snap.VirtualServers = []*nicv1.VirtualServer{mkVirtualServer("cafe", "cafe.test", tc.vsAge, pass("/", "b"))}
			if tc.second {
				snap.VirtualServers = append(snap.VirtualServers, mkVirtualServer("cafe-2", "cafe.test", tc.vsAge+1, pass("/", "a")))
			}
			m, problems := Build(snap, testOpts)
			srv := server(m, "cafe.test")
			if srv == nil || len(srv.Sources) != 1 || srv.Sources[0].Kind != tc.owner {
				t.Fatalf("cafe.test sources %+v, want only the %s", srv.Sources, tc.owner)
			}
			var got []string
			for _, p := range problems {
				if p.Reason == model.ReasonCollision {
					got = append(got, p.Object.Kind+"/"+p.Object.Name)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.collision) {
				t.Errorf("collisions %v (%v), want %v", got, problems, tc.collision)
			}
			if server(m, "other.test") == nil {
				t.Error("the Ingress lost its other host")
			}
		})
	}
}

func TestVirtualServerBuild(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*source.Snapshot)
		check  func(*testing.T, *model.Model, []model.Problem)
	}{
		{name: "host-less Ingress paths do not reach a VirtualServer's host", change: func(s *source.Snapshot) {
			s.Ingresses = append(s.Ingresses, mkIngress("default", "catchall", 0, rule("", path("/extra", "Prefix", svcName(2), 80))))
		}, check: func(t *testing.T, m *model.Model, _ []model.Problem) {
			if l := server(m, "cafe.test").Match("/extra"); l == nil || l.Source.Kind != "VirtualServer" {
				t.Errorf("/extra on cafe.test is served by %+v", l)
			}
		}},
		{name: "another class is not ours", change: func(s *source.Snapshot) { s.VirtualServers[0].Spec.IngressClass = "nginx" },
			check: func(t *testing.T, m *model.Model, ps []model.Problem) {
				if server(m, "cafe.test") != nil || len(ps) != 0 {
					t.Errorf("served another class's VirtualServer (%v)", ps)
				}
			}},
		{name: "a missing Service answers 503", change: func(s *source.Snapshot) { s.VirtualServers[0].Spec.Upstreams[1].Service = "nope" },
			check: func(t *testing.T, m *model.Model, ps []model.Problem) {
				if l := server(m, "cafe.test").Match("/"); l.Action.Return == nil || l.Action.Return.Status != 503 {
					t.Errorf("route %+v", l.Action)
				}
				if r := reasonsOf(ps, "VirtualServer", "cafe"); !slices.Equal(r, []string{model.ReasonMissingService}) {
					t.Errorf("reasons %v", r)
				}
			}},
		{name: "an invalid VirtualServer is rejected, others serve", change: func(s *source.Snapshot) {
			s.VirtualServers[0].Spec.Upstreams[1].Name = "a"
			s.VirtualServers = append(s.VirtualServers, mkVirtualServer("bar", "bar.test", 1, pass("/", "a")))
		}, check: func(t *testing.T, m *model.Model, ps []model.Problem) {
			if server(m, "cafe.test") != nil || server(m, "bar.test") == nil {
				t.Error("the invalid one is served or the valid one is not")
			}
			if len(ps) != 1 || ps[0].Reason != model.ReasonInvalid || !ps[0].Rejected {
				t.Errorf("problems %v", ps)
			}
		}},
		{name: "TLS with a redirect", change: func(s *source.Snapshot) {
			crt, key := selfSigned(t, "cafe.test")
			s.Secrets = append(s.Secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cafe-tls"},
				Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}})
			s.VirtualServers[0].Spec.TLS = &nicv1.TLS{Secret: "cafe-tls", Redirect: &nicv1.TLSRedirect{Enable: true}}
		}, check: func(t *testing.T, m *model.Model, ps []model.Problem) {
			srv := server(m, "cafe.test")
			if srv.TLS == nil || srv.TLS.Secret != "default/cafe-tls" || !srv.SSLRedirect || len(ps) != 0 {
				t.Errorf("tls %+v redirect %v problems %v", srv.TLS, srv.SSLRedirect, ps)
			}
		}},
		{name: "TLS without a redirect does not redirect, whatever ssl-redirect says", change: func(s *source.Snapshot) {
			s.VirtualServers[0].Spec.TLS = &nicv1.TLS{}
		}, check: func(t *testing.T, m *model.Model, _ []model.Problem) {
			if srv := server(m, "cafe.test"); srv.TLS == nil || srv.SSLRedirect {
				t.Errorf("tls %+v redirect %v", srv.TLS, srv.SSLRedirect)
			}
		}},
		{name: "a redirect has its own code, whatever http-redirect-code says", change: func(s *source.Snapshot) {
			s.VirtualServers[0].Spec.TLS = &nicv1.TLS{Redirect: &nicv1.TLSRedirect{Enable: true, Code: new(int), BasedOn: "x-forwarded-proto"}}
			*s.VirtualServers[0].Spec.TLS.Redirect.Code = 307
		}, check: func(t *testing.T, m *model.Model, ps []model.Problem) {
			srv := server(m, "cafe.test")
			want := model.HTTPSRedirect{Code: 307, BasedOn: model.RedirectOnForwardedProto}
			if !srv.SSLRedirect || srv.HTTPSRedirect == nil || *srv.HTTPSRedirect != want || len(ps) != 0 {
				t.Errorf("redirect %v %+v problems %v", srv.SSLRedirect, srv.HTTPSRedirect, ps)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(3)
			snap.VirtualServers = []*nicv1.VirtualServer{mkVirtualServer("cafe", "cafe.test", 0, pass("/", "b"))}
			tc.change(snap)
			m, problems := Build(snap, testOpts)
			tc.check(t, m, problems)
		})
	}
}

func mkPolicy(name string, spec nicv1.PolicySpec) *nicv1.Policy {
	return &nicv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}, Spec: spec}
}

// TestVirtualServerPolicies: the VirtualServer's Policies apply to every
// route, a route's own replaces one of the same kind, and a route whose
// Policy is missing or invalid answers 500.
func TestVirtualServerPolicies(t *testing.T) {
	snap := world(3)
	snap.Policies = []*nicv1.Policy{
		mkPolicy("allow-lan", nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{Allow: []string{"10.0.0.0/8"}}}),
		mkPolicy("deny-one", nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{Deny: []string{"10.0.0.1"}}}),
		mkPolicy("users", nicv1.PolicySpec{BasicAuth: &nicv1.BasicAuth{Secret: "htpasswd", Realm: "cafe"}}),
		mkPolicy("broken", nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{}}),
		mkPolicy("foreign", nicv1.PolicySpec{IngressClass: "nginx", AccessControl: &nicv1.AccessControl{Deny: []string{"10.0.0.1"}}}),
	}
	snap.Secrets = append(snap.Secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "htpasswd"},
		Type: "nginx.org/htpasswd", Data: map[string][]byte{"htpasswd": []byte("bob:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=\n")}})
	vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/lan", "a"), pass("/override", "a"), pass("/auth", "a"),
		pass("/missing", "a"), pass("/broken", "a"), pass("/foreign", "a"))
	vs.Spec.Policies = []nicv1.PolicyReference{{Name: "allow-lan"}}
	vs.Spec.Routes[1].Policies = []nicv1.PolicyReference{{Name: "deny-one"}}
	vs.Spec.Routes[2].Policies = []nicv1.PolicyReference{{Name: "users"}}
	vs.Spec.Routes[3].Policies = []nicv1.PolicyReference{{Name: "nope"}}
	vs.Spec.Routes[4].Policies = []nicv1.PolicyReference{{Name: "broken"}}
	vs.Spec.Routes[5].Policies = []nicv1.PolicyReference{{Name: "foreign"}}
	snap.VirtualServers = []*nicv1.VirtualServer{vs}
	m, problems := Build(snap, testOpts)
	srv := server(m, "cafe.test")
	loc := func(p string) *model.Location { return srv.Match(p) }
	if a := loc("/lan").Policy.Access; a == nil || len(a.Allow) != 1 || len(a.Deny) != 0 {
		t.Errorf("/lan access %+v, want the VirtualServer's allow list", a)
	}
	if a := loc("/override").Policy.Access; a == nil || len(a.Deny) != 1 || len(a.Allow) != 0 {
		t.Errorf("/override access %+v, want the route's deny list in place of the allow list", a)
	}
	p := loc("/auth").Policy
	if p.BasicAuth == nil || p.BasicAuth.Realm != "cafe" || p.Access == nil {
		t.Errorf("/auth policy %+v, want basic auth beside the VirtualServer's allow list", p)
	}
	if len(m.AuthFiles) != 1 || m.AuthFiles[0].Kind() != "htpasswd" || p.BasicAuth.File != m.AuthFiles[0].Key() {
		t.Errorf("auth files %+v", m.AuthFiles)
	}
	for _, path := range []string{"/missing", "/broken", "/foreign"} {
		if r := loc(path).Action.Return; r == nil || r.Status != 500 {
			t.Errorf("%s: %+v, want 500", path, loc(path).Action)
		}
	}
	var policyProblems, vsProblems int
	for _, p := range problems {
		switch {
		case p.Object.Kind == "Policy" && p.Object.Name == "broken" && p.Rejected:
			policyProblems++
		case p.Object.Kind == "VirtualServer" && p.Reason == model.ReasonInvalid && !p.Rejected:
			vsProblems++
		default:
			t.Errorf("unexpected problem %v", p)
		}
	}
	if policyProblems != 1 || vsProblems != 3 {
		t.Errorf("%d Problems on the broken Policy, %d on the VirtualServer; want 1 and 3: %v", policyProblems, vsProblems, problems)
	}
}

func mkVSR(name, host string, subroutes ...nicv1.Route) *nicv1.VirtualServerRoute {
	return &nicv1.VirtualServerRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: nicv1.VirtualServerRouteSpec{Host: host, Upstreams: []nicv1.Upstream{{Name: "c", Service: svcName(2), Port: 80}}, Subroutes: subroutes}}
}

// TestVirtualServerRouteDelegation: a route hands its prefix to a
// VirtualServerRoute of the same host; a missing or invalid one makes the
// prefix answer 404 with a Problem, and other routes keep serving.
func TestVirtualServerRouteDelegation(t *testing.T) {
	snap := world(3)
	vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"),
		nicv1.Route{Path: "/coffee", Route: "coffee"}, nicv1.Route{Path: "/tea", Route: "default/missing"},
		nicv1.Route{Path: "/juice", Route: "other-host"}, nicv1.Route{Path: "/milk", Route: "outside"},
		nicv1.Route{Path: "/again", Route: "coffee"})
	snap.VirtualServers = []*nicv1.VirtualServer{vs}
	snap.VirtualServerRoutes = []*nicv1.VirtualServerRoute{
		mkVSR("coffee", "cafe.test", pass("/coffee", "c"), pass("=/coffee/latte", "c")),
		mkVSR("other-host", "bar.test", pass("/juice", "c")),
		mkVSR("outside", "cafe.test", pass("/water", "c")),
	}
	m, problems := Build(snap, testOpts)
	srv := server(m, "cafe.test")
	c := "default/" + svcName(2) + "/80"
	for _, tc := range []struct {
		path string
		want string // backend prefix or status
	}{
		{"/coffee", c}, {"/coffee/latte", c}, {"/coffeemaker", c}, {"/tea", "404"}, {"/juice", "404"}, {"/milk", "404"},
		{"/again", "404"}, {"/other", "default/" + svcName(0)},
	} {
		l := srv.Match(tc.path)
		got := ""
		switch {
		case l.Action.Proxy != nil:
			got = l.Action.Proxy.Backend
		case l.Action.Return != nil:
			got = fmt.Sprint(l.Action.Return.Status)
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.path, got, tc.want)
		}
	}
	if l := srv.Match("/coffee/latte"); l.Source.Kind != "VirtualServerRoute" || l.Source.Name != "coffee" {
		t.Errorf("/coffee/latte comes from %v", l.Source)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Object.Kind+"/"+p.Object.Name+" "+p.Reason)
	}
	slices.Sort(got)
	want := []string{"VirtualServer/cafe Invalid", "VirtualServer/cafe Invalid", "VirtualServer/cafe Invalid", "VirtualServer/cafe Invalid",
		"VirtualServerRoute/other-host Invalid", "VirtualServerRoute/outside Invalid"}
	if !slices.Equal(got, want) {
		t.Errorf("problems %v\nwant %v\n(%v)", got, want, problems)
	}
}
