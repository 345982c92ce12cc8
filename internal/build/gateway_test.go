package build

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// TestGatewayAPIOnlyOursIsReported: the Problems of Gateway API objects
// name only objects of Causeway's classes (a route naming a Gateway of
// another controller, or one that does not exist, gets none), and the
// kinds not served yet say so.
func TestGatewayAPIOnlyOursIsReported(t *testing.T) {
	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	parent := func(ns, name string) []gwv1.ParentReference {
		p := gwv1.ParentReference{Name: gwv1.ObjectName(name)}
		if ns != "" {
			p.Namespace = new(gwv1.Namespace(ns))
		}
		return []gwv1.ParentReference{p}
	}
	snap := &source.Snapshot{
		GatewayClasses: []*gwv1.GatewayClass{
			{ObjectMeta: meta("", "causeway"), Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}},
			{ObjectMeta: meta("", "envoy"), Spec: gwv1.GatewayClassSpec{ControllerName: "gateway.envoyproxy.io/gatewayclass-controller"}},
		},
		Gateways: []*gwv1.Gateway{
			{ObjectMeta: meta("infra", "ours"), Spec: gwv1.GatewaySpec{GatewayClassName: "causeway", Listeners: []gwv1.Listener{
				{Name: "http", Port: 8000, Protocol: gwv1.HTTPProtocolType,
					AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: new(gwv1.NamespacesFromAll)}}},
				{Name: "tcp", Port: 9000, Protocol: gwv1.TCPProtocolType}}}},
			{ObjectMeta: meta("infra", "theirs"), Spec: gwv1.GatewaySpec{GatewayClassName: "envoy"}},
		},
		HTTPRoutes: []*gwv1.HTTPRoute{
			{ObjectMeta: meta("infra", "same-ns"), Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("", "ours")}}},
			{ObjectMeta: meta("shop", "cross-ns"), Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("infra", "ours")}}},
			{ObjectMeta: meta("shop", "wrong-ns"), Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("", "ours")}}},
			{ObjectMeta: meta("infra", "envoys"), Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("", "theirs")}}},
		},
		TCPRoutes: []*gwv1.TCPRoute{
			{ObjectMeta: meta("infra", "tcp"), Spec: gwv1.TCPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parent("", "ours")}}},
		},
	}
	_, problems := Build(snap, testOpts)
	got := map[string]bool{}
	for _, p := range problems {
		got[p.Object.Kind+" "+p.Object.Namespace+"/"+p.Object.Name] = true
		if p.Object.Name == "theirs" || p.Object.Name == "envoys" || p.Object.Name == "envoy" || p.Object.Name == "wrong-ns" {
			t.Errorf("%s: not ours to report", p)
		}
	}
	// The routes without rules answer 500 (no backendRefs): ResolvedRefs
	// is fine, so the HTTPRoutes have no Problem; the TCPRoute is not
	// served yet, nor the TCP listener.
	for _, want := range []string{"TCPRoute infra/tcp", "Gateway infra/ours"} {
		if !got[want] {
			t.Errorf("no Problem on %s; got %v", want, problems)
		}
	}
}

