package nic

import (
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TestExternalAuthPolicy: externalAuth, a row per rule. want is the
// translated policy; err a fragment of the Policy's rejection; problems
// fragments, one per expected Problem.
func TestExternalAuthPolicy(t *testing.T) {
	ea := func(e nicv1.ExternalAuth) nicv1.PolicySpec {
		if e.AuthServiceName == "" {
			e.AuthServiceName = "auth"
		}
		return nicv1.PolicySpec{ExternalAuth: &e}
	}
	tls := func(verify bool, name string, depth int) *model.UpstreamTLS {
		return &model.UpstreamTLS{Verify: verify, VerifyDepth: depth, Name: name, ServerName: name != "" && name != "auth.shop.svc"}
	}
	for _, tc := range []struct {
		name     string
		spec     nicv1.PolicySpec
		want     *ExternalAuth
		err      string
		problems []string
	}{
		{name: "defaults", spec: ea(nicv1.ExternalAuth{}), want: &ExternalAuth{Service: "auth", Port: 80, URI: "/"}},
		{name: "namespace/name of the Policy's namespace, a port, a URI", spec: ea(nicv1.ExternalAuth{AuthServiceName: "shop/auth",
			AuthServicePorts: []int{8080}, AuthURI: "/check"}), want: &ExternalAuth{Service: "auth", Port: 8080, URI: "/check"}},
		{name: "another namespace", spec: ea(nicv1.ExternalAuth{AuthServiceName: "other/auth"}), err: "Policy's namespace"},
		{name: "more ports: the first is asked", spec: ea(nicv1.ExternalAuth{AuthServicePorts: []int{81, 82}}),
			want: &ExternalAuth{Service: "auth", Port: 81, URI: "/"}, problems: []string{"authServicePorts"}},
		{name: "port out of range", spec: ea(nicv1.ExternalAuth{AuthServicePorts: []int{70000}}), err: "authServicePorts"},
		{name: "URI that would inject", spec: ea(nicv1.ExternalAuth{AuthURI: "/a; return 200"}), err: "authURI"},
		{name: "URI with a variable", spec: ea(nicv1.ExternalAuth{AuthURI: "/$host"}), err: "authURI"},
		{name: "sign-in with the default base", spec: ea(nicv1.ExternalAuth{AuthSigninURI: "/oauth2/signin"}),
			want: &ExternalAuth{Service: "auth", Port: 80, URI: "/", SigninURI: "/oauth2/signin", SigninBase: "/oauth2"}},
		{name: "sign-in with a base", spec: ea(nicv1.ExternalAuth{AuthSigninURI: "/login/start", AuthSigninRedirectBasePath: "/login"}),
			want: &ExternalAuth{Service: "auth", Port: 80, URI: "/", SigninURI: "/login/start", SigninBase: "/login"}},
		{name: "sign-in that would inject", spec: ea(nicv1.ExternalAuth{AuthSigninURI: "/in\"x"}), err: "authSigninURI"},
		{name: "base without sign-in", spec: ea(nicv1.ExternalAuth{AuthSigninRedirectBasePath: "/login"}),
			want: &ExternalAuth{Service: "auth", Port: 80, URI: "/"}, problems: []string{"authSigninRedirectBasePath"}},
		{name: "snippets are reported", spec: ea(nicv1.ExternalAuth{AuthSnippets: "proxy_set_header X 1;"}),
			want: &ExternalAuth{Service: "auth", Port: 80, URI: "/"}, problems: []string{"authSnippets"}},
		{name: "TLS on 443", spec: ea(nicv1.ExternalAuth{SSLEnabled: true}),
			want: &ExternalAuth{Service: "auth", Port: 443, URI: "/", TLS: tls(false, "", 1)}},
		{name: "TLS verified with SNI", spec: ea(nicv1.ExternalAuth{SSLEnabled: true, SSLVerify: true, SSLVerifyDepth: ptr.To(2),
			TrustedCertSecret: "shop/ca", SNIName: "auth.internal"}),
			want: &ExternalAuth{Service: "auth", Port: 443, URI: "/", TLS: tls(true, "auth.internal", 2), TrustedSecret: "ca"}},
		{name: "TLS verified against the Service's name", spec: ea(nicv1.ExternalAuth{SSLEnabled: true, SSLVerify: true, TrustedCertSecret: "ca"}),
			want: &ExternalAuth{Service: "auth", Port: 443, URI: "/", TLS: tls(true, "auth.shop.svc", 1), TrustedSecret: "ca"}},
		{name: "verify needs a CA", spec: ea(nicv1.ExternalAuth{SSLEnabled: true, SSLVerify: true}), err: "needs trustedCertSecret"},
		{name: "CA of another namespace", spec: ea(nicv1.ExternalAuth{SSLEnabled: true, SSLVerify: true, TrustedCertSecret: "x/ca"}), err: "trustedCertSecret"},
		{name: "bad depth", spec: ea(nicv1.ExternalAuth{SSLEnabled: true, SSLVerifyDepth: ptr.To(11)}), err: "sslVerifyDepth"},
		{name: "SNI name that would inject", spec: ea(nicv1.ExternalAuth{SSLEnabled: true, SNIName: "a;b"}), err: "sniName"},
		{name: "CA without verify is reported", spec: ea(nicv1.ExternalAuth{SSLEnabled: true, TrustedCertSecret: "ca"}),
			want: &ExternalAuth{Service: "auth", Port: 443, URI: "/", TLS: tls(false, "", 1)}, problems: []string{"trustedCertSecret"}},
		{name: "TLS fields without sslEnabled are reported", spec: ea(nicv1.ExternalAuth{SSLVerify: true, TrustedCertSecret: "ca", SNIName: "a"}),
			want: &ExternalAuth{Service: "auth", Port: 80, URI: "/"}, problems: []string{"sslVerify", "trustedCertSecret", "sniName"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := translatePolicyCase(t, tc.spec, tc.err, tc.problems)
			if out == nil {
				return
			}
			if out.Kind != "externalAuth" || !reflect.DeepEqual(out.ExternalAuth, tc.want) {
				t.Errorf("policy %s %+v (TLS %+v), want %+v (TLS %+v)", out.Kind, out.ExternalAuth, out.ExternalAuth.TLS, tc.want, tc.want.TLS)
			}
		})
	}
}
