package certmanager

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/owned"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		cm   nicv1.CertManager
		want Request
		err  string
	}{
		{name: "cluster issuer", cm: nicv1.CertManager{ClusterIssuer: "letsencrypt"},
			want: Request{IssuerName: "letsencrypt", IssuerKind: "ClusterIssuer", Usages: defaultUsages}},
		{name: "issuer", cm: nicv1.CertManager{Issuer: "ca"}, want: Request{IssuerName: "ca", IssuerKind: "Issuer", Usages: defaultUsages}},
		{name: "external issuer", cm: nicv1.CertManager{Issuer: "pca", IssuerKind: "AWSPCAIssuer", IssuerGroup: "awspca.cert-manager.io"},
			want: Request{IssuerName: "pca", IssuerKind: "AWSPCAIssuer", IssuerGroup: "awspca.cert-manager.io", Usages: defaultUsages}},
		{name: "every field", cm: nicv1.CertManager{ClusterIssuer: "le", CommonName: "cafe.example.com", Duration: "2160h",
			RenewBefore: "360h", Usages: "server auth, digital signature", IssueTempCert: true},
			want: Request{IssuerName: "le", IssuerKind: "ClusterIssuer", CommonName: "cafe.example.com", Duration: 2160 * time.Hour,
				RenewBefore: 360 * time.Hour, Usages: []string{"server auth", "digital signature"}, TempCert: true}},
		{name: "neither issuer", cm: nicv1.CertManager{}, err: "one of issuer and cluster-issuer is required"},
		{name: "both issuers", cm: nicv1.CertManager{Issuer: "a", ClusterIssuer: "b"}, err: "may not both be set"},
		{name: "cluster issuer with a kind", cm: nicv1.CertManager{ClusterIssuer: "b", IssuerKind: "X"}, err: "with cluster-issuer"},
		{name: "cluster issuer with a group", cm: nicv1.CertManager{ClusterIssuer: "b", IssuerGroup: "x.io"}, err: "with cluster-issuer"},
		{name: "days are not Go durations", cm: nicv1.CertManager{Issuer: "a", Duration: "90d"}, err: "duration \"90d\""},
		{name: "a negative renew-before", cm: nicv1.CertManager{Issuer: "a", RenewBefore: "-1h"}, err: "renew-before"},
		{name: "an unknown usage", cm: nicv1.CertManager{Issuer: "a", Usages: "server auth,world domination"}, err: "world domination"},
		{name: "an issuer that is no name", cm: nicv1.CertManager{Issuer: "Bad Name"}, err: "issuer name"},
		{name: "a group that is no group", cm: nicv1.CertManager{Issuer: "a", IssuerGroup: "not a group"}, err: "issuer-group"},
		{name: "a common name over 64", cm: nicv1.CertManager{Issuer: "a", CommonName: strings.Repeat("c", 65)}, err: "common-name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(&tc.cm)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse() = %+v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.IssuerName != tc.want.IssuerName || got.IssuerKind != tc.want.IssuerKind || got.IssuerGroup != tc.want.IssuerGroup ||
				got.CommonName != tc.want.CommonName || got.Duration != tc.want.Duration || got.RenewBefore != tc.want.RenewBefore ||
				strings.Join(got.Usages, ",") != strings.Join(tc.want.Usages, ",") || got.TempCert != tc.want.TempCert {
				t.Errorf("Parse() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func cafe(cm *nicv1.CertManager) *nicv1.VirtualServer {
	return &nicv1.VirtualServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cafe", UID: "vs-uid", Labels: map[string]string{"team": "coffee"}},
		Spec:       nicv1.VirtualServerSpec{Host: "cafe.example.com", TLS: &nicv1.TLS{Secret: "cafe-tls", CertManager: cm}},
	}
}

// TestWant: the Certificate NIC creates for a VirtualServer.
func TestWant(t *testing.T) {
	crt, err := Want(cafe(&nicv1.CertManager{ClusterIssuer: "le", Duration: "2160h", IssueTempCert: true}))
	if err != nil || crt == nil {
		t.Fatalf("Want() = %v, %v", crt, err)
	}
	if crt.GetNamespace() != "shop" || crt.GetName() != "cafe-tls" || crt.GetLabels()["team"] != "coffee" ||
		crt.GetAnnotations()[TempCertAnnotation] != "true" || crt.GetAPIVersion() != "cert-manager.io/v1" || crt.GetKind() != "Certificate" {
		t.Errorf("metadata %+v", crt.Object["metadata"])
	}
	if !owned.ControlledBy(crt, "vs-uid") || owned.ControlledBy(crt, "other") {
		t.Error("the VirtualServer does not control it")
	}
	owner := crt.GetOwnerReferences()[0]
	if owner.Kind != "VirtualServer" || owner.APIVersion != "k8s.nginx.org/v1" || owner.Name != "cafe" || owner.BlockOwnerDeletion != nil {
		t.Errorf("owner %+v", owner)
	}
	spec, _, _ := unstructured.NestedMap(crt.Object, "spec")
	if got, want := spec["secretName"], "cafe-tls"; got != want {
		t.Errorf("secretName %v", got)
	}
	if dns := spec["dnsNames"].([]any); len(dns) != 1 || dns[0] != "cafe.example.com" {
		t.Errorf("dnsNames %v", dns)
	}
	if ref := spec["issuerRef"].(map[string]any); ref["name"] != "le" || ref["kind"] != "ClusterIssuer" || ref["group"] != nil {
		t.Errorf("issuerRef %v", ref)
	}
	if spec["duration"] != "2160h0m0s" || spec["renewBefore"] != nil {
		t.Errorf("durations %v %v", spec["duration"], spec["renewBefore"])
	}
	for _, vs := range []*nicv1.VirtualServer{cafe(nil), {Spec: nicv1.VirtualServerSpec{Host: "a"}}} {
		if crt, err := Want(vs); crt != nil || err != nil {
			t.Errorf("no cert-manager: %v, %v", crt, err)
		}
	}
	noSecret := cafe(&nicv1.CertManager{Issuer: "a"})
	noSecret.Spec.TLS.Secret = ""
	if crt, err := Want(noSecret); crt != nil || err != nil {
		t.Errorf("no secret: %v, %v", crt, err)
	}
	if _, err := Want(cafe(&nicv1.CertManager{})); err == nil {
		t.Error("an invalid request gave no error")
	}
}

func TestDiffers(t *testing.T) {
	base := func() *unstructured.Unstructured {
		crt, _ := Want(cafe(&nicv1.CertManager{ClusterIssuer: "le"}))
		return crt
	}
	for _, tc := range []struct {
		name   string
		change func(have *unstructured.Unstructured)
		want   bool
	}{
		{"the same", func(*unstructured.Unstructured) {}, false},
		{"cert-manager's status and other annotations are left alone", func(h *unstructured.Unstructured) {
			h.Object["status"] = map[string]any{"ready": true}
			h.SetAnnotations(map[string]string{"cert-manager.io/something": "x"})
		}, false},
		{"another issuer", func(h *unstructured.Unstructured) {
			unstructured.SetNestedField(h.Object, "other", "spec", "issuerRef", "name")
		}, true},
		{"another host", func(h *unstructured.Unstructured) {
			unstructured.SetNestedSlice(h.Object, []any{"tea.example.com"}, "spec", "dnsNames")
		}, true},
		{"a duration the VirtualServer no longer sets", func(h *unstructured.Unstructured) {
			unstructured.SetNestedField(h.Object, "1h0m0s", "spec", "duration")
		}, true},
		{"labels changed", func(h *unstructured.Unstructured) { h.SetLabels(map[string]string{"team": "tea"}) }, true},
		{"the temporary certificate annotation", func(h *unstructured.Unstructured) {
			h.SetAnnotations(map[string]string{TempCertAnnotation: "true"})
		}, true},
	} {
		have := base()
		tc.change(have)
		if got := Differs(have, base()); got != tc.want {
			t.Errorf("%s: Differs() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
