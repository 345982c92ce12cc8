package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// listenerSet is a ListenerSet of namespace ns whose parent is Gateway
// infra/parent, made age seconds after a fixed time.
func listenerSet(ns, name, parent string, age int, listeners ...gwv1.Listener) *gwv1.ListenerSet {
	ls := &gwv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 3,
		CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 28, 0, 0, age, 0, time.UTC))}}
	pns := gwv1.Namespace(infra)
	ls.Spec.ParentRef = gwv1.ParentGatewayReference{Name: gwv1.ObjectName(parent), Namespace: &pns}
	for _, l := range listeners {
		ls.Spec.Listeners = append(ls.Spec.Listeners, gwv1.ListenerEntry{Name: l.Name, Hostname: l.Hostname, Port: l.Port,
			Protocol: l.Protocol, TLS: l.TLS, AllowedRoutes: l.AllowedRoutes})
	}
	return ls
}

func allowListeners(g *gwv1.Gateway, f gwv1.FromNamespaces, sel map[string]string) *gwv1.Gateway {
	g.Spec.AllowedListeners = &gwv1.AllowedListeners{Namespaces: &gwv1.ListenerNamespaces{From: &f}}
	if sel != nil {
		g.Spec.AllowedListeners.Namespaces.Selector = &metav1.LabelSelector{MatchLabels: sel}
	}
	return g
}

// lsState abbreviates a ListenerSet's status: "Accepted=…/… Programmed=…/…"
// then each listener's "name: Accepted… Programmed… ResolvedRefs…
// Conflicted… routes=N".
func lsState(s *ListenerSet) string {
	out := []string{conds(s.Status.Conditions)}
	for _, l := range s.Status.Listeners {
		out = append(out, fmt.Sprintf("%s: %s routes=%d", l.Name, conds(l.Conditions), l.AttachedRoutes))
	}
	return strings.Join(out, "\n")
}

