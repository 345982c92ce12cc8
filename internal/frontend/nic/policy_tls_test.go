package nic

import (
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TestTLSPolicies: ingressMTLS and egressMTLS, a row per rule. want is
// the translated policy; err a fragment of the Policy's rejection;
// problems fragments, one per expected Problem.
func TestTLSPolicies(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     nicv1.PolicySpec
		want     *Policy
		err      string
		problems []string
	}{
		{name: "ingressMTLS defaults", spec: nicv1.PolicySpec{IngressMTLS: &nicv1.IngressMTLS{ClientCertSecret: "ca"}},
			want: &Policy{Kind: "ingressMTLS", IngressMTLS: &IngressMTLS{CASecret: "ca", Verify: model.VerifyOn, Depth: 1}}},
		{name: "ingressMTLS optional, depth 2", spec: nicv1.PolicySpec{IngressMTLS: &nicv1.IngressMTLS{ClientCertSecret: "ca",
			VerifyClient: "optional", VerifyDepth: ptr.To(2)}},
			want: &Policy{Kind: "ingressMTLS", IngressMTLS: &IngressMTLS{CASecret: "ca", Verify: model.VerifyOptional, Depth: 2}}},
		{name: "ingressMTLS needs its Secret", spec: nicv1.PolicySpec{IngressMTLS: &nicv1.IngressMTLS{}}, err: "clientCertSecret is required"},
		{name: "ingressMTLS bad verifyClient", spec: nicv1.PolicySpec{IngressMTLS: &nicv1.IngressMTLS{ClientCertSecret: "ca", VerifyClient: "yes"}},
			err: "verifyClient"},
		{name: "ingressMTLS negative depth", spec: nicv1.PolicySpec{IngressMTLS: &nicv1.IngressMTLS{ClientCertSecret: "ca", VerifyDepth: ptr.To(-1)}},
			err: "verifyDepth"},
		{name: "ingressMTLS crlFileName is reported", spec: nicv1.PolicySpec{IngressMTLS: &nicv1.IngressMTLS{ClientCertSecret: "ca", CrlFileName: "x.crl"}},
			want: &Policy{Kind: "ingressMTLS", IngressMTLS: &IngressMTLS{CASecret: "ca", Verify: model.VerifyOn, Depth: 1}}, problems: []string{"crlFileName"}},
		{name: "egressMTLS with everything", spec: nicv1.PolicySpec{EgressMTLS: &nicv1.EgressMTLS{TLSSecret: "client", TrustedCertSecret: "ca",
			VerifyServer: true, VerifyDepth: ptr.To(2), Protocols: "TLSv1.2 TLSv1.3", Ciphers: "ECDHE+AESGCM", ServerName: true, SSLName: "backend.internal"}},
			want: &Policy{Kind: "egressMTLS", EgressMTLS: &EgressMTLS{TLSSecret: "client", TrustedSecret: "ca", TLS: model.UpstreamTLS{
				Verify: true, VerifyDepth: 2, Protocols: []string{"TLSv1.2", "TLSv1.3"}, Ciphers: "ECDHE+AESGCM", ServerName: true, Name: "backend.internal"}}}},
		{name: "egressMTLS verifyServer needs a CA", spec: nicv1.PolicySpec{EgressMTLS: &nicv1.EgressMTLS{VerifyServer: true}}, err: "needs trustedCertSecret"},
		{name: "egressMTLS old protocols are not offered", spec: nicv1.PolicySpec{EgressMTLS: &nicv1.EgressMTLS{TLSSecret: "c", Protocols: "TLSv1 TLSv1.1 TLSv1.2"}},
			want:     &Policy{Kind: "egressMTLS", EgressMTLS: &EgressMTLS{TLSSecret: "c", TLS: model.UpstreamTLS{VerifyDepth: 1, Protocols: []string{"TLSv1.2"}}}},
			problems: []string{"protocols TLSv1:", "protocols TLSv1.1:"}},
		{name: "egressMTLS only old protocols", spec: nicv1.PolicySpec{EgressMTLS: &nicv1.EgressMTLS{Protocols: "TLSv1"}}, err: "want TLSv1.2 or TLSv1.3"},
		{name: "egressMTLS unknown protocol", spec: nicv1.PolicySpec{EgressMTLS: &nicv1.EgressMTLS{Protocols: "SSLv3"}}, err: "protocols"},
		{name: "egressMTLS ciphers that would inject", spec: nicv1.PolicySpec{EgressMTLS: &nicv1.EgressMTLS{Ciphers: "ALL; return 200"}}, err: "ciphers"},
		{name: "egressMTLS sslName that would inject", spec: nicv1.PolicySpec{EgressMTLS: &nicv1.EgressMTLS{SSLName: "a;b"}}, err: "sslName"},
		{name: "egressMTLS sslName variable", spec: nicv1.PolicySpec{EgressMTLS: &nicv1.EgressMTLS{SSLName: "${proxy_host}"}}, err: "sslName"},
		{name: "egressMTLS sessionReuse off is what Causeway does", spec: nicv1.PolicySpec{EgressMTLS: &nicv1.EgressMTLS{TLSSecret: "c", SessionReuse: ptr.To(false)}},
			want: &Policy{Kind: "egressMTLS", EgressMTLS: &EgressMTLS{TLSSecret: "c", TLS: model.UpstreamTLS{VerifyDepth: 1}}}},
		{name: "egressMTLS sessionReuse on is reported", spec: nicv1.PolicySpec{EgressMTLS: &nicv1.EgressMTLS{TLSSecret: "c", SessionReuse: ptr.To(true)}},
			want: &Policy{Kind: "egressMTLS", EgressMTLS: &EgressMTLS{TLSSecret: "c", TLS: model.UpstreamTLS{VerifyDepth: 1}}}, problems: []string{"sessionReuse"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := translatePolicyCase(t, tc.spec, tc.err, tc.problems)
			if out == nil {
				return
			}
			tc.want.Ref = out.Ref
			if !reflect.DeepEqual(out, tc.want) {
				t.Errorf("policy %+v %+v %+v, want %+v %+v %+v", out, out.IngressMTLS, out.EgressMTLS, tc.want, tc.want.IngressMTLS, tc.want.EgressMTLS)
			}
		})
	}
}
