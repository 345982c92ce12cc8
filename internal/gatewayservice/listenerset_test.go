package gatewayservice

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// admitting is Gateway ns/name admitting ListenerSets from (selector
// for Selector), with listeners.
func admitting(ns, name string, from gwv1.FromNamespaces, selector *metav1.LabelSelector, listeners ...gwv1.Listener) *gwv1.Gateway {
	g := gw(ns, name, listeners...)
	g.Spec.AllowedListeners = &gwv1.AllowedListeners{Namespaces: &gwv1.ListenerNamespaces{From: ptr.To(from), Selector: selector}}
	return g
}

// set is ListenerSet ns/name of Gateway parent ("name", or "ns/name" in
// another namespace), with listeners.
func set(ns, name, parent string, listeners ...gwv1.Listener) *gwv1.ListenerSet {
	ls := &gwv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	ls.Spec.ParentRef = gwv1.ParentGatewayReference{Name: gwv1.ObjectName(parent)}
	if pns, pname, ok := strings.Cut(parent, "/"); ok {
		ls.Spec.ParentRef = gwv1.ParentGatewayReference{Name: gwv1.ObjectName(pname), Namespace: ptr.To(gwv1.Namespace(pns))}
	}
	for _, l := range listeners {
		ls.Spec.Listeners = append(ls.Spec.Listeners, gwv1.ListenerEntry{Name: l.Name, Port: l.Port, Protocol: l.Protocol})
	}
	return ls
}

func namespace(name string, lbls map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
}

// servicePorts are a wanted Service's ports as "port/protocol".
func servicePorts(p Plan, ns, name string) []string {
	var out []string
	if s := p.Want[ServiceName(ns, name)]; s != nil {
		for _, sp := range s.Spec.Ports {
			out = append(out, fmt.Sprintf("%d/%s", sp.Port, sp.Protocol))
		}
	}
	return out
}

