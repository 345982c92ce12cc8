package build

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
)

// TestEqualPoliciesShared: Ingresses whose annotations resolve to equal
// policies share one (internPolicy), locations of another policy do not,
// and a location's own copy (global authentication) is shared with the
// equal copies of other Ingresses, not with its Ingress's policy.
func TestEqualPoliciesShared(t *testing.T) {
	s := world(3)
	cors := map[string]string{"nginx.ingress.kubernetes.io/enable-cors": "true", "nginx.ingress.kubernetes.io/proxy-body-size": "8m"}
	other := map[string]string{"nginx.ingress.kubernetes.io/enable-cors": "true", "nginx.ingress.kubernetes.io/proxy-body-size": "9m"}
	for i, c := range []struct {
		host string
		ann  map[string]string
	}{{"a.com", cors}, {"b.com", cors}, {"c.com", other}} {
		ing := mkIngress("default", c.host, i, rule(c.host, path("/", "Prefix", svcName(i), 80), path("/x", "Prefix", svcName(i), 80)))
		ing.Annotations = c.ann
		s.Ingresses = append(s.Ingresses, ing)
	}
	m, problems := Build(s, testOpts)
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	pol := func(host, p string) *model.Policy {
		t.Helper()
		l := server(m, host).Match(p)
		if l == nil || l.Policy == nil {
			t.Fatalf("%s%s: no location or no policy: %+v", host, p, l)
		}
		return l.Policy
	}
	if pol("a.com", "/") != pol("b.com", "/") || pol("a.com", "/") != pol("b.com", "/x") {
		t.Error("equal policies of two Ingresses are not one")
	}
	if pol("a.com", "/") == pol("c.com", "/") {
		t.Error("policies that differ (proxy-body-size) are one")
	}

	// Global authentication gives each location a copy of its Ingress's
	// policy: equal copies are one too, and not the Ingress's own.
	s.ConfigMaps = append(s.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"},
		Data: map[string]string{"global-auth-url": "http://auth.example/check"}})
	if m, problems = Build(s, testOpts); len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	if a := pol("a.com", "/"); a.ExternalAuth == nil || a != pol("b.com", "/x") || a == pol("c.com", "/") {
		t.Errorf("global authentication's copies: a.com/ %p (auth %v), b.com/x %p, c.com/ %p; want the first two one, the third apart",
			a, a.ExternalAuth != nil, pol("b.com", "/x"), pol("c.com", "/"))
	}
}
