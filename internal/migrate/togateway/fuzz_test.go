package togateway

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
)

// silent returns the annotations of ours on a converted Ingress that no
// finding names: there must be none.
func silent(ing *networkingv1.Ingress, r IngressReport) []string {
	if r.Skipped != "" || r.Rejected != "" {
		return nil
	}
	named := map[string]bool{}
	for _, f := range r.Findings {
		named[f.Input] = true
	}
	var out []string
	for k := range ing.Annotations {
		if _, _, ours := annotations.Split(k, annotations.DefaultPrefix, "Ingress"); ours && !named[k] {
			out = append(out, k)
		}
	}
	return out
}

// TestNothingSilent: in every case, each annotation of ours on a
// converted Ingress has a finding.
func TestNothingSilent(t *testing.T) {
	for _, file := range cases(t) {
		in, opts := readCase(t, file)
		_, r := Convert(in, opts)
		for _, ing := range in.Ingresses {
			for _, rep := range r.Ingresses {
				if rep.Namespace == ing.Namespace && rep.Name == ing.Name {
					if s := silent(ing, rep); len(s) > 0 {
						t.Errorf("%s: %s/%s: no finding for %v", file, ing.Namespace, ing.Name, s)
					}
				}
			}
		}
	}
}

// FuzzConvert converts an Ingress with two annotations and a path of the
// fuzzer's: Convert never panics, and never leaves an annotation without
// a finding.
func FuzzConvert(f *testing.F) {
	for _, s := range [][5]string{
		{"rewrite-target", "/$2", "use-regex", "true", "/api(/|$)(.*)"},
		{"permanent-redirect", "https://x.example/a?b#c", "permanent-redirect-code", "308", "/"},
		{"canary", "true", "canary-by-header", "X", "/"},
		{"backend-protocol", "GRPCS", "proxy-read-timeout", "5", "/pkg.Svc/Do"},
		{"enable-cors", "true", "cors-allow-origin", "*", "/a"},
		{"affinity", "cookie", "session-cookie-max-age", "10", "/"},
		{"auth-url", "http://a/", "force-ssl-redirect", "true", "/x"},
		{"upstream-vhost", "a.example:81", "x-forwarded-prefix", "/p", "/([a-z]+)/(.*)"},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4])
	}
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, path string) {
		pt := networkingv1.PathTypeImplementationSpecific
		ing := &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: "fuzz", Namespace: "ns", Annotations: map[string]string{
				annotations.DefaultPrefix + "/" + k1: v1,
				annotations.DefaultPrefix + "/" + k2: v2,
			}},
			Spec: networkingv1.IngressSpec{
				TLS: []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}, SecretName: "tls"}},
				Rules: []networkingv1.IngressRule{{Host: "a.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: &pt, Backend: networkingv1.IngressBackend{
						Service: &networkingv1.IngressServiceBackend{Name: "svc", Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
				}}}},
			},
		}
		main := ing.DeepCopy()
		main.Name, main.Annotations = "main", nil
		for _, o := range []Options{{}, {AllowInsecure: true}} {
			_, r := Convert(Input{Ingresses: []*networkingv1.Ingress{ing, main}}, o)
			for _, rep := range r.Ingresses {
				if rep.Name == "fuzz" {
					if s := silent(ing, rep); len(s) > 0 {
						t.Fatalf("no finding for %s", strings.Join(s, ", "))
					}
				}
			}
		}
	})
}
