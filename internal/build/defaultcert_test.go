package build

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
)

// TestDefaultSSLCertificate: --default-ssl-certificate names a TLS Secret
// that becomes the model's default certificate (and a Secret to write);
// a missing or unusable one keeps the self-generated certificate, with a
// Problem on the Secret.
func TestDefaultSSLCertificate(t *testing.T) {
	crt, key := selfSigned(t, "default.test")
	good := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "fallback", UID: "uid-fallback"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": crt, "tls.key": key}}
	opaque := good.DeepCopy()
	opaque.Name, opaque.Type = "opaque", corev1.SecretTypeOpaque
	broken := good.DeepCopy()
	broken.Name, broken.Data["tls.key"] = "broken", []byte("junk")
	for _, tc := range []struct {
		flag, want, reason string
		bad                map[string]string
	}{
		{"", "", "", nil},
		{"causeway/fallback", "causeway/fallback", "", nil},
		{"causeway/gone", "", model.ReasonMissingSecret, nil},
		{"causeway/opaque", "", model.ReasonInvalidSecret, nil},
		{"causeway/broken", "", model.ReasonInvalidSecret, nil},
		{"causeway/fallback", "", model.ReasonInvalidSecret, map[string]string{"causeway/fallback": "PEM_read_bio_X509_AUX() failed"}},
	} {
		t.Run(tc.flag+"/"+tc.reason, func(t *testing.T) {
			s := world(1)
			s.Secrets = append(s.Secrets, good, opaque, broken)
			s.Ingresses = append(s.Ingresses, mkIngress("default", "web", 0, rule("a.com", path("/", "Prefix", svcName(0), 80))))
			opts := testOpts
			opts.DefaultSSLCertificate, opts.BadSecrets = tc.flag, tc.bad
			m, problems := Build(s, opts)
			if m.DefaultCertificate != tc.want {
				t.Fatalf("default certificate %q, want %q", m.DefaultCertificate, tc.want)
			}
			if tc.want != "" && (len(m.Secrets) != 1 || m.Secrets[0].Key() != tc.want) {
				t.Fatalf("secrets %v, want the default certificate's", m.Secrets)
			}
			if tc.want == "" && len(m.Secrets) != 0 {
				t.Fatalf("secrets %v, want none", m.Secrets)
			}
			if tc.reason == "" {
				if len(problems) != 0 {
					t.Fatalf("problems %v", problems)
				}
				return
			}
			if len(problems) != 1 || problems[0].Reason != tc.reason || problems[0].Object.Kind != "Secret" ||
				problems[0].Object.Namespace+"/"+problems[0].Object.Name != tc.flag ||
				!strings.Contains(problems[0].Message, "--default-ssl-certificate") ||
				!strings.Contains(problems[0].Message, "self-generated") {
				t.Fatalf("problems %v, want one %s on Secret %s", problems, tc.reason, tc.flag)
			}
		})
	}
}