// TestDesiredListenerSets: one row per rule of which ListenerSets add
// their listener ports to a Gateway's Service.
func TestDesiredListenerSets(t *testing.T) {
	team := map[string]string{"team": "shop"}
	selectTeam := &metav1.LabelSelector{MatchLabels: team}
	nss := []*corev1.Namespace{namespace("web", nil), namespace("shop", team), namespace("other", map[string]string{"team": "other"})}
	for _, tc := range []struct {
		name     string
		gateways []*gwv1.Gateway
		sets     ListenerSets
		have     []*corev1.Service
		// want are web/gw's Service ports.
		want []string
		// alloc, when set, are web/gw's internal ports.
		alloc map[int32]int32
	}{
		{name: "allowedListeners unset: a Gateway admits none",
			gateways: []*gwv1.Gateway{gw("web", "gw", http(80))},
			sets:     ListenerSets{Sets: []*gwv1.ListenerSet{set("web", "ls", "gw", http(8080))}, Namespaces: nss},
			want:     []string{"80/TCP"}},
		{name: "from None: none",
			gateways: []*gwv1.Gateway{admitting("web", "gw", gwv1.NamespacesFromNone, nil, http(80))},
			sets:     ListenerSets{Sets: []*gwv1.ListenerSet{set("web", "ls", "gw", http(8080))}, Namespaces: nss},
			want:     []string{"80/TCP"}},
		{name: "from Same: the Gateway's namespace's, not another's",
			gateways: []*gwv1.Gateway{admitting("web", "gw", gwv1.NamespacesFromSame, nil, http(80))},
			sets: ListenerSets{Sets: []*gwv1.ListenerSet{set("web", "ls", "gw", http(8080)), set("shop", "ls", "web/gw", http(8081))},
				Namespaces: nss},
			want: []string{"80/TCP", "8080/TCP"}},
		{name: "from All: any namespace's whose parentRef names the Gateway (its namespace defaults to the ListenerSet's)",
			gateways: []*gwv1.Gateway{admitting("web", "gw", gwv1.NamespacesFromAll, nil, http(80))},
			sets: ListenerSets{Sets: []*gwv1.ListenerSet{set("shop", "ls", "web/gw", http(8081)), set("other", "ls", "gw", http(8082)),
				set("web", "ls", "gw2", http(8083))}, Namespaces: nss},
			want: []string{"80/TCP", "8081/TCP"}},
		{name: "from Selector: the namespaces whose labels match",
			gateways: []*gwv1.Gateway{admitting("web", "gw", gwv1.NamespacesFromSelector, selectTeam, http(80))},
			sets: ListenerSets{Sets: []*gwv1.ListenerSet{set("shop", "ls", "web/gw", http(8081)), set("other", "ls", "web/gw", http(8082)),
				set("web", "ls", "gw", http(8083))}, Namespaces: nss},
			want: []string{"80/TCP", "8081/TCP"}},
		{name: "from Selector: kubernetes.io/metadata.name, which the API server sets on every namespace, is matched",
			gateways: []*gwv1.Gateway{admitting("web", "gw", gwv1.NamespacesFromSelector,
				&metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "other"}}, http(80))},
			sets: ListenerSets{Sets: []*gwv1.ListenerSet{set("shop", "ls", "web/gw", http(8081)), set("other", "ls", "web/gw", http(8082))},
				Namespaces: nss},
			want: []string{"80/TCP", "8082/TCP"}},
		{name: "from Selector, a namespace not in the list: only its name label",
			gateways: []*gwv1.Gateway{admitting("web", "gw", gwv1.NamespacesFromSelector, selectTeam, http(80))},
			sets:     ListenerSets{Sets: []*gwv1.ListenerSet{set("new", "ls", "web/gw", http(8081))}, Namespaces: nss},
			want:     []string{"80/TCP"}},
		// The front-end's rule: a namespace not listed has only the
		// label the API server gives every namespace, its name.
		{name: "from Selector, Namespaces unknown: only their names' label",
			gateways: []*gwv1.Gateway{admitting("web", "gw", gwv1.NamespacesFromSelector,
				&metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "other"}}, http(80))},
			sets: ListenerSets{Sets: []*gwv1.ListenerSet{set("shop", "ls", "web/gw", http(8081)), set("other", "ls", "web/gw", http(8082))}},
			want: []string{"80/TCP", "8082/TCP"}},
		{name: "from Selector without a selector, or with an invalid one: none",
			gateways: []*gwv1.Gateway{admitting("web", "gw", gwv1.NamespacesFromSelector, nil, http(80)),
				admitting("web", "gw2", gwv1.NamespacesFromSelector, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "team", Operator: "Near"}}}, http(80))},
			sets: ListenerSets{Sets: []*gwv1.ListenerSet{set("web", "ls", "gw", http(8081)), set("web", "ls2", "gw2", http(8082))}},
			want: []string{"80/TCP"}},
		{name: "from a value the API does not know: none",
			gateways: []*gwv1.Gateway{admitting("web", "gw", "Everywhere", nil, http(80))},
			sets:     ListenerSets{Sets: []*gwv1.ListenerSet{set("web", "ls", "gw", http(8081))}},
			want:     []string{"80/TCP"}},
		{name: "a parentRef of another group or kind names no Gateway",
			gateways: []*gwv1.Gateway{admitting("web", "gw", gwv1.NamespacesFromAll, nil, http(80))},
			sets: ListenerSets{Sets: func() []*gwv1.ListenerSet {
				a, b, c := set("web", "a", "gw", http(8081)), set("web", "b", "gw", http(8082)), set("web", "c", "gw", http(8083))
				a.Spec.ParentRef.Group = ptr.To(gwv1.Group("example.com"))
				b.Spec.ParentRef.Kind = ptr.To(gwv1.Kind("ListenerSet"))
				c.Spec.ParentRef.Group, c.Spec.ParentRef.Kind = ptr.To(gwv1.Group(gwv1.GroupName)), ptr.To(gwv1.Kind("Gateway"))
				return []*gwv1.ListenerSet{a, b, c}
			}()},
			want: []string{"80/TCP", "8083/TCP"}},
		{name: "a ListenerSet of a Gateway not of ours (not given) adds nothing anywhere",
			gateways: []*gwv1.Gateway{admitting("web", "gw", gwv1.NamespacesFromAll, nil, http(80))},
			sets:     ListenerSets{Sets: []*gwv1.ListenerSet{set("web", "ls", "theirs", http(8081))}},
			want:     []string{"80/TCP"}},
		{name: "ports: one per distinct port and transport (a port number may be both TCP and UDP), whoever names it",
			gateways: []*gwv1.Gateway{admitting("web", "gw", gwv1.NamespacesFromAll, nil, http(80), l(53, gwv1.UDPProtocolType))},
			sets: ListenerSets{Sets: []*gwv1.ListenerSet{
				set("web", "a", "gw", http(80), l(53, gwv1.TCPProtocolType), l(5353, gwv1.UDPProtocolType), l(6000, gwv1.UDPProtocolType)),
				set("shop", "b", "web/gw", l(5353, gwv1.UDPProtocolType), l(6000, gwv1.TCPProtocolType), l(0, gwv1.TCPProtocolType))}},
			want: []string{"53/TCP", "53/UDP", "80/TCP", "5353/UDP", "6000/TCP", "6000/UDP"}},
		{name: "an existing allocation is kept; a ListenerSet's new port takes the lowest free",
			gateways: []*gwv1.Gateway{admitting("web", "gw", gwv1.NamespacesFromSame, nil, http(80))},
			sets:     ListenerSets{Sets: []*gwv1.ListenerSet{set("web", "ls", "gw", http(8080))}},
			have:     []*corev1.Service{svc("web", "gw", map[int32]int32{80: 20001})},
			want:     []string{"80/TCP", "8080/TCP"}, alloc: map[int32]int32{80: 20001, 8080: 20000}},
		{name: "a ListenerSet gone: its port leaves the Service, the Gateway's stay",
			gateways: []*gwv1.Gateway{admitting("web", "gw", gwv1.NamespacesFromSame, nil, http(80))},
			have:     []*corev1.Service{svc("web", "gw", map[int32]int32{80: 20001, 8080: 20000})},
			want:     []string{"80/TCP"}, alloc: map[int32]int32{80: 20001}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Desired(tc.gateways, tc.sets, tc.have, opts)
			if len(p.Problems) != 0 {
				t.Fatalf("problems %v", p.Problems)
			}
			if got := servicePorts(p, "web", "gw"); !slices.Equal(got, tc.want) {
				t.Errorf("ports %v, want %v", got, tc.want)
			}
			if tc.alloc != nil {
				if got := allocations(t, p)["web/gw"]; !maps.Equal(got, tc.alloc) {
					t.Errorf("internal ports %v, want %v", got, tc.alloc)
				}
			}
		})
	}
}

