package equivalence

import (
	"fmt"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/migrate/togateway"
)

// TestEveryRuleCovers: every rule whose findings need reading says which
// differences they explain, and covers names only rules.
func TestEveryRuleCovers(t *testing.T) {
	ids := map[string]bool{}
	for _, r := range togateway.Rules() {
		ids[r.ID] = true
		if _, ok := covers[r.ID]; r.Outcome != togateway.Converted && !ok {
			t.Errorf("rule %s (%s) explains no difference: add it to covers", r.ID, r.Outcome)
		}
	}
	for id := range covers {
		if !ids[id] {
			t.Errorf("covers names %q, which is no rule", id)
		}
	}
}

func ingress(name, host string, annotations map[string]string, paths ...string) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Annotations: annotations},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: host,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{}}}}}}
	for _, p := range paths {
		ing.Spec.Rules[0].HTTP.Paths = append(ing.Spec.Rules[0].HTTP.Paths, networkingv1.HTTPIngressPath{
			Path: p, PathType: ptr.To(networkingv1.PathTypePrefix),
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}}}})
	}
	return ing
}

// TestCheck: the report's comparison for an exact conversion, one the
// report explains, and one whose objects were changed behind the
// converter's back (what a converter bug looks like).
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ing    *networkingv1.Ingress
		tamper func(*togateway.Output)
		want   []string
		// equivalent, explained, unexpected
		counts [3]int
	}{
		{name: "exact", ing: ingress("web", "web.example.com", nil, "/", "/api"),
			want:   []string{"equivalence: equivalent (8 requests answered alike)"},
			counts: [3]int{1, 0, 0}},
		{name: "CORS any origin with credentials is approximated",
			ing: ingress("api", "api.example.com", map[string]string{"nginx.ingress.kubernetes.io/enable-cors": "true"}, "/"),
			want: []string{"differs policy.CORS at http://api.example.com/ (and 2 more): reported by cors-any-origin-credentials nginx.ingress.kubernetes.io/cors-allow-credentials",
				"Ingress: Credentials=true", "Gateway: Credentials=false"},
			counts: [3]int{0, 1, 0}},
		{name: "a backend changed behind the report", ing: ingress("web", "web.example.com", nil, "/"),
			tamper: func(o *togateway.Output) {
				o.HTTPRoutes[0].Spec.Rules[0].BackendRefs[0].Name = gwv1.ObjectName("other")
			},
			want:   []string{"differs route at http://web.example.com/ (and 2 more): UNEXPECTED", "Ingress: proxy to shop/web/80", "Gateway: return 500"},
			counts: [3]int{0, 0, 1}},
		{name: "a timeout changed behind the report",
			ing: ingress("web", "web.example.com", map[string]string{"nginx.ingress.kubernetes.io/proxy-read-timeout": "30"}, "/"),
			tamper: func(o *togateway.Output) {
				o.HTTPRoutes[0].Spec.Rules[0].Timeouts = nil
			},
			want:   []string{"differs policy.Timeouts", "reported by proxy-timeouts nginx.ingress.kubernetes.io/proxy-read-timeout"},
			counts: [3]int{0, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := togateway.Input{Ingresses: []*networkingv1.Ingress{tc.ing}}
			out, rep := togateway.Convert(in, togateway.Options{})
			if tc.tamper != nil {
				tc.tamper(&out)
			}
			Check(in, togateway.Options{}, out, &rep, nil)
			var b strings.Builder
			if err := togateway.WriteText(&b, rep); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("the report has no %q:\n%s", w, b.String())
				}
			}
			s := rep.Equivalence
			if got := [3]int{s.Equivalent, s.Explained, s.Unexpected}; got != tc.counts {
				t.Errorf("equivalent, explained, unexpected = %v, want %v:\n%s", got, tc.counts, b.String())
			}
		})
	}
}

// manyIngresses are n Ingresses of a few shapes: plain, TLS with
// redirect, rewrite, canary, CORS and timeouts.
func manyIngresses(n int) []*networkingv1.Ingress {
	var out []*networkingv1.Ingress
	for i := range n {
		name, host := fmt.Sprintf("app-%d", i), fmt.Sprintf("app-%d.example.com", i)
		var ann map[string]string
		switch i % 5 {
		case 1:
			ann = map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/$2"}
		case 2:
			ann = map[string]string{"nginx.ingress.kubernetes.io/enable-cors": "true", "nginx.ingress.kubernetes.io/proxy-read-timeout": "30"}
		case 3:
			ann = map[string]string{"nginx.ingress.kubernetes.io/canary": "true", "nginx.ingress.kubernetes.io/canary-weight": "10"}
			host = fmt.Sprintf("app-%d.example.com", i-1)
		}
		paths := []string{"/", "/api"}
		if ann["nginx.ingress.kubernetes.io/rewrite-target"] != "" {
			paths = []string{"/api(/|$)(.*)"}
		}
		ing := ingress(name, host, ann, paths...)
		if i%5 == 4 {
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: name + "-tls"}}
		}
		out = append(out, ing)
	}
	return out
}

// TestManyIngresses: 1,000 Ingresses are proven without an unexpected
// difference (BenchmarkCheck times it).
func TestManyIngresses(t *testing.T) {
	in := togateway.Input{Ingresses: manyIngresses(1000)}
	out, rep := togateway.Convert(in, togateway.Options{})
	Check(in, togateway.Options{}, out, &rep, nil)
	if s := rep.Equivalence; s.Unexpected > 0 || s.Equivalent+s.Explained != 1000 {
		t.Fatalf("summary %+v", *s)
	}
}

func BenchmarkCheck(b *testing.B) {
	in := togateway.Input{Ingresses: manyIngresses(1000)}
	out, rep := togateway.Convert(in, togateway.Options{})
	for b.Loop() {
		r := rep
		r.Ingresses = append([]togateway.IngressReport(nil), rep.Ingresses...)
		Check(in, togateway.Options{}, out, &r, nil)
	}
}
