package build

import (
	"bytes"
	"github.com/causeway/causeway/internal/model"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestDroppedEndpointsAreAProblemOnTheService(t *testing.T) {
	for _, tc := range []struct {
		name     string
		slices   func() []*discoveryv1.EndpointSlice
		want     []model.Endpoint
		problem  []string // substrings of the one model.Problem; nil: no model.Problem
		no503Msg bool
	}{
		{
			name: "valid, not-ready and terminating addresses are not drops",
			slices: func() []*discoveryv1.EndpointSlice {
				return []*discoveryv1.EndpointSlice{slice("default", "web", "http", 8080,
					ep{addr: "10.0.0.1"}, ep{addr: "10.0.0.2", ready: ptr.To(false)}, ep{addr: "10.0.0.3", terminating: ptr.To(true)})}
			},
			want: []model.Endpoint{{Address: "10.0.0.1", Port: 8080}},
		},
		{
			name: "unusable addresses are counted once per Service with examples",
			slices: func() []*discoveryv1.EndpointSlice {
				return []*discoveryv1.EndpointSlice{slice("default", "web", "http", 8080,
					ep{addr: "10.0.0.1"}, ep{addr: "not-an-ip"}, ep{addr: "fe80::1%eth0"}, ep{addr: "2001:db8::1"},
					ep{addr: "10.0.0.300", ready: ptr.To(false)}, ep{addr: "bad;address"})}
			},
			want:    []model.Endpoint{{Address: "10.0.0.1", Port: 8080}},
			problem: []string{"5 EndpointSlice address(es)", `"10.0.0.300" in EndpointSlice web-abc (not an IP address)`, "and 2 more"},
		},
		{
			name: "nothing usable left answers 503 and says so",
			slices: func() []*discoveryv1.EndpointSlice {
				return []*discoveryv1.EndpointSlice{slice("default", "web", "http", 8080, ep{addr: "10.0.0.1.5"})}
			},
			problem: []string{"1 EndpointSlice address(es)", "port 80 has no usable endpoint left, so its paths answer 503"},
		},
		{
			name: "IPv4 address in an IPv6 slice",
			slices: func() []*discoveryv1.EndpointSlice {
				es := slice("default", "web", "http", 8080, ep{addr: "10.0.0.1"}, ep{addr: "2001:db8::2"})
				es.AddressType = discoveryv1.AddressTypeIPv6
				return []*discoveryv1.EndpointSlice{es}
			},
			want:    []model.Endpoint{{Address: "2001:db8::2", Port: 8080}},
			problem: []string{`"10.0.0.1" in EndpointSlice web-abc (not an IPv6 address)`},
		},
		{
			name: "FQDN slices are not supported",
			slices: func() []*discoveryv1.EndpointSlice {
				es := slice("default", "web", "http", 8080, ep{addr: "backend.example.com"})
				es.AddressType = discoveryv1.AddressTypeFQDN
				return []*discoveryv1.EndpointSlice{es, slice("default", "web", "http", 8080, ep{addr: "10.0.0.1"})}
			},
			want:    []model.Endpoint{{Address: "10.0.0.1", Port: 8080}},
			problem: []string{`addressType "FQDN" is not supported`},
		},
		{
			name: "a port without a number drops the slice's addresses",
			slices: func() []*discoveryv1.EndpointSlice {
				es := slice("default", "web", "http", 8080, ep{addr: "10.0.0.1"})
				es.Ports[0].Port = nil
				return []*discoveryv1.EndpointSlice{es}
			},
			problem: []string{`port "http" has no number`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(0)
			s.Services = append(s.Services, service("default", "web", 80, "http"))
			s.Services[0].UID = "uid-web"
			s.EndpointSlices = tc.slices()
			s.Ingresses = append(s.Ingresses, mkIngress("default", "web", 0, rule("a.com", path("/", "Prefix", "web", 80))))
			m, problems := Build(s, testOpts)
			if got := m.Backends[0].Endpoints; !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("endpoints = %v, want %v", got, tc.want)
			}
			if tc.problem == nil {
				if len(problems) != 0 {
					t.Fatalf("problems = %v, want none", problems)
				}
				return
			}
			if len(problems) != 1 {
				t.Fatalf("problems = %v, want one", problems)
			}
			p := problems[0]
			if p.Object != (model.ObjectRef{Kind: "Service", Namespace: "default", Name: "web", UID: "uid-web"}) || p.Reason != model.ReasonDroppedEndpoints || p.Rejected {
				t.Fatalf("problem = %v, want DroppedEndpoints on Service default/web", p)
			}
			for _, want := range tc.problem {
				if !strings.Contains(p.Message, want) {
					t.Fatalf("message %q does not contain %q", p.Message, want)
				}
			}
		})
	}
}

