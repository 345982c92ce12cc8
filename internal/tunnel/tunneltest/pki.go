// Package tunneltest holds helpers shared by the tunnel's tests and
// benchmarks: a throwaway PKI, log-like payloads and small backends.
package tunneltest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority for tests.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	PEM  []byte
}

// NewCA creates a self-signed CA named name.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("sign CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse CA: %w", err)
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Pool returns a cert pool holding only this CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Leaf is an issued certificate with its key, in PEM and as a tls pair.
type Leaf struct {
	CertPEM, KeyPEM []byte
	TLS             tls.Certificate
}

// Issue signs a certificate. Server certificates get the given IPs and DNS
// names as SANs; client certificates get cn (e.g. "system:node:edge-1").
func (ca *CA) Issue(cn string, server bool, ips []net.IP, dns []string, validFor time.Duration) (*Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	usage := x509.ExtKeyUsageClientAuth
	if server {
		usage = x509.ExtKeyUsageServerAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(validFor),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  ips,
		DNSNames:     dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", cn, err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal key: %w", err)
	}
	l := &Leaf{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
	}
	l.TLS, err = tls.X509KeyPair(l.CertPEM, l.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("load pair: %w", err)
	}
	return l, nil
}

// WriteFiles writes the leaf as dir/name.crt and dir/name.key and returns
// their paths.
func (l *Leaf) WriteFiles(dir, name string) (certFile, keyFile string, err error) {
	certFile = filepath.Join(dir, name+".crt")
	keyFile = filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, l.CertPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("write cert: %w", err)
	}
	if err := os.WriteFile(keyFile, l.KeyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("write key: %w", err)
	}
	return certFile, keyFile, nil
}

// WriteFile writes the CA certificate as dir/name.crt.
func (ca *CA) WriteFile(dir, name string) (string, error) {
	p := filepath.Join(dir, name+".crt")
	if err := os.WriteFile(p, ca.PEM, 0o600); err != nil {
		return "", fmt.Errorf("write CA: %w", err)
	}
	return p, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}

// PKI is the full set of certificates a tunnel test needs.
type PKI struct {
	ServerCA, AgentCA, FrontendCA *CA
	Server                        *Leaf // serves the agent port and the CONNECT TCP port
	FrontendClient                *Leaf // a CONNECT client (e.g. kube-apiserver)
}

// NewPKI creates CAs and a server certificate valid for 127.0.0.1 and
// "causeway-tunnel" plus extraIPs.
func NewPKI(extraIPs ...net.IP) (*PKI, error) {
	p := &PKI{}
	var err error
	for _, c := range []struct {
		dst  **CA
		name string
	}{{&p.ServerCA, "server-ca"}, {&p.AgentCA, "agent-ca"}, {&p.FrontendCA, "frontend-ca"}} {
		if *c.dst, err = NewCA(c.name); err != nil {
			return nil, err
		}
	}
	ips := append([]net.IP{net.IPv4(127, 0, 0, 1)}, extraIPs...)
	if p.Server, err = p.ServerCA.Issue("causeway-tunnel", true, ips, []string{"causeway-tunnel"}, 24*time.Hour); err != nil {
		return nil, err
	}
	if p.FrontendClient, err = p.FrontendCA.Issue("kube-apiserver", false, nil, nil, 24*time.Hour); err != nil {
		return nil, err
	}
	return p, nil
}

// AgentCert issues a client certificate for node.
func (p *PKI) AgentCert(node string) (*Leaf, error) {
	return p.AgentCA.Issue("system:node:"+node, false, nil, nil, 24*time.Hour)
}
