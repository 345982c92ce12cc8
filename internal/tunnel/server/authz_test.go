package server

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/causeway/causeway/internal/tunnel/wire"
)

// fakeNodes serves Nodes from a map.
type fakeNodes map[string]*corev1.Node

func (f fakeNodes) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Node, error) {
	if n, ok := f[name]; ok {
		return n, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, name)
}

func TestAuthorizers(t *testing.T) {
	nodes := fakeNodes{"edge-1": {
		ObjectMeta: metav1.ObjectMeta{Name: "edge-1"},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "10.0.0.5"},
			{Type: corev1.NodeExternalIP, Address: "203.0.113.5"},
			{Type: corev1.NodeHostName, Address: "edge-1.lan"},
		}},
	}}
	cert := func(cn string) *x509.Certificate { return &x509.Certificate{Subject: pkix.Name{CommonName: cn}} }
	ips := func(s ...string) (out []netip.Addr) {
		for _, x := range s {
			out = append(out, netip.MustParseAddr(x))
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		cn      string
		hello   wire.Hello
		authz   Authorizer
		wantErr string
	}{
		{"cert matches node", "system:node:edge-1", wire.Hello{NodeName: "edge-1"}, CertNodeAuthorizer{}, ""},
		{"cert for another node", "system:node:edge-2", wire.Hello{NodeName: "edge-1"}, CertNodeAuthorizer{}, `certificate is for node "edge-2"`},
		{"cert without node prefix", "edge-1", wire.Hello{NodeName: "edge-1"}, CertNodeAuthorizer{}, "is not system:node:<node>"},
		{"API: own addresses and names", "system:node:edge-1",
			wire.Hello{NodeName: "edge-1", NodeIPs: ips("10.0.0.5", "203.0.113.5"), HostNames: []string{"edge-1", "EDGE-1.lan."}},
			NodeAddressAuthorizer{Nodes: nodes}, ""},
		{"API: another node's IP", "system:node:edge-1", wire.Hello{NodeName: "edge-1", NodeIPs: ips("10.0.0.6")},
			NodeAddressAuthorizer{Nodes: nodes}, "node IP 10.0.0.6 is not among"},
		{"API: foreign host name", "system:node:edge-1", wire.Hello{NodeName: "edge-1", HostNames: []string{"db-1"}},
			NodeAddressAuthorizer{Nodes: nodes}, `host name "db-1" is not among`},
		{"API: node missing", "system:node:ghost", wire.Hello{NodeName: "ghost"},
			NodeAddressAuthorizer{Nodes: nodes}, "does not exist"},
		{"API: still checks the certificate", "system:node:edge-2", wire.Hello{NodeName: "edge-1"},
			NodeAddressAuthorizer{Nodes: nodes}, "certificate is for node"},
		{"chain stops at the first refusal", "system:node:edge-1", wire.Hello{NodeName: "edge-1", NodeIPs: ips("10.9.9.9")},
			Chain{CertNodeAuthorizer{}, NodeAddressAuthorizer{Nodes: nodes}}, "not among"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.authz.Authorize(context.Background(), cert(tc.cn), &tc.hello)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
