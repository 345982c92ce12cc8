package render

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/causeway/causeway/internal/build"
)

// TestBuildReadsOnlyTheServicesItRecords: over every golden case (every
// kind that names a Service: Ingress backends and default backends,
// canaries, VirtualServer upstreams and their policies' services,
// TransportServers, TLS passthrough, tcp-services, Gateway API routes and
// BackendTLSPolicies), the Services a build records as looked for
// (build.Result.Services) are all it reads. With every other Service
// removed, or each changed in every field the build could read, and a
// Service added in every namespace under a name nothing uses, the build
// makes the same Model, Problems and Gateway resolution. The controller
// runs no sync for a change of such a Service (controller/changes.go): a
// read that bypassed the record would leave a stale configuration live.
func TestBuildReadsOnlyTheServicesItRecords(t *testing.T) {
	unread := 0
	for _, name := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			snap, opts, _ := goldenInput(t, name)
			// Services no object names: one under a name nothing
			// uses in every namespace, and one under the name of
			// each of the case's in every other namespace.
			namespaces := map[string]bool{"default": true, "causeway-elsewhere": true}
			for _, s := range snap.Services {
				namespaces[s.Namespace] = true
			}
			base := *snap
			base.Services = slices.Clone(snap.Services)
			for ns := range namespaces {
				base.Services = append(base.Services, decoy(ns, "causeway-nobody-names-it"))
				for _, s := range snap.Services {
					if s.Namespace != ns {
						base.Services = append(base.Services, decoy(ns, s.Name))
					}
				}
			}
			r := build.Run(&base, opts)
			for _, b := range r.Model.Backends {
				if b.Service != "" && !r.Services[b.Namespace+"/"+b.Service] {
					t.Errorf("backend %s: its Service is not recorded", b.Key)
				}
			}
			var kept, others []*corev1.Service
			for _, s := range base.Services {
				if r.Services[s.Namespace+"/"+s.Name] {
					kept = append(kept, s)
				} else {
					others = append(others, s)
				}
			}
			unread += len(others)
			var changed []*corev1.Service
			for _, s := range others {
				changed = append(changed, otherService(s))
			}
			added := decoy("default", "causeway-nobody-names-it-either")
			for variant, services := range map[string][]*corev1.Service{
				"the others removed": kept,
				"the others changed": append(kept[:len(kept):len(kept)], changed...),
				"one added":          append(base.Services[:len(base.Services):len(base.Services)], added),
			} {
				next := base
				next.Services = services
				got := build.Run(&next, opts)
				if !reflect.DeepEqual(got.Model, r.Model) {
					t.Errorf("%s: the Model differs", variant)
				}
				if !reflect.DeepEqual(got.Problems, r.Problems) {
					t.Errorf("%s: Problems %v, want %v", variant, got.Problems, r.Problems)
				}
				if !reflect.DeepEqual(got.Gateway, r.Gateway) {
					t.Errorf("%s: the Gateway resolution differs", variant)
				}
				if !maps.Equal(got.Services, r.Services) {
					t.Errorf("%s: looked for %v, want %v", variant, got.Services, r.Services)
				}
			}
		})
	}
	if unread == 0 {
		t.Fatal("no case has a Service its build does not read: nothing was checked")
	}
}

// decoy is a Service of one port, 80, and an endpoint address.
func decoy(ns, name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("decoy-" + ns + "-" + name)},
		Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.99", Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
}

// otherService is s with everything the build reads of a Service
// different: its type, ports, annotations and addresses.
func otherService(s *corev1.Service) *corev1.Service {
	o := s.DeepCopy()
	o.UID = "changed-" + o.UID
	o.Annotations = map[string]string{"nginx.org/ssl-services": o.Name, "service.kubernetes.io/topology-mode": "Auto",
		"nginx.ingress.kubernetes.io/service-upstream": "true"}
	o.Spec.Type = corev1.ServiceTypeExternalName
	o.Spec.ExternalName = "elsewhere.example.com"
	o.Spec.ClusterIP = ""
	app := "kubernetes.io/h2c"
	o.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, AppProtocol: &app}, {Name: "https", Port: 443},
		{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}, {Port: 8080}}
	o.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.9"}}
	return o
}