func TestTLSChainIsBounded(t *testing.T) {
	crt, key := selfSigned(t, "a.com")
	for _, tc := range []struct {
		name   string
		chain  []byte
		reason string
		naming string
	}{
		{"ten certificates are accepted", bytes.Repeat(crt, model.MaxChainCerts), "", ""},
		{"eleven certificates are refused", bytes.Repeat(crt, model.MaxChainCerts+1), model.ReasonInvalidSecret, "11 certificates"},
		// The 3 MB chain of the bug report, scaled: text around PEM blocks
		// is legal, so size is bounded on its own.
		{"more than 64 KiB of PEM is refused", append(append([]byte{}, crt...), bytes.Repeat([]byte("# padding\n"), 7000)...),
			model.ReasonInvalidSecret, "more than 65536"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(1)
			s.Secrets = append(s.Secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a-tls"},
				Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": tc.chain, "tls.key": key}})
			ing := mkIngress("default", "web", 0, rule("a.com", path("/", "Prefix", svcName(0), 80)))
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"a.com"}, SecretName: "a-tls"}}
			s.Ingresses = append(s.Ingresses, ing)
			m, problems := Build(s, testOpts)
			srv := server(m, "a.com")
			if tc.reason == "" {
				if len(problems) != 0 || srv.TLS.Secret != "default/a-tls" {
					t.Fatalf("problems %v, TLS %+v: want the secret served", problems, srv.TLS)
				}
				return
			}
			if len(problems) != 1 || problems[0].Reason != tc.reason || problems[0].Object.Name != "web" ||
				!strings.Contains(problems[0].Message, tc.naming) || !strings.Contains(problems[0].Message, "default certificate") {
				t.Fatalf("problems = %v, want %s on the Ingress naming %q", problems, tc.reason, tc.naming)
			}
			if srv.TLS == nil || srv.TLS.Secret != "" || len(m.Secrets) != 0 {
				t.Fatalf("TLS = %+v, secrets %v: want the default certificate", srv.TLS, m.Secrets)
			}
		})
	}
}

// A collision Problem says "older" only when it is true.
func TestCollisionMessageExplainsTheRanking(t *testing.T) {
	for _, tc := range []struct {
		name       string
		youngAge   int
		noTime     bool
		loser      string
		wantPhrase string
	}{
		{"different ages", 10, false, "b", "is already served by Ingress default/a, which is older"},
		{"same timestamp", 0, false, "a", "is already served by Ingress default/b, which ranks first: both have the same creationTimestamp, so the greater namespace/name wins"},
		{"no timestamps (files source)", 0, true, "a", "is already served by Ingress default/b, which ranks first: neither has a creationTimestamp, so the greater namespace/name wins"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(2)
			a := mkIngress("default", "a", 0, rule("a.com", path("/", "Prefix", svcName(0), 80)))
			b := mkIngress("default", "b", tc.youngAge, rule("a.com", path("/", "Prefix", svcName(1), 80)))
			if tc.noTime {
				a.CreationTimestamp, b.CreationTimestamp = metav1.Time{}, metav1.Time{}
				a.UID, b.UID = "", ""
			}
			s.Ingresses = append(s.Ingresses, b, a)
			_, problems := Build(s, testOpts)
			if len(problems) != 1 || problems[0].Object.Name != tc.loser || !strings.Contains(problems[0].Message, tc.wantPhrase) {
				t.Fatalf("problems = %v, want a Collision on %s saying %q", problems, tc.loser, tc.wantPhrase)
			}
		})
	}
}
