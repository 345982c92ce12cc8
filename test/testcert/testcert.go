// Package testcert makes throwaway self-signed TLS certificates for tests,
// benchmarks and the demo.
package testcert

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
	"errors"
	"fmt"
	"math/big"
	"time"
)

// SecretYAML is a kubernetes.io/tls Secret manifest holding certPEM and
// keyPEM, ending with a document separator so manifests can be joined.
func SecretYAML(namespace, name string, certPEM, keyPEM []byte) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: %s, namespace: %s}
type: kubernetes.io/tls
data:
  tls.crt: %s
  tls.key: %s
---
`, name, namespace, base64.StdEncoding.EncodeToString(certPEM), base64.StdEncoding.EncodeToString(keyPEM))
}

// SelfSigned returns a PEM certificate and PEM PKCS#8 key for a server
// named by names: the first is its common name, all of them its DNS
// names. It is valid from an hour ago for lifetime. rsaBits 0 means an
// ECDSA P-256 key, anything else an RSA key of that size.
func SelfSigned(rsaBits int, lifetime time.Duration, names ...string) (certPEM, keyPEM []byte, err error) {
	return selfSigned(rsaBits, lifetime, x509.ExtKeyUsageServerAuth, names)
}

// SelfSignedClient is SelfSigned for a TLS client certificate (ECDSA,
// valid for an hour), such as nginx presents to a backend that asks for
// one.
func SelfSignedClient(names ...string) (certPEM, keyPEM []byte, err error) {
	return selfSigned(0, time.Hour, x509.ExtKeyUsageClientAuth, names)
}

func selfSigned(rsaBits int, lifetime time.Duration, eku x509.ExtKeyUsage, names []string) (certPEM, keyPEM []byte, err error) {
	if len(names) == 0 {
		return nil, nil, errors.New("testcert: no name")
	}
	var key crypto.Signer
	usage := x509.KeyUsageDigitalSignature
	if rsaBits > 0 {
		key, err = rsa.GenerateKey(rand.Reader, rsaBits)
		usage |= x509.KeyUsageKeyEncipherment
	} else {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("testcert: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, fmt.Errorf("testcert: serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(lifetime),
		KeyUsage:     usage,
		ExtKeyUsage:  []x509.ExtKeyUsage{eku},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("testcert: create certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("testcert: marshal key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}
