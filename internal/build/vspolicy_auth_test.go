package build

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TestVirtualServerExternalAuth: an externalAuth Policy asks its Service's
// backend; its sign-in path is proxied to the Service unauthenticated; a
// Service or CA that cannot be used makes the routes answer 500.
func TestVirtualServerExternalAuth(t *testing.T) {
	ca, _ := selfSigned(t, "auth-ca")
	caSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ca"}, Type: "nginx.org/ca",
		Data: map[string][]byte{"ca.crt": ca}}
	for _, tc := range []struct {
		name    string
		auth    nicv1.ExternalAuth
		secrets []*corev1.Secret
		want    *model.ExternalAuth // on /a; nil: /a answers 500
		signin  string              // the sign-in location's path, proxied to the Service
		reasons []string            // on the VirtualServer
	}{
		{name: "plain", auth: nicv1.ExternalAuth{AuthServiceName: "svc-c", AuthURI: "/check"},
			want: &model.ExternalAuth{Backend: "default/svc-c/80", URI: "/check", RedirectParam: "rd"}},
		{name: "sign-in", auth: nicv1.ExternalAuth{AuthServiceName: "svc-c", AuthURI: "/", AuthSigninURI: "/oauth2/signin"},
			want:   &model.ExternalAuth{Backend: "default/svc-c/80", URI: "/", SigninURI: "/oauth2/signin", RedirectParam: "rd"},
			signin: "/oauth2"},
		{name: "verified TLS", auth: nicv1.ExternalAuth{AuthServiceName: "svc-c", AuthServicePorts: []int{80}, AuthURI: "/",
			SSLEnabled: true, SSLVerify: true, TrustedCertSecret: "ca", SNIName: "auth.test"}, secrets: []*corev1.Secret{caSecret},
			want: &model.ExternalAuth{Backend: "default/svc-c/80", URI: "/", RedirectParam: "rd",
				TLS: &model.UpstreamTLS{CASecret: "default/ca", Verify: true, VerifyDepth: 1, Name: "auth.test", ServerName: true}}},
		{name: "missing Service", auth: nicv1.ExternalAuth{AuthServiceName: "nope", AuthURI: "/"},
			reasons: []string{model.ReasonMissingService, model.ReasonMissingService}},
		{name: "missing port", auth: nicv1.ExternalAuth{AuthServiceName: "svc-c", AuthServicePorts: []int{81}, AuthURI: "/"},
			reasons: []string{model.ReasonMissingService, model.ReasonMissingService}},
		{name: "missing CA", auth: nicv1.ExternalAuth{AuthServiceName: "svc-c", AuthServicePorts: []int{80}, AuthURI: "/",
			SSLEnabled: true, SSLVerify: true, TrustedCertSecret: "ca"},
			reasons: []string{model.ReasonMissingSecret, model.ReasonMissingSecret}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(3)
			snap.Secrets = tc.secrets
			snap.Policies = []*nicv1.Policy{mkPolicy("auth", nicv1.PolicySpec{ExternalAuth: &tc.auth})}
			vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/a", "a"), pass("/b", "b"))
			vs.Spec.Policies = []nicv1.PolicyReference{{Name: "auth"}}
			snap.VirtualServers = []*nicv1.VirtualServer{vs}
			m, problems := Build(snap, testOpts)
			srv := server(m, "cafe.test")
			a := srv.Match("/a")
			if tc.want == nil {
				if a.Action.Return == nil || a.Action.Return.Status != 500 {
					t.Errorf("/a: %+v, want 500", a.Action)
				}
			} else {
				got := a.Policy.ExternalAuth
				if got == nil || got.Backend != tc.want.Backend || got.URI != tc.want.URI || got.SigninURI != tc.want.SigninURI ||
					got.RedirectParam != tc.want.RedirectParam || (got.TLS == nil) != (tc.want.TLS == nil) ||
					got.TLS != nil && (got.TLS.CASecret != tc.want.TLS.CASecret || got.TLS.Name != tc.want.TLS.Name || !got.TLS.Verify) {
					t.Errorf("/a auth %+v, want %+v", got, tc.want)
				}
				if !slices.ContainsFunc(m.Backends, func(b *model.Backend) bool { return b.Key == tc.want.Backend }) {
					t.Errorf("backend %s not in the model", tc.want.Backend)
				}
				if tc.want.TLS != nil && !slices.ContainsFunc(m.ProxySecrets, func(s *model.ProxySecret) bool { return s.Key() == "default/ca" }) {
					t.Error("the CA Secret is not in the model")
				}
			}
			var signin []string
			for _, l := range srv.Locations {
				if l.Match.Path != "/a" && l.Match.Path != "/b" {
					signin = append(signin, l.Match.Path)
					if l.Backend() != "default/svc-c/80" || l.Policy != nil && l.Policy.ExternalAuth != nil {
						t.Errorf("sign-in location %+v", l)
					}
				}
			}
			if want := []string{tc.signin}; tc.signin != "" && !slices.Equal(signin, want) || tc.signin == "" && len(signin) > 0 {
				t.Errorf("other locations %v, want %q", signin, tc.signin)
			}
			if got := reasonsOf(problems, "VirtualServer", "cafe"); !slices.Equal(got, tc.reasons) {
				t.Errorf("problems %v, want reasons %v", problems, tc.reasons)
			}
		})
	}
}
