// Package certs provides the tunnel's TLS material and keeps it fresh
// without a restart. A Source hands out the certificate for each new
// handshake: KeyPair reads files and reloads them when their modification
// times change; CSRSource obtains and renews certificates through
// certificates.k8s.io/v1 CertificateSigningRequests. Established links keep
// the certificate they were made with, so rotation never drops a tunnel.
package certs

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"
)

// Source returns the certificate to present in the next TLS handshake.
// Implementations rotate it behind the caller's back; a handshake in
// progress keeps what it got.
type Source interface {
	Get() (*tls.Certificate, error)
}

// KeyPair is a certificate and key read from files, reloaded on change.
type KeyPair struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	modCert time.Time
	modKey  time.Time
}

// NewKeyPair loads certFile and keyFile once, failing early on bad input.
func NewKeyPair(certFile, keyFile string) (*KeyPair, error) {
	kp := &KeyPair{certFile: certFile, keyFile: keyFile}
	if _, err := kp.Get(); err != nil {
		return nil, err
	}
	return kp, nil
}

// Get returns the current certificate, reloading the files if either
// changed since the last load. A failed reload keeps the previous pair.
func (kp *KeyPair) Get() (*tls.Certificate, error) {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	cs, err1 := os.Stat(kp.certFile)
	ks, err2 := os.Stat(kp.keyFile)
	if err1 == nil && err2 == nil && kp.cert != nil && cs.ModTime().Equal(kp.modCert) && ks.ModTime().Equal(kp.modKey) {
		return kp.cert, nil
	}
	c, err := tls.LoadX509KeyPair(kp.certFile, kp.keyFile)
	if err != nil {
		if kp.cert != nil {
			return kp.cert, nil
		}
		return nil, fmt.Errorf("load key pair %s: %w", kp.certFile, err)
	}
	if c.Leaf == nil && len(c.Certificate) > 0 {
		c.Leaf, _ = x509.ParseCertificate(c.Certificate[0])
	}
	kp.cert = &c
	if err1 == nil {
		kp.modCert = cs.ModTime()
	}
	if err2 == nil {
		kp.modKey = ks.ModTime()
	}
	return kp.cert, nil
}

// LoadPool reads a PEM bundle of CA certificates.
func LoadPool(file string) (*x509.CertPool, error) {
	pemData, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read CA bundle: %w", err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pemData) {
		return nil, fmt.Errorf("CA bundle %s: no certificates", file)
	}
	return p, nil
}

// ServerConfig is a TLS config that serves kp's current certificate and,
// when clientCAs is not nil, requires client certificates signed by it.
func ServerConfig(kp Source, clientCAs *x509.CertPool) *tls.Config {
	c := &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return kp.Get()
		},
	}
	if clientCAs != nil {
		c.ClientCAs = clientCAs
		c.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return c
}

// ClientConfig is a TLS config that presents kp's current certificate and
// trusts roots for the server named serverName.
func ClientConfig(kp Source, roots *x509.CertPool, serverName string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		RootCAs:    roots,
		ServerName: serverName,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return kp.Get()
		},
	}
}
