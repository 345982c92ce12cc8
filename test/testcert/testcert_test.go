package testcert

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/tls"
	"strings"
	"testing"
	"time"
)

func TestSelfSigned(t *testing.T) {
	tests := []struct {
		name    string
		rsaBits int
		names   []string
		wantRSA bool
	}{
		{name: "ECDSA", names: []string{"a.test"}},
		{name: "RSA 2048, several names", rsaBits: 2048, names: []string{"b.test", "var-b.test"}, wantRSA: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			crt, key, err := SelfSigned(tc.rsaBits, time.Hour, tc.names...)
			if err != nil {
				t.Fatal(err)
			}
			pair, err := tls.X509KeyPair(crt, key)
			if err != nil {
				t.Fatalf("certificate and key do not pair: %v", err)
			}
			leaf := pair.Leaf
			if leaf.Subject.CommonName != tc.names[0] {
				t.Errorf("CN %q, want %q", leaf.Subject.CommonName, tc.names[0])
			}
			for _, n := range tc.names {
				if err := leaf.VerifyHostname(n); err != nil {
					t.Errorf("not valid for %s: %v", n, err)
				}
			}
			if _, isRSA := leaf.PublicKey.(*rsa.PublicKey); isRSA != tc.wantRSA {
				t.Errorf("RSA key %v, want %v", isRSA, tc.wantRSA)
			}
			if _, isEC := leaf.PublicKey.(*ecdsa.PublicKey); isEC == tc.wantRSA {
				t.Errorf("ECDSA key %v, want %v", isEC, !tc.wantRSA)
			}
			if d := time.Until(leaf.NotAfter); d <= 0 || d > time.Hour {
				t.Errorf("expires in %s, want within the hour", d)
			}
		})
	}
	if _, _, err := SelfSigned(0, time.Hour); err == nil {
		t.Error("no names: no error")
	}
}

func TestSecretYAML(t *testing.T) {
	got := SecretYAML("ns", "web-tls", []byte("CRT"), []byte("KEY"))
	for _, want := range []string{
		"kind: Secret\n", "metadata: {name: web-tls, namespace: ns}\n", "type: kubernetes.io/tls\n",
		"  tls.crt: Q1JU\n", "  tls.key: S0VZ\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, "\n---\n") {
		t.Errorf("no trailing document separator:\n%s", got)
	}
}
