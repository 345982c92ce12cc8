package build

import (
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ServiceEndpoints gives a plain backend exactly the endpoints Run gives
// it, and refuses (ok false) every backend Run could resolve otherwise or
// report on: the controller's incremental path relies on both.
func TestServiceEndpointsMatchesRun(t *testing.T) {
	snap := world(3)
	named := service("default", "named", 80, "web")
	named.Spec.Ports = append(named.Spec.Ports, corev1.ServicePort{Name: "alt", Port: 81, Protocol: corev1.ProtocolTCP})
	es := slice("default", "named", "web", 8080, ep{addr: "10.1.0.2"}, ep{addr: "10.1.0.1"}, ep{addr: "10.1.0.3", ready: ptr.To(false)})
	es2 := slice("default", "named", "web", 8080, ep{addr: "10.1.0.1"}, ep{addr: "10.1.0.4"})
	es2.Name = "named-def"
	alt := slice("default", "named", "alt", 9090, ep{addr: "10.1.0.9"})
	alt.Name = "named-alt"
	snap.Services = append(snap.Services, named)
	snap.EndpointSlices = append(snap.EndpointSlices, es, es2, alt)
	byName := path("/n", "Prefix", "named", 0)
	byName.Backend.Service.Port = networkingv1.ServiceBackendPort{Name: "alt"}
	snap.Ingresses = append(snap.Ingresses, mkIngress("default", "a", 0, rule("a.test",
		path("/", "Prefix", svcName(0), 80), path("/b", "Prefix", svcName(1), 80), path("/w", "Prefix", "named", 80), byName)))
	snap.Services[2].Spec.ClusterIP = "10.96.0.7"
	upstream := mkIngress("default", "b", 1, rule("b.test", path("/", "Prefix", svcName(2), 80)))
	upstream.Annotations = map[string]string{"nginx.ingress.kubernetes.io/service-upstream": "true"}
	snap.Ingresses = append(snap.Ingresses, upstream)
	m := Run(snap, testOpts).Model
	var keys []string
	for _, be := range m.Backends {
		keys = append(keys, be.Key)
	}
	if !slices.Contains(keys, "default/svc-c/80"+clusterIPSuffix) || len(keys) != 5 {
		t.Fatalf("backends %v, want 5 with a cluster IP's", keys)
	}
	for _, be := range m.Backends {
		svc := serviceOf(snap.Services, be.Namespace, be.Service)
		got, ok := ServiceEndpoints(svc, slicesOf(snap.EndpointSlices, be.Namespace, be.Service), be.Key)
		if !ok || !slices.Equal(got, be.Endpoints) {
			t.Errorf("%s: ServiceEndpoints %v (ok %v), Run %v", be.Key, got, ok, be.Endpoints)
		}
	}
}

func TestServiceEndpointsRefuses(t *testing.T) {
	svc := service("default", "s", 80, "http")
	ok1 := slice("default", "s", "http", 8080, ep{addr: "10.0.0.1"})
	bad := slice("default", "s", "http", 8080, ep{addr: "10.0.0.1"}, ep{addr: "not-an-ip"})
	v6in4 := slice("default", "s", "http", 8080, ep{addr: "fd00::1"})
	withIP := service("default", "s", 80, "http")
	withIP.Spec.ClusterIP = "10.96.0.5"
	external := service("default", "s", 80, "http")
	external.Spec.Type = corev1.ServiceTypeExternalName
	udp := service("default", "s", 53, "dns")
	udp.Spec.Ports[0].Protocol = corev1.ProtocolUDP
	tests := []struct {
		name   string
		svc    *corev1.Service
		slices []*discoveryv1.EndpointSlice
		key    string
		ok     bool
	}{
		{"plain, by number", svc, []*discoveryv1.EndpointSlice{ok1}, "default/s/80", true},
		{"plain, by name", svc, []*discoveryv1.EndpointSlice{ok1}, "default/s/http", true},
		{"no slices: no endpoints, as Run", svc, nil, "default/s/80", true},
		{"no Service", nil, nil, "default/s/80", false},
		{"an address Run drops and reports", svc, []*discoveryv1.EndpointSlice{bad}, "default/s/80", false},
		{"an IPv6 address in an IPv4 slice", svc, []*discoveryv1.EndpointSlice{v6in4}, "default/s/80", false},
		{"ExternalName", external, nil, "default/s/80", false},
		{"a port the Service lacks", svc, []*discoveryv1.EndpointSlice{ok1}, "default/s/81", false},
		{"a UDP port", udp, nil, "default/s/53", false},
		{"cluster IP of a headless Service", svc, []*discoveryv1.EndpointSlice{ok1}, "default/s/80" + clusterIPSuffix, false},
		{"cluster IP", withIP, []*discoveryv1.EndpointSlice{bad}, "default/s/80" + clusterIPSuffix, true},
		{"cluster IP of a port the Service lacks", withIP, nil, "default/s/81" + clusterIPSuffix, false},
		{"subselector", svc, []*discoveryv1.EndpointSlice{ok1}, "default/s/80" + subselectorSuffix + "0123456789ab", false},
		{"another Service's key", svc, []*discoveryv1.EndpointSlice{ok1}, "default/t/80", false},
		{"another namespace's key", svc, []*discoveryv1.EndpointSlice{ok1}, "other/s/80", false},
		{"a number written otherwise", svc, []*discoveryv1.EndpointSlice{ok1}, "default/s/080", false},
		{"no port", svc, []*discoveryv1.EndpointSlice{ok1}, "default/s", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ok := ServiceEndpoints(tc.svc, tc.slices, tc.key)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
		})
	}
}

func serviceOf(list []*corev1.Service, ns, name string) *corev1.Service {
	for _, s := range list {
		if s.Namespace == ns && s.Name == name {
			return s
		}
	}
	return nil
}

func slicesOf(list []*discoveryv1.EndpointSlice, ns, svc string) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, es := range list {
		if es.Namespace == ns && es.Labels[discoveryv1.LabelServiceName] == svc {
			out = append(out, es)
		}
	}
	return out
}

// A Service resolved for a stream server is a stream Service: its
// endpoints are in the files, so the incremental path must not take its
// EndpointSlice changes. Those only Ingresses name are not.
func TestStreamServices(t *testing.T) {
	snap := streamWorld()
	snap.TransportServers = append(snap.TransportServers, mkTransportServer("ts", 0, "tcp", "TCP", svcName(0)))
	snap.ConfigMaps = append(snap.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "tcp-services"},
		Data: map[string]string{"9000": "default/" + svcName(2) + ":80"}})
	snap.Ingresses = append(snap.Ingresses, mkIngress("default", "web", 0, rule("a.test", path("/", "Prefix", svcName(1), 80))))
	opts := streamOpts
	opts.TCPServices = "causeway/tcp-services"
	r := Run(snap, opts)
	want := map[string]bool{"default/" + svcName(0): true, "default/" + svcName(2): true}
	if !maps.Equal(r.StreamServices, want) {
		t.Fatalf("StreamServices %v, want %v", r.StreamServices, want)
	}
}
