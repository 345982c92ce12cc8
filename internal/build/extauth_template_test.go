package build

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
)

// TestAuthURLTemplates: what the build decides about auth URLs with
// variables. $host in a rule without host would let the client pick the
// server that decides, so those paths close; $escaped_request_uri needs
// the Lua data plane.
func TestAuthURLTemplates(t *testing.T) {
	const self = "https://$host/oauth2/auth"
	const selfOut = "https://${host}/oauth2/auth"
	const signin = "https://$host/oauth2/start?rd=$escaped_request_uri"
	for _, tc := range []struct {
		name     string
		cm       map[string]string
		ann      map[string]string
		host     string // the rule's host; "" for none
		noLua    bool
		want     string // the auth URL, "" for none, "503" for closed
		signin   string // the sign-in URL kept
		problems []string
	}{
		{"$host in a named rule", nil, map[string]string{"auth-url": self, "auth-signin": signin}, "a.com", false, selfOut,
			"https://${host}/oauth2/start?rd=${escaped_request_uri}", nil},
		{"$host in a rule without host closes", nil, map[string]string{"auth-url": self}, "", false, "503", "",
			[]string{"auth-url names $host"}},
		{"a literal host in a rule without host", nil, map[string]string{"auth-url": "http://auth.example.com/?u=$escaped_request_uri"}, "", false,
			"http://auth.example.com/?u=${escaped_request_uri}", "", nil},
		{"global $host in a named rule", map[string]string{"global-auth-url": self}, nil, "a.com", false, selfOut, "", nil},
		{"global $host in a rule without host closes", map[string]string{"global-auth-url": self}, nil, "", false, "503", "",
			[]string{"global-auth-url names $host"}},
		{"global $host opted out", map[string]string{"global-auth-url": self}, map[string]string{"enable-global-auth": "false"}, "", false, "", "", nil},
		{"$escaped_request_uri in auth-url without Lua closes", nil,
			map[string]string{"auth-url": "http://auth.example.com/?u=$escaped_request_uri"}, "a.com", true, "503", "",
			[]string{"auth-url: $escaped_request_uri is computed by the Lua data plane"}},
		{"$escaped_request_uri in auth-signin without Lua is dropped", nil, map[string]string{"auth-url": self, "auth-signin": signin}, "a.com", true,
			selfOut, "", []string{"auth-signin: $escaped_request_uri is computed by the Lua data plane"}},
		{"other variables need no Lua", nil, map[string]string{"auth-url": self, "auth-signin": "https://$host/start?rd=$request_uri"}, "a.com", true,
			selfOut, "https://${host}/start?rd=${request_uri}", nil},
		{"global $escaped_request_uri without Lua closes", map[string]string{"global-auth-url": "http://a.example/?u=$escaped_request_uri"}, nil,
			"a.com", true, "503", "", []string{`"global-auth-url": $escaped_request_uri`}},
		{"global sign-in with $escaped_request_uri without Lua is dropped", map[string]string{"global-auth-url": self, "global-auth-signin": signin}, nil,
			"a.com", true, selfOut, "", []string{`"global-auth-signin": $escaped_request_uri`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(1)
			ing := mkIngress("default", "web", 0, rule(tc.host, path("/", "Prefix", svcName(0), 80)))
			ing.Annotations = map[string]string{}
			for k, v := range tc.ann {
				ing.Annotations["nginx.ingress.kubernetes.io/"+k] = v
			}
			s.Ingresses = append(s.Ingresses, ing)
			if tc.cm != nil {
				s.ConfigMaps = append(s.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"}, Data: tc.cm})
			}
			opts := testOpts
			opts.LuaAvailable = !tc.noLua
			m, problems := Build(s, opts)
			l := server(m, tc.host).Match("/")
			var got, gotSignin string
			switch {
			case l.Action.Return != nil:
				got = "503"
			case l.Policy != nil && l.Policy.ExternalAuth != nil:
				got, gotSignin = l.Policy.ExternalAuth.URL, l.Policy.ExternalAuth.SigninURL
			}
			if got != tc.want || gotSignin != tc.signin {
				t.Fatalf("auth = %q, sign-in %q; want %q, %q", got, gotSignin, tc.want, tc.signin)
			}
			if len(problems) != len(tc.problems) {
				t.Fatalf("problems %v, want %d", problems, len(tc.problems))
			}
			for i, p := range problems {
				if !strings.Contains(p.Message, tc.problems[i]) {
					t.Errorf("problem %q, want one with %q", p.Message, tc.problems[i])
				}
			}
		})
	}
}

// TestAuthURLTemplateDefaultBackend: an Ingress's defaultBackend answers
// its hosts and the unknown ones; with $host authentication only the
// catch-all server's copy closes.
func TestAuthURLTemplateDefaultBackend(t *testing.T) {
	s := world(1)
	ing := mkIngress("default", "web", 0, rule("a.com", path("/x", "Prefix", svcName(0), 80)))
	ing.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svcName(0),
		Port: networkingv1.ServiceBackendPort{Number: 80}}}
	ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/auth-url": "https://$host/oauth2/auth"}
	s.Ingresses = append(s.Ingresses, ing)
	m, problems := Build(s, testOpts)
	if d := server(m, "a.com").Default; d == nil || d.Policy == nil || d.Policy.ExternalAuth == nil {
		t.Fatalf("a.com's default: %+v, want it authenticated", d)
	}
	if d := server(m, "").Default; d == nil || d.Action.Return == nil || d.Action.Return.Status != 503 {
		t.Fatalf("the catch-all default: %+v, want 503", d)
	}
	if len(problems) != 1 || problems[0].Reason != model.ReasonInvalidAnnotation {
		t.Fatalf("problems %v, want one InvalidAnnotation", problems)
	}
}
