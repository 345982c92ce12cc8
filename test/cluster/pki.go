package cluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
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

// pki is the node's certificate authority for the kubelet's port: the
// kubelet serves with a certificate it signs, and trusts the client
// certificate kube-apiserver presents for logs, exec and port-forward
// (group system:masters, so the kubelet's webhook authorization allows it).
type pki struct {
	dir                                                    string
	caCert, servingCert, servingKey, clientCert, clientKey string
}

func writePKI(dir string) (pki, error) {
	k := pki{
		dir:         dir,
		caCert:      filepath.Join(dir, "ca.crt"),
		servingCert: filepath.Join(dir, "kubelet.crt"),
		servingKey:  filepath.Join(dir, "kubelet.key"),
		clientCert:  filepath.Join(dir, "apiserver-kubelet-client.crt"),
		clientKey:   filepath.Join(dir, "apiserver-kubelet-client.key"),
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return k, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return k, err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "causeway-cluster-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, caKey.Public(), caKey)
	if err != nil {
		return k, err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return k, err
	}
	if err := writePEM(k.caCert, "CERTIFICATE", caDER); err != nil {
		return k, err
	}
	leaves := []struct {
		cert, key string
		tmpl      x509.Certificate
	}{
		{k.servingCert, k.servingKey, x509.Certificate{
			Subject:     pkix.Name{CommonName: "system:node:" + NodeName, Organization: []string{"system:nodes"}},
			DNSNames:    []string{NodeName},
			IPAddresses: []net.IP{net.ParseIP(NodeIP)},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}},
		{k.clientCert, k.clientKey, x509.Certificate{
			Subject:     pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}},
	}
	for i, l := range leaves {
		tmpl := l.tmpl
		tmpl.SerialNumber = big.NewInt(int64(i + 2))
		tmpl.NotBefore, tmpl.NotAfter = ca.NotBefore, ca.NotAfter
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return k, err
		}
		der, err := x509.CreateCertificate(rand.Reader, &tmpl, ca, key.Public(), crypto.Signer(caKey))
		if err != nil {
			return k, fmt.Errorf("certificate %s: %w", l.cert, err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return k, err
		}
		if err := writePEM(l.cert, "CERTIFICATE", der); err != nil {
			return k, err
		}
		if err := writePEM(l.key, "PRIVATE KEY", keyDER); err != nil {
			return k, err
		}
	}
	return k, nil
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