// TestGatewayPortsInFilesSource: where a listener's port is nginx's own,
// a port that something else serves is refused with a Problem naming
// it, two Gateways' HTTP listeners on one port share it, and an HTTPS
// listener on an HTTP port is refused.
func TestGatewayPortsInFilesSource(t *testing.T) {
	opts := testOpts
	opts.HTTPPort, opts.HTTPSPort, opts.StreamAvailable = 8080, 8443, true
	gw := func(name string, ls ...gwv1.Listener) *gwv1.Gateway {
		return &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: name}, Spec: gwv1.GatewaySpec{GatewayClassName: "causeway", Listeners: ls}}
	}
	listener := func(name string, port int, proto gwv1.ProtocolType) gwv1.Listener {
		l := gwv1.Listener{Name: gwv1.SectionName(name), Port: gwv1.PortNumber(port), Protocol: proto}
		return l
	}
	snap := &source.Snapshot{
		GatewayClasses: []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "causeway"}, Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}}},
		Gateways: []*gwv1.Gateway{
			gw("a", listener("ingress-port", 8080, gwv1.HTTPProtocolType), listener("web", 9000, gwv1.HTTPProtocolType)),
			gw("b", listener("web", 9000, gwv1.HTTPProtocolType)),
			gw("c", listener("tcp", 9000, gwv1.TCPProtocolType)),
		},
	}
	m, problems := Build(snap, opts)
	var msgs []string
	for _, p := range problems {
		msgs = append(msgs, p.Object.Name+": "+p.Message)
	}
	for _, want := range []string{
		`a: listener "ingress-port": port 8080 is the controller's own HTTP or HTTPS port`,
		`c: listener "tcp": port 9000 is an HTTP listener's of Gateway`,
	} {
		found := false
		for _, m := range msgs {
			found = found || strings.HasPrefix(m, want)
		}
		if !found {
			t.Errorf("no Problem %q in %q", want, msgs)
		}
	}
	// The listener not served says so in its status.
	res := Run(snap, opts).Gateway
	c := meta.FindStatusCondition(res.Gateways["infra/a"].Status.Listeners[0].Conditions, "Programmed")
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "Invalid" {
		t.Errorf("listener ingress-port's Programmed condition: %+v, want False Invalid", c)
	}
	var ports []int
	for _, l := range m.HTTPListeners {
		ports = append(ports, l.Port)
	}
	if !slices.Equal(ports, []int{9000}) {
		t.Errorf("HTTP listeners on %v, want one shared on 9000", ports)
	}
}

// TestGatewayTCPRouteWeights: a TCPRoute's backends share its listener's
// connections by weight, spread over their endpoints (2 and 3 endpoints,
// weights 1 and 1: 3+3 against 2+2+2), and a backend of weight 0 gets
// none.
func TestGatewayTCPRouteWeights(t *testing.T) {
	opts := testOpts
	opts.StreamAvailable = true
	ready := ptr.To(true)
	snap := &source.Snapshot{
		GatewayClasses: []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "causeway"}, Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}}},
		Gateways: []*gwv1.Gateway{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gw"},
			Spec: gwv1.GatewaySpec{GatewayClassName: "causeway", Listeners: []gwv1.Listener{{Name: "tcp", Port: 9000, Protocol: gwv1.TCPProtocolType}}}}},
		Services: []*corev1.Service{service("default", "a", 80, "p"), service("default", "b", 80, "p"), service("default", "c", 80, "p")},
		EndpointSlices: []*discoveryv1.EndpointSlice{
			slice("default", "a", "p", 8080, ep{addr: "10.0.0.1", ready: ready}, ep{addr: "10.0.0.2", ready: ready}),
			slice("default", "b", "p", 8080, ep{addr: "10.0.1.1", ready: ready}, ep{addr: "10.0.1.2", ready: ready}, ep{addr: "10.0.1.3", ready: ready}),
			slice("default", "c", "p", 8080, ep{addr: "10.0.2.1", ready: ready}),
		},
	}
	ref := func(name string, w int32) gwv1.BackendRef {
		return gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: ptr.To(gwv1.PortNumber(80))}, Weight: &w}
	}
	snap.TCPRoutes = []*gwv1.TCPRoute{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tcp"},
		Spec: gwv1.TCPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw"}}},
			Rules: []gwv1.TCPRouteRule{{BackendRefs: []gwv1.BackendRef{ref("a", 1), ref("b", 1), ref("c", 0)}}}}}}
	m, problems := Build(snap, opts)
	if len(m.Streams) != 1 {
		t.Fatalf("streams %v, problems %v", m.Streams, problems)
	}
	var got []string
	for i, e := range m.Streams[0].Endpoints {
		got = append(got, fmt.Sprintf("%s=%d", e.Address, m.Streams[0].Weights[i]))
	}
	want := []string{"10.0.0.1=3", "10.0.0.2=3", "10.0.1.1=2", "10.0.1.2=2", "10.0.1.3=2"}
	if !slices.Equal(got, want) {
		t.Errorf("endpoints and weights %v, want %v", got, want)
	}
}

