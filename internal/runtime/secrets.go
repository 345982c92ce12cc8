package runtime

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
	"os"
	"time"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
)

// SecretFiles is the Local Secret Store's view of a Model: one PEM bundle
// per TLS secret that a live server references, and for each Secret used
// for TLS to backends or client certificate authentication its client
// certificate with key, its CA bundle and its CRL, the DH parameters of
// ssl-dh-param, and the password files of basic authentication; nothing
// else. The
// Manager writes them with mode 0600 by atomic rename next to the
// configuration, removes them when no longer referenced, and rolls them back
// with the configuration when nginx rejects it.
func SecretFiles(m *model.Model) render.Files {
	out := render.Files{}
	for _, s := range m.Secrets {
		out[layout.SecretFile(s.Namespace, s.Name)] = s.PEM
		if len(s.OCSP) > 0 {
			out[layout.OCSPFile(s.Namespace, s.Name)] = s.OCSP
		}
	}
	for _, s := range m.ProxySecrets {
		if len(s.Cert) > 0 {
			out[layout.ProxyCertFile(s.Namespace, s.Name)] = append(append(append([]byte(nil), s.Cert...), '\n'), s.PrivateKey...)
		}
		if len(s.CA) > 0 {
			out[layout.ProxyCAFile(s.Namespace, s.Name)] = s.CA
		}
		if len(s.CRL) > 0 {
			out[layout.ProxyCRLFile(s.Namespace, s.Name)] = s.CRL
		}
	}
	for _, c := range m.ProxyCAs {
		out[layout.ProxyConfigMapCAFile(c.Namespace, c.Name)] = c.CA
	}
	if d := m.DHParam; d != nil {
		out[layout.DHParamFile(d.Namespace, d.Name)] = d.PEM
	}
	for i, k := range m.TicketKeys {
		out[layout.TicketKeyFile(i)] = k
	}
	for _, f := range m.AuthFiles {
		out[layout.AuthFile(f.Namespace, f.Name, f.Kind())] = f.Data
	}
	return out
}

// EnsureDefaultCert writes the self-signed certificate that hosts without a
// usable secret present. An existing one is kept while it is valid for
// another week, so restarts do not change it.
func EnsureDefaultCert(dir layout.Dir, now time.Time) error {
	return ensureDefaultCert(dir, now, noOwner)
}

func ensureDefaultCert(dir layout.Dir, now time.Time, o owner) error {
	path := dir.DefaultCert()
	if data, err := os.ReadFile(path); err == nil {
		if cert, err := tls.X509KeyPair(data, data); err == nil && cert.Leaf != nil && cert.Leaf.NotAfter.After(now.Add(7*24*time.Hour)) {
			return nil
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("default certificate: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return fmt.Errorf("default certificate: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "Causeway Default Certificate", Organization: []string{"Causeway"}},
		DNSNames:     []string{"causeway.invalid"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("default certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("default certificate: %w", err)
	}
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	data = append(data, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})...)
	return writeAtomicOwned(path, data, 0o600, o)
}
