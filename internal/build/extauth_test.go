package build

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
)

// TestGlobalAuth applies the ConfigMap's global-auth-url as ingress-nginx
// does: to locations without an auth-url of their own, not to Ingresses
// with enable-global-auth "false", not below no-auth-locations; an
// invalid global-auth-url closes every path.
func TestGlobalAuth(t *testing.T) {
	const own, global = "http://own.example.com/", "http://global.example.com/check"
	for _, tc := range []struct {
		name   string
		cm     map[string]string
		ann    map[string]string
		path   string
		want   string // the auth URL, "" for none, "503" for closed
		global bool
	}{
		{"no global auth", nil, nil, "/", "", false},
		{"global auth applies", map[string]string{"global-auth-url": global}, nil, "/", global, true},
		{"an own auth-url wins", map[string]string{"global-auth-url": global}, map[string]string{"auth-url": own}, "/", own, false},
		{"enable-global-auth false", map[string]string{"global-auth-url": global}, map[string]string{"enable-global-auth": "false"}, "/", "", false},
		{"enable-global-auth invalid keeps it", map[string]string{"global-auth-url": global}, map[string]string{"enable-global-auth": "no"}, "/", global, true},
		{"default no-auth-locations", map[string]string{"global-auth-url": global}, nil, "/.well-known/acme-challenge", "", false},
		{"own no-auth-locations", map[string]string{"global-auth-url": global, "no-auth-locations": "/public, /health"}, nil, "/public/x", "", false},
		{"own no-auth-locations replace the default", map[string]string{"global-auth-url": global, "no-auth-locations": "/public"}, nil,
			"/.well-known/acme-challenge", global, true},
		{"invalid global-auth-url closes", map[string]string{"global-auth-url": "http://$host:8080/auth"}, nil, "/", "503", false},
		{"invalid global-auth-method closes", map[string]string{"global-auth-url": global, "global-auth-method": "get"}, nil, "/", "503", false},
		{"companions alone do nothing", map[string]string{"global-auth-method": "GET"}, nil, "/", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(1)
			ing := mkIngress("default", "web", 0, rule("a.com", path(tc.path, "Prefix", svcName(0), 80)))
			ing.Annotations = map[string]string{}
			for k, v := range tc.ann {
				ing.Annotations["nginx.ingress.kubernetes.io/"+k] = v
			}
			s.Ingresses = append(s.Ingresses, ing)
			if tc.cm != nil {
				s.ConfigMaps = append(s.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"}, Data: tc.cm})
			}
			m, _ := Build(s, testOpts)
			l := server(m, "a.com").Match(tc.path)
			var got string
			switch {
			case l.Action.Return != nil:
				got = "503"
			case l.Policy != nil && l.Policy.ExternalAuth != nil:
				got = l.Policy.ExternalAuth.URL
			}
			if got != tc.want {
				t.Fatalf("auth = %q, want %q (location %+v)", got, tc.want, l)
			}
			if tc.global && l.Policy.ExternalAuth != m.Config.GlobalAuth {
				t.Fatalf("the location's auth is not the ConfigMap's")
			}
		})
	}
}

// TestAuthProxySetHeaders reads auth-proxy-set-headers' ConfigMap into the
// location's external authentication; a missing ConfigMap or an entry
// that cannot be sent closes the paths.
func TestAuthProxySetHeaders(t *testing.T) {
	for _, tc := range []struct {
		name string
		data map[string]string // nil: no ConfigMap
		want []model.Header    // nil: closed
	}{
		{"headers", map[string]string{"X-Auth-Required-Group": "admins", "X-Tenant": "shop"},
			[]model.Header{{Name: "X-Auth-Required-Group", Value: "admins"}, {Name: "X-Tenant", Value: "shop"}}},
		{"missing ConfigMap", nil, nil},
		{"a variable", map[string]string{"X-Tenant": "$host"}, nil},
		{"a header the subrequest sets", map[string]string{"x-original-url": "https://evil.example/"}, nil},
		{"a bad name", map[string]string{"X Tenant": "shop"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(1)
			ing := mkIngress("default", "web", 0, rule("a.com", path("/", "Prefix", svcName(0), 80)))
			ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/auth-url": "http://auth.example.com/",
				"nginx.ingress.kubernetes.io/auth-proxy-set-headers": "auth-headers"}
			s.Ingresses = append(s.Ingresses, ing)
			if tc.data != nil {
				s.ConfigMaps = append(s.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "auth-headers"}, Data: tc.data})
			}
			m, problems := Build(s, testOpts)
			l := server(m, "a.com").Match("/")
			if tc.want == nil {
				if l.Action.Return == nil || l.Action.Return.Status != 503 || len(problems) != 1 ||
					!strings.Contains(problems[0].Message, "auth-proxy-set-headers") {
					t.Fatalf("location %+v, problems %v; want 503 and a Problem naming the annotation", l, problems)
				}
				return
			}
			if len(problems) != 0 || l.Policy == nil || !reflect.DeepEqual(l.Policy.ExternalAuth.ProxySetHeaders, tc.want) {
				t.Fatalf("location %+v, problems %v; want headers %v", l, problems, tc.want)
			}
		})
	}
}

// TestGlobalAuthConfigMapExcluded: when nginx refuses what the ConfigMap
// renders (global-auth-url's host does not resolve) and the controller
// falls back to the defaults, every path closes instead of losing its
// authentication.
func TestGlobalAuthConfigMapExcluded(t *testing.T) {
	s := world(1)
	s.Ingresses = append(s.Ingresses, mkIngress("default", "web", 0, rule("a.com", path("/", "Prefix", svcName(0), 80))))
	s.ConfigMaps = append(s.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config", UID: "cm"},
		Data: map[string]string{"global-auth-url": "http://no-such-host.invalid/auth"}})
	opts := testOpts
	opts.Excluded = map[string]string{model.ObjectRef{Kind: "ConfigMap", Namespace: "causeway", Name: "config", UID: "cm"}.Key(): "nginx refused it"}
	m, problems := Build(s, opts)
	if l := server(m, "a.com").Match("/"); l.Action.Return == nil || l.Action.Return.Status != 503 {
		t.Fatalf("location %+v, want 503", l)
	}
	if len(problems) == 0 || !strings.Contains(problems[len(problems)-1].Message, "global-auth-url") {
		t.Fatalf("problems %v, want one naming global-auth-url", problems)
	}
	// Without global-auth-url, excluding the ConfigMap closes nothing.
	s.ConfigMaps[0].Data = map[string]string{"ssl-ciphers": "NOPE"}
	m, _ = Build(s, opts)
	if l := server(m, "a.com").Match("/"); l.Action.Return != nil {
		t.Fatalf("location %+v, want it served", l)
	}
}
