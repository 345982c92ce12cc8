package integration

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"testing"
	"time"
)

// tlsSecretYAML returns a kubernetes.io/tls Secret with a self-signed
// certificate whose CN is cn. rsaBits 0 means ECDSA P-256.
func tlsSecretYAML(t *testing.T, ns, name, cn string, rsaBits int) string {
	t.Helper()
	var key crypto.Signer
	var err error
	if rsaBits > 0 {
		key, err = rsa.GenerateKey(rand.Reader, rsaBits)
	} else {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		DNSNames: []string{cn}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	k := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: %s, namespace: %s}
type: kubernetes.io/tls
data:
  tls.crt: %s
  tls.key: %s
---
`, name, ns, base64.StdEncoding.EncodeToString(crt), base64.StdEncoding.EncodeToString(k))
}

// tlsIngressYAML is an Ingress serving host over TLS with secret.
func tlsIngressYAML(ns, name, host, secret, service string) string {
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  ingressClassName: causeway
  tls: [{hosts: [%[3]q], secretName: %[4]s}]
  rules:
  - host: %[3]q
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: %[5]s, port: {number: 80}}}}
---
`, ns, name, host, secret, service)
}
