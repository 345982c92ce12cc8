package build

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

// TestVirtualServerTLSPolicies: ingressMTLS is the server's client
// certificate check (the VirtualServer's own Policies, with TLS), and
// egressMTLS the route's TLS client towards its upstream; a Policy that
// cannot be enforced makes its routes answer 500.
func TestVirtualServerTLSPolicies(t *testing.T) {
	ca, _ := selfSigned(t, "client-ca")
	crt, key := selfSigned(t, "client")
	secret := func(name string, typ corev1.SecretType, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Type: typ, Data: data}
	}
	caSecret := secret("ca", "nginx.org/ca", map[string][]byte{"ca.crt": ca})
	tlsSecret := secret("client", corev1.SecretTypeTLS, map[string][]byte{"tls.crt": crt, "tls.key": key})
	mtls := nicv1.PolicySpec{IngressMTLS: &nicv1.IngressMTLS{ClientCertSecret: "ca", VerifyDepth: ptr.To(2)}}
	egress := nicv1.PolicySpec{EgressMTLS: &nicv1.EgressMTLS{TLSSecret: "client", TrustedCertSecret: "ca", VerifyServer: true}}
	for _, tc := range []struct {
		name     string
		spec     nicv1.PolicySpec
		route    bool // the route names the Policy, not the VirtualServer
		noTLS    bool
		plain    bool // upstreams without tls.enable
		secrets  []*corev1.Secret
		status   int // of route /a; 0: proxied
		client   *model.ClientTLS
		upstream *model.UpstreamTLS
		reasons  []string // on the VirtualServer: one per route for a Policy of the VirtualServer's
	}{
		{name: "ingressMTLS", spec: mtls, secrets: []*corev1.Secret{caSecret},
			client: &model.ClientTLS{Secret: "default/ca", Verify: model.VerifyOn, Depth: 2}},
		{name: "ingressMTLS without TLS", spec: mtls, noTLS: true, secrets: []*corev1.Secret{caSecret}, status: 500,
			reasons: []string{model.ReasonInvalid}},
		{name: "ingressMTLS without its Secret", spec: mtls, status: 500, reasons: []string{model.ReasonMissingSecret}},
		{name: "ingressMTLS with a Secret of another type", spec: mtls, status: 500,
			secrets: []*corev1.Secret{secret("ca", corev1.SecretTypeOpaque, map[string][]byte{"ca.crt": ca})}, reasons: []string{model.ReasonInvalidSecret}},
		{name: "ingressMTLS with a CA Secret without ca.crt", spec: mtls, status: 500,
			secrets: []*corev1.Secret{secret("ca", "nginx.org/ca", map[string][]byte{"ca.crl": ca})}, reasons: []string{model.ReasonInvalidSecret}},
		{name: "ingressMTLS on a route", spec: mtls, route: true, secrets: []*corev1.Secret{caSecret}, status: 500,
			reasons: []string{model.ReasonInvalid}},
		{name: "egressMTLS", spec: egress, secrets: []*corev1.Secret{caSecret, tlsSecret},
			upstream: &model.UpstreamTLS{Secret: "default/client", CASecret: "default/ca", Verify: true, VerifyDepth: 1}},
		{name: "egressMTLS on a route", spec: egress, route: true, secrets: []*corev1.Secret{caSecret, tlsSecret},
			upstream: &model.UpstreamTLS{Secret: "default/client", CASecret: "default/ca", Verify: true, VerifyDepth: 1}},
		{name: "egressMTLS to a plain upstream has no effect", spec: egress, plain: true, secrets: []*corev1.Secret{caSecret, tlsSecret},
			upstream: &model.UpstreamTLS{Secret: "default/client", CASecret: "default/ca", Verify: true, VerifyDepth: 1},
			reasons:  []string{model.ReasonUnsupported, model.ReasonUnsupported}},
		{name: "egressMTLS without its client Secret", spec: egress, secrets: []*corev1.Secret{caSecret}, status: 500,
			reasons: []string{model.ReasonMissingSecret, model.ReasonMissingSecret}},
		{name: "egressMTLS with a CA of the wrong type", spec: egress, status: 500,
			secrets: []*corev1.Secret{tlsSecret, secret("ca", corev1.SecretTypeOpaque, map[string][]byte{"ca.crt": ca})}, reasons: []string{model.ReasonInvalidSecret, model.ReasonInvalidSecret}},
		{name: "jwt needs Plus", spec: nicv1.PolicySpec{JWT: &nicv1.JWTAuth{Secret: "jwk"}}, status: 500, reasons: []string{model.ReasonInvalid, model.ReasonInvalid}},
		{name: "oidc needs Plus", spec: nicv1.PolicySpec{OIDC: &nicv1.OIDC{}}, status: 500, reasons: []string{model.ReasonInvalid, model.ReasonInvalid}},
		{name: "waf needs Plus", spec: nicv1.PolicySpec{WAF: &nicv1.WAF{Enable: true}}, status: 500, reasons: []string{model.ReasonInvalid, model.ReasonInvalid}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(2)
			snap.Secrets = tc.secrets
			snap.Policies = []*nicv1.Policy{mkPolicy("pol", tc.spec)}
			vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/a", "a"), pass("/b", "b"))
			if !tc.noTLS {
				vs.Spec.TLS = &nicv1.TLS{}
			}
			for i := range vs.Spec.Upstreams {
				vs.Spec.Upstreams[i].TLS.Enable = !tc.plain
			}
			ref := []nicv1.PolicyReference{{Name: "pol"}}
			if tc.route {
				vs.Spec.Routes[0].Policies = ref
			} else {
				vs.Spec.Policies = ref
			}
			snap.VirtualServers = []*nicv1.VirtualServer{vs}
			m, problems := Build(snap, testOpts)
			srv := server(m, "cafe.test")
			a := srv.Match("/a")
			switch {
			case tc.status != 0:
				if a.Action.Return == nil || a.Action.Return.Status != tc.status {
					t.Errorf("/a: %+v, want %d", a.Action, tc.status)
				}
			case a.Backend() == "":
				t.Errorf("/a: %+v, want proxied", a.Action)
			}
			if b := srv.Match("/b"); (tc.status != 0 && !tc.route) != (b.Action.Return != nil) {
				t.Errorf("/b: %+v", b.Action)
			}
			if tc.client != nil {
				tc.client.Source = nic.Ref(vs)
			}
			if !reflect.DeepEqual(srv.ClientTLS, tc.client) {
				t.Errorf("client TLS %+v, want %+v", srv.ClientTLS, tc.client)
			}
			var up *model.UpstreamTLS
			if a.Policy != nil {
				up = a.Policy.UpstreamTLS
			}
			if (up == nil) != (tc.upstream == nil) || up != nil && !reflect.DeepEqual(*up, *tc.upstream) {
				t.Errorf("/a upstream TLS %+v, want %+v", up, tc.upstream)
			}
			if tc.upstream != nil {
				var keys []string
				for _, s := range m.ProxySecrets {
					keys = append(keys, s.Key())
				}
				if !slices.Equal(keys, []string{"default/ca", "default/client"}) {
					t.Errorf("proxy secrets %v", keys)
				}
			}
			if got := reasonsOf(problems, "VirtualServer", "cafe"); !slices.Equal(got, tc.reasons) {
				t.Errorf("problems %v, want reasons %v", problems, tc.reasons)
			}
		})
	}
}