// TestListenerSets: which ListenerSets a Gateway admits, their conditions,
// their listeners' conflicts with the Gateway's and with each other's
// (the Gateway first, then the oldest ListenerSet), their certificates'
// ReferenceGrants, and which routes attach to their listeners (the
// ListenerSet conformance tests, GEP-1713).
func TestListenerSets(t *testing.T) {
	const lsRef = "gateway.networking.k8s.io/ListenerSet:"
	ready := lconds("True/Accepted", "True/Programmed", "True/ResolvedRefs", "False/NoConflicts")
	hostConflict := lconds("False/HostnameConflict", "False/HostnameConflict", "True/ResolvedRefs", "True/HostnameConflict")
	protoConflict := lconds("False/ProtocolConflict", "False/ProtocolConflict", "True/ResolvedRefs", "True/ProtocolConflict")
	gw := func(f gwv1.FromNamespaces, sel map[string]string) *gwv1.Gateway {
		g := gateway("gw", listener("gw-listener", 80, "HTTP", hostname("gw.example.com"), from("All")))
		if f != "" {
			allowListeners(g, f, sel)
		}
		return g
	}
	for _, tc := range []struct {
		name     string
		gw       *gwv1.Gateway
		sets     []*gwv1.ListenerSet
		routes   []Route
		grants   []*gwv1.ReferenceGrant
		attached int32 // status.attachedListenerSets, -1 for unset
		want     map[string]string
		attach   []string // each route's attachments, as describe writes them
	}{
		{name: "allowedListeners unset: no ListenerSet is admitted",
			gw:       gw("", nil),
			sets:     []*gwv1.ListenerSet{listenerSet(infra, "ls", "gw", 0, listener("l", 80, "HTTP", hostname("ls.example.com")))},
			attached: -1,
			want: map[string]string{"ls": "Accepted=False/NotAllowed Programmed=False/NotAllowed\n" +
				"l: Accepted=True/Accepted Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts routes=0"}},
		{name: "from None: no ListenerSet is admitted",
			gw:       gw(gwv1.NamespacesFromNone, nil),
			sets:     []*gwv1.ListenerSet{listenerSet(infra, "ls", "gw", 0, listener("l", 80, "HTTP", hostname("ls.example.com")))},
			attached: -1,
			want:     map[string]string{"ls": "Accepted=False/NotAllowed Programmed=False/NotAllowed\nl: " + lconds("True/Accepted", "False/Invalid", "True/ResolvedRefs", "False/NoConflicts") + " routes=0"}},
		{name: "from Same: the Gateway's namespace only",
			gw: gw(gwv1.NamespacesFromSame, nil),
			sets: []*gwv1.ListenerSet{
				listenerSet(infra, "same", "gw", 0, listener("l", 80, "HTTP", hostname("same.example.com"))),
				listenerSet("other", "elsewhere", "gw", 0, listener("l", 80, "HTTP", hostname("else.example.com")))},
			attached: 1,
			want: map[string]string{"same": "Accepted=True/Accepted Programmed=True/Programmed\nl: " + ready + " routes=0",
				"elsewhere": "Accepted=False/NotAllowed Programmed=False/NotAllowed\nl: " + lconds("True/Accepted", "False/Invalid", "True/ResolvedRefs", "False/NoConflicts") + " routes=0"}},
		{name: "from Selector: the namespaces whose labels match",
			gw: gw(gwv1.NamespacesFromSelector, map[string]string{"gateway-conformance": "backend"}),
			sets: []*gwv1.ListenerSet{
				listenerSet("gateway-conformance-web-backend", "picked", "gw", 0, listener("l", 80, "HTTP", hostname("picked.example.com"))),
				listenerSet(infra, "not-picked", "gw", 0, listener("l", 80, "HTTP", hostname("not.example.com")))},
			attached: 1,
			want: map[string]string{"picked": "Accepted=True/Accepted Programmed=True/Programmed\nl: " + ready + " routes=0",
				"not-picked": "Accepted=False/NotAllowed Programmed=False/NotAllowed\nl: " + lconds("True/Accepted", "False/Invalid", "True/ResolvedRefs", "False/NoConflicts") + " routes=0"}},
		{name: "hostname conflicts: the Gateway's listener wins, then the older ListenerSet's",
			gw: gw(gwv1.NamespacesFromAll, nil),
			sets: []*gwv1.ListenerSet{
				listenerSet(infra, "newer", "gw", 10, listener("with-gateway", 80, "HTTP", hostname("gw.example.com")),
					listener("with-older", 80, "HTTP", hostname("shared.example.com"))),
				listenerSet(infra, "older", "gw", 0, listener("own", 80, "HTTP", hostname("older.example.com")),
					listener("with-gateway", 80, "HTTP", hostname("gw.example.com")),
					listener("shared", 80, "HTTP", hostname("shared.example.com")))},
			attached: 1,
			want: map[string]string{
				"older": "Accepted=True/ListenersNotValid Programmed=True/Programmed\nown: " + ready + " routes=0\nwith-gateway: " + hostConflict + " routes=0\nshared: " + ready + " routes=0",
				"newer": "Accepted=False/ListenersNotValid Programmed=False/ListenersNotValid\nwith-gateway: " + hostConflict + " routes=0\nwith-older: " + hostConflict + " routes=0"}},
		{name: "same age: namespace/name decides",
			gw: gw(gwv1.NamespacesFromAll, nil),
			sets: []*gwv1.ListenerSet{
				listenerSet(infra, "b", "gw", 0, listener("l", 80, "HTTP", hostname("x.example.com"))),
				listenerSet(infra, "a", "gw", 0, listener("l", 80, "HTTP", hostname("x.example.com")))},
			attached: 1,
			want: map[string]string{"a": "Accepted=True/Accepted Programmed=True/Programmed\nl: " + ready + " routes=0",
				"b": "Accepted=False/ListenersNotValid Programmed=False/ListenersNotValid\nl: " + hostConflict + " routes=0"}},
		{name: "protocol conflicts: HTTPS on the Gateway's HTTP port",
			gw: gw(gwv1.NamespacesFromAll, nil),
			sets: []*gwv1.ListenerSet{
				listenerSet(infra, "ls", "gw", 0, listener("https-on-80", 80, "HTTPS", hostname("s.example.com"), cert("tls-validity-checks-certificate")),
					listener("ok", 8080, "HTTP"))},
			attached: 1,
			want:     map[string]string{"ls": "Accepted=True/ListenersNotValid Programmed=True/Programmed\nhttps-on-80: " + protoConflict + " routes=0\nok: " + ready + " routes=0"}},
		{name: "a listener beaten by the Gateway's takes no part in the ListenerSet's own conflicts (listenerset-protocol-conflict)",
			gw: gw(gwv1.NamespacesFromAll, nil),
			sets: []*gwv1.ListenerSet{
				listenerSet(infra, "ls", "gw", 0, listener("http", 80, "HTTP", hostname("a.example.com")), listener("tcp", 80, "TCP"),
					listener("http-too", 80, "HTTP", hostname("b.example.com")))},
			attached: 1,
			want: map[string]string{"ls": "Accepted=True/ListenersNotValid Programmed=True/Programmed\nhttp: " + ready + " routes=0\ntcp: " +
				lconds("False/ProtocolConflict", "False/ProtocolConflict", "True/ResolvedRefs", "True/ProtocolConflict") + " routes=0\nhttp-too: " + ready + " routes=0"}},
		{name: "within one ListenerSet, indistinct listeners all conflict",
			gw: gw(gwv1.NamespacesFromAll, nil),
			sets: []*gwv1.ListenerSet{listenerSet(infra, "ls", "gw", 0, listener("a", 80, "HTTP", hostname("x.example.com")),
				listener("b", 80, "HTTP", hostname("x.example.com")))},
			attached: 0,
			want:     map[string]string{"ls": "Accepted=False/ListenersNotValid Programmed=False/ListenersNotValid\na: " + hostConflict + " routes=0\nb: " + hostConflict + " routes=0"},
		},
		{name: "certificates: a ReferenceGrant from ListenerSets of the namespace",
			gw: gw(gwv1.NamespacesFromAll, nil),
			sets: []*gwv1.ListenerSet{
				listenerSet(infra, "granted", "gw", 0, listener("l", 443, "HTTPS", hostname("g.example.com"), cert("gateway-conformance-web-backend/certificate"))),
				listenerSet("other", "not-granted", "gw", 0, listener("l", 443, "HTTPS", hostname("n.example.com"), cert("gateway-conformance-web-backend/certificate")))},
			grants:   []*gwv1.ReferenceGrant{grant("gateway-conformance-web-backend", infra, "ListenerSet", "Secret", "certificate")},
			attached: 1,
			want: map[string]string{"granted": "Accepted=True/Accepted Programmed=True/Programmed\nl: " + ready + " routes=0",
				"not-granted": "Accepted=False/ListenersNotValid Programmed=False/ListenersNotValid\nl: " +
					lconds("True/Accepted", "False/Invalid", "False/RefNotPermitted", "False/NoConflicts") + " routes=0"}},
		{name: "a Gateway's grant is not a ListenerSet's",
			gw: gw(gwv1.NamespacesFromAll, nil),
			sets: []*gwv1.ListenerSet{
				listenerSet(infra, "ls", "gw", 0, listener("l", 443, "HTTPS", hostname("g.example.com"), cert("gateway-conformance-web-backend/certificate")))},
			grants:   []*gwv1.ReferenceGrant{grant("gateway-conformance-web-backend", infra, "Gateway", "Secret", "certificate")},
			attached: 0,
			want: map[string]string{"ls": "Accepted=False/ListenersNotValid Programmed=False/ListenersNotValid\nl: " +
				lconds("True/Accepted", "False/Invalid", "False/RefNotPermitted", "False/NoConflicts") + " routes=0"}},
		{name: "allowedRoutes.kinds a protocol does not take: InvalidRouteKinds",
			gw:       gw(gwv1.NamespacesFromAll, nil),
			sets:     []*gwv1.ListenerSet{listenerSet(infra, "ls", "gw", 0, listener("tls-only", 80, "HTTP", hostname("k.example.com"), kinds("TLSRoute")))},
			attached: 0,
			want: map[string]string{"ls": "Accepted=False/ListenersNotValid Programmed=False/ListenersNotValid\ntls-only: " +
				lconds("True/Accepted", "False/Invalid", "False/InvalidRouteKinds", "False/NoConflicts") + " routes=0"}},
		{name: "routes: a Gateway parentRef attaches to the Gateway's listeners only, a ListenerSet parentRef to the ListenerSet's",
			gw: gw(gwv1.NamespacesFromAll, nil),
			sets: []*gwv1.ListenerSet{listenerSet(infra, "ls", "gw", 0, listener("one", 80, "HTTP", hostname("one.example.com"), from("All")),
				listener("two", 80, "HTTP", hostname("two.example.com"), from("Same")))},
			routes: []Route{
				httpRouteOf(infra, nil, "gw"),
				httpRouteOf(infra, nil, lsRef+"ls"),
				httpRouteOf(infra, nil, lsRef+"ls#two"),
				httpRouteOf(infra, nil, "gw#one"),
				httpRouteOf("other", nil, lsRef+infra+"/ls"),
				httpRouteOf("other", nil, lsRef+infra+"/ls#two"),
				httpRouteOf(infra, nil, lsRef+"missing"),
			},
			attached: 1,
			want:     map[string]string{"ls": "Accepted=True/Accepted Programmed=True/Programmed\none: " + ready + " routes=2\ntwo: " + ready + " routes=2"},
			attach: []string{"0 Accepted [gw-listener:gw.example.com]", "0 Accepted [one:one.example.com two:two.example.com]", "0 Accepted [two:two.example.com]",
				"0 NoMatchingParent", "0 Accepted [one:one.example.com]", "0 NotAllowedByListeners", ""}},
		{name: "routes: a ListenerSet not accepted takes none",
			gw:       gw("", nil),
			sets:     []*gwv1.ListenerSet{listenerSet(infra, "ls", "gw", 0, listener("l", 80, "HTTP", hostname("ls.example.com")))},
			routes:   []Route{httpRouteOf(infra, nil, lsRef+"ls")},
			attached: -1,
			want: map[string]string{"ls": "Accepted=False/NotAllowed Programmed=False/NotAllowed\nl: " +
				lconds("True/Accepted", "False/Invalid", "True/ResolvedRefs", "False/NoConflicts") + " routes=0"},
			attach: []string{"0 NoMatchingParent"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			classes := []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "causeway"}, Spec: gwv1.GatewayClassSpec{ControllerName: ControllerName}}}
			in := testInputs()
			in.Grants = tc.grants
			// A ListenerSet whose parent is not Causeway's gets nothing.
			sets := append(tc.sets, listenerSet(infra, "not-ours", "someone-elses", 0, listener("l", 80, "HTTP")))
			res, problems := Resolve(classes, []*gwv1.Gateway{tc.gw}, sets, tc.routes, nil,
				func(ns, name string) []string { return []string{"10.0.0.1"} }, in)
			if len(res.ListenerSets) != len(tc.want) {
				t.Errorf("%d ListenerSets resolved, want %d", len(res.ListenerSets), len(tc.want))
			}
			for name, want := range tc.want {
				var s *ListenerSet
				for _, ls := range res.ListenerSets {
					if ls.Ref.Name == name {
						s = ls
					}
				}
				if s == nil {
					t.Errorf("ListenerSet %s not resolved", name)
					continue
				}
				if got := lsState(s); got != want {
					t.Errorf("ListenerSet %s\n got %s\nwant %s", name, got, want)
				}
				for _, c := range append(s.Status.Conditions, s.Status.Listeners[0].Conditions...) {
					if c.ObservedGeneration != 3 {
						t.Errorf("ListenerSet %s: %s observedGeneration %d, want 3", name, c.Type, c.ObservedGeneration)
					}
				}
				// Every listener or condition that says something is
				// wrong is a Problem naming the ListenerSet.
				if !strings.HasPrefix(want, "Accepted=True/Accepted") || strings.Contains(want, "False/Invalid") {
					if !hasProblemOf(problems, s.Ref) {
						t.Errorf("ListenerSet %s: no Problem names it: %v", name, problems)
					}
				}
			}
			g := res.Gateways[infra+"/gw"]
			got := int32(-1)
			if g.Status.AttachedListenerSets != nil {
				got = *g.Status.AttachedListenerSets
			}
			if got != tc.attached {
				t.Errorf("attachedListenerSets = %d, want %d", got, tc.attached)
			}
			if conds(g.Status.Conditions) != "Accepted=True/Accepted Programmed=True/Programmed" {
				t.Errorf("Gateway conditions %s", conds(g.Status.Conditions))
			}
			for i, r := range tc.routes {
				var as []Attachment
				for _, a := range res.Routes {
					if a.Route == r {
						as = a.Attachments
					}
				}
				if got := describe(as); got != tc.attach[i] {
					t.Errorf("route %d: attachments %q, want %q", i, got, tc.attach[i])
				}
			}
		})
	}
}

func hasProblemOf(problems []model.Problem, ref model.ObjectRef) bool {
	for _, p := range problems {
		if p.Object == ref {
			return true
		}
	}
	return false
}
