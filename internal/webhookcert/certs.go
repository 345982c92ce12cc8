package webhookcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"fmt"
	"math/big"
	"time"
)

// caNamePrefix starts the CommonName of every CA a Keeper makes, so a
// person reading a caBundle can tell ours from theirs.
const caNamePrefix = "causeway-webhook-ca-"

// authority is one CA and the serving certificate it signed. Both keys
// live only here, in memory.
type authority struct {
	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
	names nameSet
	leaf  *tls.Certificate
}

// newAuthority makes a CA valid from a minute before now (to forgive
// clocks slightly behind ours) until now+validity, and a serving
// certificate from it for names.
func newAuthority(now time.Time, validity time.Duration, names nameSet) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix) // never fails (crypto/rand crashes the program instead)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: caNamePrefix + hex.EncodeToString(suffix)},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(validity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		// It signs serving certificates and nothing below them.
		MaxPathLenZero: true,
		KeyUsage:       x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing our own CA certificate: %w", err)
	}
	a := &authority{ca: ca, caKey: key}
	if err := a.issue(names); err != nil {
		return nil, err
	}
	return a, nil
}

// issue replaces a's serving certificate with a new one for names, with a
// new key, valid for the same window as the CA.
func (a *authority) issue(names nameSet) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating serving key: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "causeway-webhook"},
		NotBefore:             a.ca.NotBefore,
		NotAfter:              a.ca.NotAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              names.DNS,
		IPAddresses:           names.netIPs(),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.ca, key.Public(), a.caKey)
	if err != nil {
		return fmt.Errorf("creating serving certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return fmt.Errorf("parsing our own serving certificate: %w", err)
	}
	a.names = names
	a.leaf = &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	return nil
}

// serialNumber is a random 128-bit serial number (never zero, which
// certificates may not use).
func serialNumber() (*big.Int, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	for {
		n, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return nil, fmt.Errorf("generating serial number: %w", err)
		}
		if n.Sign() > 0 {
			return n, nil
		}
	}
}
