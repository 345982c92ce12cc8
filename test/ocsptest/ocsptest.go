// Package ocsptest is a test CA and its OCSP responder: certificates whose
// OCSP URL points at a responder the test runs on a loopback address,
// which answers good, revoked or unknown as the test says.
package ocsptest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ocsp"
)

// CA issues certificates and answers OCSP requests about them.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// URL is the responder's, which the certificates name.
	URL string

	mu     sync.Mutex
	status map[string]int // serial -> ocsp.Good, Revoked, Unknown
	// fail answers every request with 500 while set.
	fail bool
	// Validity is how long a response is valid (nextUpdate).
	validity time.Duration
	serial   int64
	asked    int
}

// New starts a CA whose responder listens on ip until the test ends.
func New(t testing.TB, ip string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Causeway test OCSP CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &CA{Cert: cert, key: key, status: map[string]int{}, validity: time.Hour, serial: 1}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: ca, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	ca.URL = "http://" + l.Addr().String() + "/ocsp"
	return ca
}

// Issue returns a certificate for host, signed by the CA and naming its
// responder, and its key, as PEM: the certificate, then the CA's (the
// chain a Secret's tls.crt holds), and the key. It is good until SetStatus
// says otherwise.
func (ca *CA) Issue(t testing.TB, host string) (certPEM, keyPEM []byte, leaf *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca.mu.Lock()
	ca.serial++
	serial := ca.serial
	ca.mu.Unlock()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), OCSPServer: []string{ca.URL},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ = x509.ParseCertificate(der)
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM = append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})...)
	return certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), leaf
}

// SetStatus makes the responder answer status (ocsp.Good, Revoked,
// Unknown) for the certificate.
func (ca *CA) SetStatus(c *x509.Certificate, status int) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	ca.status[c.SerialNumber.String()] = status
}

// Fail makes the responder answer 500 while on.
func (ca *CA) Fail(on bool) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	ca.fail = on
}

// SetValidity sets how long the next responses are valid.
func (ca *CA) SetValidity(d time.Duration) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	ca.validity = d
}

// Asked counts the requests answered.
func (ca *CA) Asked() int {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	return ca.asked
}

// ServeHTTP answers an OCSP request (POST, RFC 6960 appendix A).
func (ca *CA) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, err := ocsp.ParseRequest(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ca.mu.Lock()
	ca.asked++
	fail, validity := ca.fail, ca.validity
	status, ok := ca.status[req.SerialNumber.String()]
	ca.mu.Unlock()
	if fail {
		http.Error(w, "responder down", http.StatusInternalServerError)
		return
	}
	if !ok {
		status = ocsp.Good
	}
	now := time.Now().Truncate(time.Second)
	tmpl := ocsp.Response{Status: status, SerialNumber: req.SerialNumber, ThisUpdate: now.Add(-time.Minute), NextUpdate: now.Add(validity),
		IssuerHash: crypto.SHA1}
	if status == ocsp.Revoked {
		tmpl.RevokedAt, tmpl.RevocationReason = now.Add(-time.Hour), ocsp.KeyCompromise
	}
	der, err := ocsp.CreateResponse(ca.Cert, ca.Cert, tmpl, ca.key)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/ocsp-response")
	w.Write(der)
}
