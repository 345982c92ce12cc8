package gatewayservice

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func gw(ns, name string, listeners ...gwv1.Listener) *gwv1.Gateway {
	return &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gwv1.GatewaySpec{GatewayClassName: "causeway", Listeners: listeners}}
}

func l(port int32, proto gwv1.ProtocolType) gwv1.Listener {
	return gwv1.Listener{Name: gwv1.SectionName(fmt.Sprintf("l%d%s", port, strings.ToLower(string(proto)))), Port: gwv1.PortNumber(port), Protocol: proto}
}

func http(port int32) gwv1.Listener { return l(port, gwv1.HTTPProtocolType) }

// svc is the Service of Gateway ns/name as it exists, with ports
// "listener:internal".
func svc(ns, name string, ports map[int32]int32) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway-system", Name: ServiceName(ns, name),
		Labels: Labels(ns, name), ResourceVersion: "7"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}
	for _, p := range slices.Sorted(maps.Keys(ports)) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: PortName(p), Port: p, Protocol: corev1.ProtocolTCP,
			TargetPort: intstr.FromInt32(ports[p]), NodePort: 30000 + p})
	}
	return s
}

var opts = Options{Namespace: "causeway-system", Selector: map[string]string{"app.kubernetes.io/name": "causeway"},
	Ports: PortRange{First: 20000, Last: 20003}}

// allocations is a plan's wanted Services as "ns/name" → listener port →
// internal port, read back with Parse (the contract the build reads).
func allocations(t *testing.T, p Plan) map[string]map[int32]int32 {
	t.Helper()
	out := map[string]map[int32]int32{}
	for name, s := range p.Want {
		o, ok := Parse(s)
		if !ok {
			t.Fatalf("Parse does not read the wanted Service %s: %+v", name, s)
		}
		if s.Name != ServiceName(o.Namespace, o.Name) {
			t.Errorf("Service of %s is named %s", o.Key(), s.Name)
		}
		out[o.Key()] = o.Ports
	}
	return out
}

func names(svcs []*corev1.Service) []string {
	var out []string
	for _, s := range svcs {
		out = append(out, s.Name)
	}
	return out
}

