package certs

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"testing"
)

// TestSatisfies: a stored certificate is reused only if it carries the
// requested subject and every requested SAN; extra SANs or organizations
// do not matter, as in client-go's own check before rotation.
func TestSatisfies(t *testing.T) {
	node := AgentTemplate("edge")
	serving := ServingTemplate("causeway-tunnel-server:s1", []string{"tunnel.example"}, []net.IP{net.ParseIP("10.0.0.1")})
	for _, tc := range []struct {
		name string
		cert x509.Certificate
		tmpl *x509.CertificateRequest
		want bool
	}{
		{"same node", x509.Certificate{Subject: pkix.Name{CommonName: "system:node:edge", Organization: []string{"system:nodes"}}}, node, true},
		{"another node", x509.Certificate{Subject: pkix.Name{CommonName: "system:node:other", Organization: []string{"system:nodes"}}}, node, false},
		{"node without its group", x509.Certificate{Subject: pkix.Name{CommonName: "system:node:edge"}}, node, false},
		{"extra organization", x509.Certificate{Subject: pkix.Name{CommonName: "system:node:edge", Organization: []string{"system:nodes", "x"}}}, node, true},
		{"all SANs and more", x509.Certificate{Subject: pkix.Name{CommonName: "causeway-tunnel-server:s1"},
			DNSNames: []string{"tunnel.example", "other"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.1").To4()}}, serving, true},
		{"missing DNS name", x509.Certificate{Subject: pkix.Name{CommonName: "causeway-tunnel-server:s1"},
			IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}}, serving, false},
		{"missing IP", x509.Certificate{Subject: pkix.Name{CommonName: "causeway-tunnel-server:s1"},
			DNSNames: []string{"tunnel.example"}}, serving, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := satisfies(&tc.cert, tc.tmpl); got != tc.want {
				t.Fatalf("satisfies = %v, want %v", got, tc.want)
			}
		})
	}
}
