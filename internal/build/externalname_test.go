package build

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/causeway/causeway/internal/source"

	"github.com/causeway/causeway/internal/model"
)

// TestExternalNameBackends is the table of ExternalName Services as an
// Ingress path's backend: the name and port the controller resolves
// (ingress-nginx's port rules), an IPv4 name as the endpoint itself, and
// names that are refused with a Problem (the path answers 503).
func TestExternalNameBackends(t *testing.T) {
	port := func(name string, p int32, target intstr.IntOrString) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: p, TargetPort: target}
	}
	for _, tc := range []struct {
		name      string
		external  string
		ports     []corev1.ServicePort
		refName   string // the Ingress's port name; "" refers to port 80
		noExt     bool
		want      *model.ExternalName
		endpoints []model.Endpoint
		problem   string // "" when none
	}{
		{name: "no ports: the Ingress's number", external: "db.example.com", want: &model.ExternalName{Host: "db.example.com", Port: 80}},
		{name: "a trailing dot is kept", external: "db.example.com.", want: &model.ExternalName{Host: "db.example.com.", Port: 80}},
		{name: "one label", external: "db", want: &model.ExternalName{Host: "db", Port: 80}},
		{name: "the port's numeric targetPort", external: "db.example.com", ports: []corev1.ServicePort{port("", 80, intstr.FromInt32(8443))},
			want: &model.ExternalName{Host: "db.example.com", Port: 8443}},
		{name: "a named targetPort: the port", external: "db.example.com", ports: []corev1.ServicePort{port("web", 80, intstr.FromString("http"))},
			want: &model.ExternalName{Host: "db.example.com", Port: 80}},
		{name: "by name", external: "db.example.com", refName: "web", ports: []corev1.ServicePort{port("web", 9000, intstr.FromInt32(9001))},
			want: &model.ExternalName{Host: "db.example.com", Port: 9001}},
		{name: "an unknown name", external: "db.example.com", refName: "web", problem: "has no port web"},
		{name: "an IPv4 address is the endpoint", external: "192.0.2.10", want: &model.ExternalName{Host: "192.0.2.10", Port: 80},
			endpoints: []model.Endpoint{{Address: "192.0.2.10", Port: 80}}},
		{name: "localhost", external: "localhost", problem: "localhost"},
		{name: "under .localhost", external: "a.localhost.", problem: "localhost"},
		{name: "loopback", external: "127.0.0.1", problem: "loopback"},
		{name: "metadata service", external: "169.254.169.254", problem: "link-local"},
		{name: "unspecified", external: "0.0.0.0", problem: "unspecified"},
		{name: "IPv6", external: "::1", problem: "IPv4"},
		{name: "upper case", external: "DB.example.com", problem: "lower-case"},
		{name: "empty", external: "", problem: "DNS name"},
		{name: "a space", external: "db example.com", problem: "lower-case"},
		{name: "a directive", external: "db;return 200", problem: "lower-case"},
		{name: "an empty label", external: "db..example.com", problem: "label"},
		{name: "a hyphen first", external: "-db.example.com", problem: "label"},
		{name: "a label too long", external: strings.Repeat("a", 64) + ".com", problem: "label"},
		{name: "too long", external: strings.Repeat("a.", 127) + "ab", problem: "DNS name"},
		{name: "refused by the flag", external: "db.example.com", noExt: true, problem: "--disable-svc-external-name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &source.Snapshot{Services: []*corev1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ext"},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: tc.external, Ports: tc.ports}}}}
			p := path("/", "Prefix", "ext", 80)
			if tc.refName != "" {
				p.Backend.Service.Port = networkingv1.ServiceBackendPort{Name: tc.refName}
			}
			s.Ingresses = append(s.Ingresses, mkIngress("default", "web", 0, rule("ext.test", p)))
			opts := testOpts
			opts.NoExternalName = tc.noExt
			m, problems := Build(s, opts)
			loc := server(m, "ext.test").Locations[0]
			if tc.problem != "" {
				if len(problems) != 1 || problems[0].Reason != model.ReasonMissingService || !strings.Contains(problems[0].Message, tc.problem) {
					t.Fatalf("problems %v, want one %s naming %q", problems, model.ReasonMissingService, tc.problem)
				}
				if r := loc.Action.Return; r == nil || r.Status != 503 {
					t.Fatalf("action %+v, want 503", loc.Action)
				}
				return
			}
			if len(problems) != 0 {
				t.Fatal(problems)
			}
			if len(m.Backends) != 1 || loc.Backend() != m.Backends[0].Key {
				t.Fatalf("backends %+v, location backend %q", m.Backends, loc.Backend())
			}
			be := m.Backends[0]
			if !reflect.DeepEqual(be.External, tc.want) || !reflect.DeepEqual(be.Endpoints, tc.endpoints) {
				t.Fatalf("external %+v endpoints %v, want %+v %v", be.External, be.Endpoints, tc.want, tc.endpoints)
			}
		})
	}
}

// TestExternalNameNotForStreams: a tcp-services entry naming an
// ExternalName Service is refused; its stream endpoints would need a
// reload per change.
func TestExternalNameNotForStreams(t *testing.T) {
	ext := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ext"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com", Ports: []corev1.ServicePort{{Port: 5432}}}}
	idx := newServiceIndex([]*corev1.Service{ext}, nil, nil, false)
	_, err := idx.resolveProtocol("default", &networkingv1.IngressServiceBackend{Name: "ext", Port: networkingv1.ServiceBackendPort{Number: 5432}}, corev1.ProtocolTCP)
	if err == nil || !strings.Contains(err.Error(), "ExternalName") {
		t.Fatalf("stream resolve: %v, want an ExternalName refusal", err)
	}
}
