package build

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// testCRL is an empty CRL signed by a fresh self-signed CA.
func testCRL(t *testing.T) []byte {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	ca, _ := x509.ParseCertificate(der)
	crl, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(1),
		ThisUpdate: time.Now(), NextUpdate: time.Now().Add(time.Hour)}, ca, k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: crl})
}

// TestAuthTLS checks that client certificate authentication is a host's,
// that the oldest Ingress's settings win, and that a CA Secret that cannot
// be used closes every path of the host.
func TestAuthTLS(t *testing.T) {
	ca, _ := selfSigned(t, "client-ca")
	crl := testCRL(t)
	p := annotations.DefaultPrefix + "/"
	for _, tc := range []struct {
		name    string
		data    map[string][]byte // of Secret default/client-ca; nil: none
		ann     map[string]string // of the older Ingress
		younger map[string]string // of the sibling on the same host
		want    *model.ClientTLS  // nil: the host is closed
		reasons []string
	}{
		{name: "CA", data: map[string][]byte{"ca.crt": ca},
			ann:  map[string]string{p + "auth-tls-secret": "default/client-ca", p + "auth-tls-match-cn": "CN=good", p + "auth-tls-verify-depth": "2"},
			want: &model.ClientTLS{Secret: "default/client-ca", Verify: model.VerifyOn, Depth: 2, MatchCN: "CN=good"}},
		{name: "CA and CRL", data: map[string][]byte{"ca.crt": ca, "ca.crl": crl},
			ann:  map[string]string{p + "auth-tls-secret": "default/client-ca", p + "auth-tls-verify-client": "optional"},
			want: &model.ClientTLS{Secret: "default/client-ca", Verify: model.VerifyOptional, Depth: 1}},
		{name: "the younger Ingress disagrees, and wins its own host", data: map[string][]byte{"ca.crt": ca},
			ann:     map[string]string{p + "auth-tls-secret": "default/client-ca"},
			younger: map[string]string{p + "auth-tls-secret": "default/client-ca", p + "auth-tls-verify-client": "off"},
			want:    &model.ClientTLS{Secret: "default/client-ca", Verify: model.VerifyOn, Depth: 1},
			reasons: []string{model.ReasonCollision}},
		{name: "missing Secret closes", ann: map[string]string{p + "auth-tls-secret": "default/client-ca"},
			reasons: []string{model.ReasonMissingSecret}},
		{name: "no ca.crt closes", data: map[string][]byte{"ca.crl": crl}, ann: map[string]string{p + "auth-tls-secret": "default/client-ca"},
			reasons: []string{model.ReasonInvalidSecret}},
		{name: "ca.crt not a certificate closes", data: map[string][]byte{"ca.crt": []byte("junk")},
			ann: map[string]string{p + "auth-tls-secret": "default/client-ca"}, reasons: []string{model.ReasonInvalidSecret}},
		{name: "ca.crl not a CRL closes", data: map[string][]byte{"ca.crt": ca, "ca.crl": ca},
			ann: map[string]string{p + "auth-tls-secret": "default/client-ca"}, reasons: []string{model.ReasonInvalidSecret}},
		{name: "invalid annotation closes the host", data: map[string][]byte{"ca.crt": ca},
			ann:     map[string]string{p + "auth-tls-secret": "default/client-ca", p + "auth-tls-match-cn": `CN=a"`},
			reasons: []string{model.ReasonInvalidAnnotation, model.ReasonInvalidAnnotation}},
		{name: "the younger Ingress's invalid value closes only its own paths", data: map[string][]byte{"ca.crt": ca},
			ann:     map[string]string{p + "auth-tls-secret": "default/client-ca"},
			younger: map[string]string{p + "auth-tls-secret": "default/client-ca", p + "auth-tls-verify-depth": "99"},
			want:    &model.ClientTLS{Secret: "default/client-ca", Verify: model.VerifyOn, Depth: 1},
			// b.com, the younger Ingress's own host, closes.
			reasons: []string{model.ReasonInvalidAnnotation, model.ReasonCollision, model.ReasonInvalidAnnotation}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(2)
			if tc.data != nil {
				s.Secrets = append(s.Secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "client-ca"}, Data: tc.data})
			}
			old := mkIngress("default", "old", 0, rule("a.com", path("/app", "Prefix", svcName(0), 80)))
			old.Annotations = tc.ann
			young := mkIngress("default", "young", 1, rule("a.com", path("/other", "Prefix", svcName(1), 80)), rule("b.com", path("/", "Prefix", svcName(1), 80)))
			young.Annotations = tc.younger
			s.Ingresses = append(s.Ingresses, old, young)
			m, problems := Build(s, testOpts)
			var reasons []string
			for _, pr := range problems {
				reasons = append(reasons, pr.Reason)
			}
			if len(reasons) != len(tc.reasons) {
				t.Fatalf("problems = %v, want reasons %v", problems, tc.reasons)
			}
			for i := range reasons {
				if reasons[i] != tc.reasons[i] {
					t.Fatalf("problems = %v, want reasons %v", problems, tc.reasons)
				}
			}
			a := server(m, "a.com")
			if b := server(m, "b.com"); tc.younger == nil && (b.ClientTLS != nil || b.Locations[0].Action.Return != nil) {
				t.Fatalf("b.com is not the host's: %+v", b)
			}
			if tc.want == nil {
				if a.ClientTLS != nil {
					t.Fatalf("ClientTLS = %+v on a closed host", a.ClientTLS)
				}
				for _, l := range append(a.Locations, a.Default) {
					if l.Action.Return == nil || l.Action.Return.Status != 503 {
						t.Fatalf("%s answers %+v, want 503", l.Match.Path, l.Action)
					}
				}
				if len(m.ProxySecrets) != 0 {
					t.Fatalf("ProxySecrets = %v", m.ProxySecrets)
				}
				return
			}
			tc.want.Source = model.ObjectRef{Kind: "Ingress", Namespace: "default", Name: "old", UID: "uid-old"}
			if a.ClientTLS == nil || *a.ClientTLS != *tc.want {
				t.Fatalf("ClientTLS = %+v, want %+v", a.ClientTLS, tc.want)
			}
			if len(m.ProxySecrets) != 1 || string(m.ProxySecrets[0].CA) != string(ca) || string(m.ProxySecrets[0].CRL) != string(tc.data["ca.crl"]) {
				t.Fatalf("ProxySecrets = %+v", m.ProxySecrets)
			}
		})
	}
}

// TestAuthTLSNoHost checks that rules without a host put client
// certificate authentication on the catch-all server, not nowhere.
func TestAuthTLSNoHost(t *testing.T) {
	ca, _ := selfSigned(t, "client-ca")
	s := world(1)
	s.Secrets = append(s.Secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "client-ca"},
		Data: map[string][]byte{"ca.crt": ca}})
	ing := mkIngress("default", "web", 0, rule("", path("/app", "Prefix", svcName(0), 80)))
	ing.Annotations = map[string]string{annotations.DefaultPrefix + "/auth-tls-secret": "default/client-ca"}
	s.Ingresses = append(s.Ingresses, ing)
	m, problems := Build(s, testOpts)
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	if c := server(m, "").ClientTLS; c == nil || c.Secret != "default/client-ca" {
		t.Fatalf("catch-all ClientTLS = %+v", c)
	}
}