// TestGatewayExcluded: a route or Gateway the controller excludes (nginx
// refused its configuration) is left out with a Problem; the others are
// served.
func TestGatewayExcluded(t *testing.T) {
	opts := testOpts
	opts.HTTPPort, opts.HTTPSPort = 8080, 8443
	snap := world(1)
	snap.GatewayClasses = []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "causeway"}, Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}}}
	snap.Gateways = []*gwv1.Gateway{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gw"},
		Spec: gwv1.GatewaySpec{GatewayClassName: "causeway", Listeners: []gwv1.Listener{{Name: "http", Port: 9000, Protocol: gwv1.HTTPProtocolType}}}}}
	route := func(name, host string) *gwv1.HTTPRoute {
		return &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw"}}},
				Hostnames: []gwv1.Hostname{gwv1.Hostname(host)},
				Rules: []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{
					BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(svcName(0)), Port: ptr.To(gwv1.PortNumber(80))}}}}}}}}
	}
	snap.HTTPRoutes = []*gwv1.HTTPRoute{route("bad", "bad.test"), route("good", "good.test")}
	opts.Excluded = map[string]string{"HTTPRoute/default/bad": "nginx refused it"}
	m, problems := Build(snap, opts)
	var hosts []string
	for _, s := range m.Servers {
		if s.Scope != "" {
			hosts = append(hosts, s.Host)
		}
	}
	if !slices.Equal(hosts, []string{"good.test"}) {
		t.Errorf("Gateway servers %v, want good.test only", hosts)
	}
	if !slices.ContainsFunc(problems, func(p model.Problem) bool { return p.Object.Name == "bad" && p.Reason == model.ReasonExcluded }) {
		t.Errorf("no Excluded Problem on the route: %v", problems)
	}
}

// TestGatewayPortOfAnotherFrontEnd: with the files source, a Gateway
// listener on a port a GlobalConfiguration listener (VirtualServers'
// HTTP, TransportServers' TCP/UDP) or a TransportServer has is refused,
// naming it; the other front-end keeps its port.
func TestGatewayPortOfAnotherFrontEnd(t *testing.T) {
	snap := streamWorld()
	snap.GlobalConfigurations[0].Spec.Listeners = append(snap.GlobalConfigurations[0].Spec.Listeners,
		nicv1.Listener{Name: "web", Port: 7000, Protocol: "HTTP"})
	snap.TransportServers = []*nicv1.TransportServer{mkTransportServer("ts", 0, "tcp", "TCP", svcName(0))}
	snap.GatewayClasses = []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "causeway"}, Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}}}
	snap.Gateways = []*gwv1.Gateway{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gw"},
		Spec: gwv1.GatewaySpec{GatewayClassName: "causeway", Listeners: []gwv1.Listener{
			{Name: "on-vs-listener", Port: 7000, Protocol: gwv1.HTTPProtocolType},
			{Name: "on-ts-listener", Port: 5000, Protocol: gwv1.TCPProtocolType},
			{Name: "on-udp-listener", Port: 5000, Protocol: gwv1.UDPProtocolType},
			{Name: "free", Port: 7001, Protocol: gwv1.HTTPProtocolType}}}}}
	m, problems := Build(snap, streamOpts)
	msgs := messagesOf(problems, "Gateway")
	for _, want := range []string{`"on-vs-listener": port 7000 is GlobalConfiguration listener web's`,
		`"on-ts-listener": port 5000 is GlobalConfiguration listener tcp's`, `"on-udp-listener": port 5000 is GlobalConfiguration listener udp's`} {
		if !strings.Contains(msgs, want) {
			t.Errorf("no Problem %q in %s", want, msgs)
		}
	}
	var ports []int
	for _, l := range m.HTTPListeners {
		ports = append(ports, l.Port)
	}
	if !slices.Equal(ports, []int{7001}) {
		t.Errorf("Gateway HTTP listeners on %v, want 7001 only", ports)
	}
	if len(m.Streams) != 1 || m.Streams[0].Source.Name != "ts" {
		t.Errorf("streams %v, want the TransportServer's only", m.Streams)
	}
}