func TestDesiredAllocation(t *testing.T) {
	type alloc = map[string]map[int32]int32
	for _, tc := range []struct {
		name     string
		gateways []*gwv1.Gateway
		have     []*corev1.Service
		want     alloc
		deleted  []string
		problems []string // fragments, one per Problem, in order
	}{
		{name: "lowest free first, one port per distinct listener port",
			gateways: []*gwv1.Gateway{gw("a", "one", http(80), l(443, gwv1.HTTPSProtocolType), l(443, gwv1.TLSProtocolType))},
			want:     alloc{"a/one": {80: 20000, 443: 20001}}},
		{name: "Gateways sharing listener ports get internal ports of their own",
			gateways: []*gwv1.Gateway{gw("b", "two", http(80)), gw("a", "one", http(80))},
			want:     alloc{"a/one": {80: 20000}, "b/two": {80: 20001}}},
		{name: "an existing allocation is kept, a new port takes the lowest free",
			gateways: []*gwv1.Gateway{gw("a", "one", http(80), http(8080)), gw("b", "two", http(80))},
			have:     []*corev1.Service{svc("a", "one", map[int32]int32{80: 20002}), svc("b", "two", map[int32]int32{80: 20000})},
			want:     alloc{"a/one": {80: 20002, 8080: 20001}, "b/two": {80: 20000}}},
		{name: "a port no longer listened on is freed for the next plan, not this one",
			gateways: []*gwv1.Gateway{gw("a", "one", http(8080)), gw("b", "two", http(80))},
			have:     []*corev1.Service{svc("a", "one", map[int32]int32{80: 20000})},
			want:     alloc{"a/one": {8080: 20001}, "b/two": {80: 20002}}},
		{name: "the Service of a Gateway gone is deleted, and its ports stay taken while it exists",
			gateways: []*gwv1.Gateway{gw("b", "two", http(80))},
			have:     []*corev1.Service{svc("a", "gone", map[int32]int32{80: 20000})},
			want:     alloc{"b/two": {80: 20001}},
			deleted:  []string{ServiceName("a", "gone")}},
		{name: "a Gateway without a listener port wants no Service",
			gateways: []*gwv1.Gateway{gw("a", "one")},
			have:     []*corev1.Service{svc("a", "one", map[int32]int32{80: 20000})},
			want:     alloc{},
			deleted:  []string{ServiceName("a", "one")}},
		{name: "an allocation out of the range moves into it",
			gateways: []*gwv1.Gateway{gw("a", "one", http(80))},
			have:     []*corev1.Service{svc("a", "one", map[int32]int32{80: 19999})},
			want:     alloc{"a/one": {80: 20000}}},
		{name: "a port two Services claim stays with the first by name; the other moves",
			gateways: []*gwv1.Gateway{gw("a", "one", http(80)), gw("b", "two", http(80))},
			have:     []*corev1.Service{svc("b", "two", map[int32]int32{80: 20001}), svc("a", "one", map[int32]int32{80: 20001})},
			want: func() alloc {
				first, second := "a/one", "b/two"
				if ServiceName("b", "two") < ServiceName("a", "one") {
					first, second = second, first
				}
				return alloc{first: {80: 20001}, second: {80: 20000}}
			}()},
		{name: "exhaustion: the Gateway that does not fit gets nothing, named in a Problem; the others are served",
			gateways: []*gwv1.Gateway{gw("a", "one", http(80), http(81), http(82)), gw("b", "two", http(80), http(81)), gw("c", "three", http(80))},
			want:     alloc{"a/one": {80: 20000, 81: 20001, 82: 20002}, "c/three": {80: 20003}},
			problems: []string{"Gateway b/two: NoResources: no internal port is free in --gateway-port-range 20000-20003 for listener port(s) 81: the Gateway has no Service"}},
		{name: "exhaustion leaves an existing Service as it is, neither updated nor deleted; a Gateway that does not fit takes nothing",
			gateways: []*gwv1.Gateway{gw("a", "one", http(80), http(81), http(82), http(83)), gw("b", "two", http(80), http(81)), gw("c", "three", http(80), http(81), http(82))},
			have:     []*corev1.Service{svc("b", "two", map[int32]int32{80: 20003}), svc("c", "three", map[int32]int32{80: 20002})},
			want:     alloc{"b/two": {80: 20003, 81: 20000}},
			problems: []string{"Gateway a/one: NoResources: no internal port is free in --gateway-port-range 20000-20003 for listener port(s) 82, 83: the Gateway has no Service",
				"Gateway c/three: NoResources: no internal port is free in --gateway-port-range 20000-20003 for listener port(s) 82: the Gateway's Service is left as it is"}},
		{name: "a Service whose labels name another Gateway is left alone",
			gateways: []*gwv1.Gateway{gw("a", "one", http(80))},
			have: []*corev1.Service{func() *corev1.Service {
				s := svc("x", "other", map[int32]int32{80: 20000})
				s.Name = ServiceName("a", "one")
				return s
			}()},
			want:     alloc{},
			problems: []string{"is Gateway x/other's: it is left as it is"}},
		{name: "Services not ours, or of another namespace, are neither read nor deleted",
			gateways: []*gwv1.Gateway{gw("a", "one", http(80))},
			have: []*corev1.Service{
				{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway-system", Name: "causeway"}, Spec: corev1.ServiceSpec{
					Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(20000)}}}},
				func() *corev1.Service {
					s := svc("a", "gone", map[int32]int32{80: 20000})
					s.Namespace = "elsewhere"
					return s
				}(),
			},
			want: alloc{"a/one": {80: 20000}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Desired(tc.gateways, ListenerSets{}, tc.have, opts)
			if got := allocations(t, p); !equalAlloc(got, tc.want) {
				t.Errorf("allocations = %v, want %v", got, tc.want)
			}
			if got := names(p.Delete); !slices.Equal(got, tc.deleted) {
				t.Errorf("deleted = %v, want %v", got, tc.deleted)
			}
			if len(p.Problems) != len(tc.problems) {
				t.Fatalf("problems = %v, want %d", p.Problems, len(tc.problems))
			}
			for i, frag := range tc.problems {
				if got := p.Problems[i].String(); !strings.Contains(got, frag) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got, frag)
				}
				if c := p.Problems[i].Condition; c == nil || c.Type != "Programmed" || c.Status != "False" {
					t.Errorf("problem %d implies condition %+v, want Programmed=False", i, c)
				}
			}
			// Pure: the same input plans the same again.
			if again := Desired(tc.gateways, ListenerSets{}, tc.have, opts); !equalAlloc(allocations(t, again), allocations(t, p)) {
				t.Errorf("a second plan differs")
			}
		})
	}
}

func equalAlloc(a, b map[string]map[int32]int32) bool {
	return maps.EqualFunc(a, b, func(x, y map[int32]int32) bool { return maps.Equal(x, y) })
}