// TestDesiredListenerSetsShortOfPorts: when the range has too few ports
// for a Gateway and its ListenerSets, the ports only ListenerSets name are
// left out (with a Problem naming the Gateway), never the Gateway's own
// and never the whole Service: one ListenerSet does not take a Gateway's
// address away.
func TestDesiredListenerSetsShortOfPorts(t *testing.T) {
	o := opts
	o.Ports = PortRange{First: 20000, Last: 20001}
	gw := admitting("web", "gw", gwv1.NamespacesFromAll, nil, http(80), http(443))
	p := Desired([]*gwv1.Gateway{gw}, ListenerSets{Sets: []*gwv1.ListenerSet{set("web", "ls", "gw", http(8080), http(8081))}}, nil, o)
	if got := servicePorts(p, "web", "gw"); !slices.Equal(got, []string{"80/TCP", "443/TCP"}) {
		t.Errorf("ports %v, want the Gateway's own", got)
	}
	if len(p.Problems) != 1 || !strings.Contains(p.Problems[0].Message, "8080, 8081") || p.Problems[0].Condition != nil {
		t.Errorf("problems %+v, want one naming 8080 and 8081, without a condition (the Gateway is served)", p.Problems)
	}
	// The Gateway's own ports short: no Service, as before.
	o.Ports = PortRange{First: 20000, Last: 20000}
	p = Desired([]*gwv1.Gateway{gw}, ListenerSets{}, nil, o)
	if p.Want[ServiceName("web", "gw")] != nil || len(p.Problems) != 1 {
		t.Errorf("want no Service and a Problem: %+v", p)
	}
}