// TestDesiredService: the Service of a Gateway, field by field.
func TestDesiredService(t *testing.T) {
	g := gw("web", "cafe", http(80), l(443, gwv1.HTTPSProtocolType), l(53, gwv1.UDPProtocolType), l(5353, gwv1.UDPProtocolType), l(5353, gwv1.TCPProtocolType))
	for _, tc := range []struct {
		typ, want corev1.ServiceType
	}{{"", corev1.ServiceTypeLoadBalancer}, {corev1.ServiceTypeClusterIP, corev1.ServiceTypeClusterIP}, {corev1.ServiceTypeNodePort, corev1.ServiceTypeNodePort}} {
		o := opts
		o.Type, o.Ports = tc.typ, PortRange{First: 21000, Last: 21999}
		s := Desired([]*gwv1.Gateway{g}, ListenerSets{}, nil, o).Want[ServiceName("web", "cafe")]
		if s == nil {
			t.Fatal("no Service")
		}
		if s.Namespace != "causeway-system" || s.Spec.Type != tc.want || !maps.Equal(s.Spec.Selector, opts.Selector) {
			t.Errorf("Service %s/%s type %s selector %v", s.Namespace, s.Name, s.Spec.Type, s.Spec.Selector)
		}
		want := map[string]string{LabelManagedBy: ManagedBy, LabelNamespace: "web", LabelName: "cafe", gwv1.GatewayNameLabelKey: "cafe"}
		if !maps.Equal(s.Labels, want) {
			t.Errorf("labels = %v, want %v", s.Labels, want)
		}
		var got []string
		for _, p := range s.Spec.Ports {
			got = append(got, fmt.Sprintf("%s %d/%s->%s", p.Name, p.Port, p.Protocol, p.TargetPort.String()))
		}
		wantPorts := []string{"p53 53/UDP->21000", "p80 80/TCP->21001", "p443 443/TCP->21002", "p5353 5353/TCP->21003", "p5353-udp 5353/UDP->21003"}
		if !slices.Equal(got, wantPorts) {
			t.Errorf("ports = %v, want %v", got, wantPorts)
		}
	}
}

// TestDesiredManyGateways: 500 Gateways of two ports each in a range of
// 1000 get every port of it once; a Gateway more gets a Problem.
func TestDesiredManyGateways(t *testing.T) {
	var gws []*gwv1.Gateway
	for i := range 500 {
		gws = append(gws, gw(fmt.Sprintf("ns%03d", i), "gw", http(80), l(443, gwv1.HTTPSProtocolType)))
	}
	o := opts
	o.Ports = PortRange{First: 20000, Last: 20999}
	p := Desired(gws, ListenerSets{}, nil, o)
	seen := map[int32]bool{}
	for _, ports := range allocations(t, p) {
		for _, t2 := range ports {
			if seen[t2] || !o.Ports.Contains(t2) {
				t.Fatalf("internal port %d given twice or out of range", t2)
			}
			seen[t2] = true
		}
	}
	if len(seen) != 1000 || len(p.Problems) != 0 {
		t.Fatalf("%d ports given, problems %v", len(seen), p.Problems)
	}
	// Existing Services: the next plan keeps every allocation.
	var have []*corev1.Service
	for _, s := range p.Want {
		have = append(have, s)
	}
	next := Desired(append(gws, gw("zz", "late", http(80))), ListenerSets{}, have, o)
	if !equalAlloc(allocations(t, next), allocations(t, p)) {
		t.Error("allocations moved")
	}
	if len(next.Problems) != 1 || next.Problems[0].Object.Namespace != "zz" {
		t.Errorf("problems = %v, want one for zz/late", next.Problems)
	}
}

func TestServiceName(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, tc := range []struct{ ns, name string }{
		{"default", "gw"}, {"default", "my.gateway.example"}, {long, long + "." + long}, {"x", strings.Repeat("-", 1)},
		{long, long + "b"},
	} {
		n := ServiceName(tc.ns, tc.name)
		if errs := validation.IsDNS1035Label(n); len(errs) > 0 {
			t.Errorf("ServiceName(%q, %q) = %q: %v", tc.ns, tc.name, n, errs)
		}
	}
	if ServiceName(long, long+"b") == ServiceName(long, long+"c") {
		t.Error("names that cut alike share a Service name")
	}
	if ServiceName("a-b", "c") == ServiceName("a", "b-c") {
		t.Error("namespace/name split differently share a Service name")
	}
	if got := ServiceName("default", "gw"); !strings.HasPrefix(got, "gw-default-gw-") {
		t.Errorf("ServiceName = %q, want it readable", got)
	}
}

func TestParsePortRange(t *testing.T) {
	for in, want := range map[string]string{"20000-20999": "20000-20999", "1-65535": "1-65535", "5-5": "5-5",
		"": "error", "20000": "error", "2-1": "error", "0-10": "error", "1-65536": "error", " 1-2": "error", "1-2x": "error", "+1-2": "error"} {
		r, err := ParsePortRange(in)
		got := r.String()
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("ParsePortRange(%q) = %s (%v), want %s", in, got, err, want)
		}
	}
}
