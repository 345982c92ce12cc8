package server

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/causeway/causeway/internal/tunnel/wire"
)

// fakeNodes serves Nodes from a map; a nil map fails every read, for
// rows that must not consult the API.
type fakeNodes map[string]*corev1.Node

func (f fakeNodes) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Node, error) {
	if f == nil {
		return nil, errors.New("API unavailable")
	}
	if n, ok := f[name]; ok {
		return n, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, name)
}

func mustRules(t *testing.T, specs ...string) RouteRules {
	t.Helper()
	var rs RouteRules
	for _, s := range specs {
		r, err := ParseRouteRule(s)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// TestPolicy: a row per rule of the registration policy (docs/tunnel.md,
// "Authorization").
func TestPolicy(t *testing.T) {
	nodes := fakeNodes{
		"edge-1": {
			ObjectMeta: metav1.ObjectMeta{Name: "edge-1"},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "10.0.0.5"},
				{Type: corev1.NodeExternalIP, Address: "203.0.113.5"},
				{Type: corev1.NodeHostName, Address: "edge-1.lan"},
			}},
		},
		"edge-2": {
			ObjectMeta: metav1.ObjectMeta{Name: "edge-2"},
			Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.6"}}},
		},
	}
	rules := mustRules(t, "edge-1=192.168.1.0/24,host:*.site-1.example", "pinned=10.30.0.7", "gateway=default")
	secure := Policy{Routes: rules}
	withAPI := Policy{Routes: rules, Nodes: nodes}
	noAPICalls := Policy{Routes: rules, Nodes: fakeNodes(nil)}
	insecure := Policy{Routes: rules, InsecureAcceptAnyNodeAddress: true}

	type certSpec struct {
		cn  string
		ips []string
		dns []string
	}
	node1 := certSpec{cn: "system:node:edge-1"}
	node1SANs := certSpec{cn: "system:node:edge-1", ips: []string{"10.0.0.5", "fd00::5"}, dns: []string{"edge-1.example", "*.wild.example"}}
	for _, tc := range []struct {
		name    string
		policy  Policy
		cert    certSpec
		node    string
		ips     []string
		hosts   []string
		cidrs   []string
		dflt    bool
		wantErr string
	}{
		// The certificate names the node.
		{name: "cert matches node", policy: secure, cert: node1, node: "edge-1"},
		{name: "cert for another node", policy: secure, cert: certSpec{cn: "system:node:edge-2"}, node: "edge-1", wantErr: `certificate is for node "edge-2" but the agent claims node "edge-1"`},
		{name: "cert that is not a node's", policy: secure, cert: certSpec{cn: "edge-1"}, node: "edge-1", wantErr: "is not system:node:<node>"},
		{name: "the node name is always a host name", policy: secure, cert: node1, node: "edge-1", hosts: []string{"EDGE-1."}},
		{name: "empty host name", policy: secure, cert: node1, node: "edge-1", hosts: []string{" "}, wantErr: "empty host name"},

		// Secure default without an API: only SANs and grants.
		{name: "no API: another node's IP", policy: secure, cert: node1, node: "edge-1", ips: []string{"10.0.0.6"},
			wantErr: `node IP 10.0.0.6 is not among node "edge-1"'s addresses (checked its certificate's SANs and the --route-allow rules; no Kubernetes API`},
		{name: "no API: cloud metadata address", policy: secure, cert: node1, node: "edge-1", ips: []string{"169.254.169.254"}, wantErr: "node IP 169.254.169.254 is not among"},
		{name: "no API: kubernetes Service IP", policy: secure, cert: node1, node: "edge-1", ips: []string{"10.96.0.1"}, wantErr: "node IP 10.96.0.1 is not among"},
		{name: "no API: kubernetes.default.svc", policy: secure, cert: node1, node: "edge-1", hosts: []string{"kubernetes.default.svc"},
			wantErr: `host name "kubernetes.default.svc" is not among node "edge-1"'s names`},
		{name: "no API: its own IP without a SAN", policy: secure, cert: node1, node: "edge-1", ips: []string{"10.0.0.5"}, wantErr: "node IP 10.0.0.5 is not among"},
		{name: "certificate IP SANs", policy: secure, cert: node1SANs, node: "edge-1", ips: []string{"10.0.0.5", "::ffff:10.0.0.5", "fd00::5"}},
		{name: "certificate DNS SAN", policy: secure, cert: node1SANs, node: "edge-1", hosts: []string{"Edge-1.Example."}},
		{name: "a wildcard DNS SAN grants no name", policy: secure, cert: node1SANs, node: "edge-1", hosts: []string{"x.wild.example"}, wantErr: `host name "x.wild.example"`},
		{name: "SANs do not cover other addresses", policy: secure, cert: node1SANs, node: "edge-1", ips: []string{"10.0.0.5", "10.0.0.6"}, wantErr: "node IP 10.0.0.6"},

		// --route-allow extends to node IPs and host names.
		{name: "rule: node IP inside the node's CIDR", policy: secure, cert: node1, node: "edge-1", ips: []string{"192.168.1.20"}},
		{name: "rule: node IP outside it", policy: secure, cert: node1, node: "edge-1", ips: []string{"192.168.2.20"}, wantErr: "node IP 192.168.2.20"},
		{name: "rule: another node's CIDR", policy: secure, cert: certSpec{cn: "system:node:edge-2"}, node: "edge-2", ips: []string{"192.168.1.20"}, wantErr: "node IP 192.168.1.20"},
		{name: "rule: a single address", policy: secure, cert: certSpec{cn: "system:node:pinned"}, node: "pinned", ips: []string{"10.30.0.7"}},
		{name: "rule: next to the single address", policy: secure, cert: certSpec{cn: "system:node:pinned"}, node: "pinned", ips: []string{"10.30.0.8"}, wantErr: "node IP 10.30.0.8"},
		{name: "rule: host name pattern", policy: secure, cert: node1, node: "edge-1", hosts: []string{"printer.site-1.example"}},
		{name: "rule: host name pattern of another node", policy: secure, cert: certSpec{cn: "system:node:edge-2"}, node: "edge-2", hosts: []string{"printer.site-1.example"}, wantErr: `host name "printer.site-1.example"`},
		{name: "rule: default does not grant host names", policy: secure, cert: certSpec{cn: "system:node:gateway"}, node: "gateway", hosts: []string{"kubernetes.default.svc"}, wantErr: "kubernetes.default.svc"},

		// With the API: the Node's own status.addresses.
		{name: "API: own addresses and names", policy: withAPI, cert: node1, node: "edge-1",
			ips: []string{"10.0.0.5", "203.0.113.5"}, hosts: []string{"edge-1", "EDGE-1.lan."}},
		{name: "API: another node's IP", policy: withAPI, cert: node1, node: "edge-1", ips: []string{"10.0.0.6"},
			wantErr: `node IP 10.0.0.6 is not among node "edge-1"'s addresses (checked its certificate's SANs, the --route-allow rules and its Node's status.addresses in the API)`},
		{name: "API: cloud metadata address", policy: withAPI, cert: node1, node: "edge-1", ips: []string{"169.254.169.254"}, wantErr: "node IP 169.254.169.254"},
		{name: "API: kubernetes.default.svc", policy: withAPI, cert: node1, node: "edge-1", hosts: []string{"kubernetes.default.svc"}, wantErr: `host name "kubernetes.default.svc"`},
		{name: "API: node missing", policy: withAPI, cert: certSpec{cn: "system:node:ghost"}, node: "ghost", ips: []string{"10.0.0.9"}, wantErr: `Node "ghost" does not exist in the API`},
		{name: "API: still checks the certificate", policy: withAPI, cert: certSpec{cn: "system:node:edge-2"}, node: "edge-1", wantErr: "certificate is for node"},
		{name: "API: not consulted when SANs and rules cover every claim", policy: noAPICalls, cert: node1SANs, node: "edge-1",
			ips: []string{"10.0.0.5", "192.168.1.1"}, hosts: []string{"edge-1", "edge-1.example"}},
		{name: "API: an error refuses", policy: noAPICalls, cert: node1, node: "edge-1", ips: []string{"10.0.0.5"}, wantErr: "API unavailable"},

		// CIDRs and the default route need rules, whatever else.
		{name: "CIDR inside the node's rule", policy: secure, cert: node1, node: "edge-1", cidrs: []string{"192.168.1.128/25"}},
		{name: "CIDR without a rule", policy: withAPI, cert: node1, node: "edge-1", cidrs: []string{"10.0.0.0/8"}, wantErr: `CIDR 10.0.0.0/8 is not allowed for node "edge-1"`},
		{name: "default route granted", policy: secure, cert: certSpec{cn: "system:node:gateway"}, node: "gateway", dflt: true},
		{name: "default route not granted", policy: secure, cert: node1, node: "edge-1", dflt: true, wantErr: "the default route is not allowed"},

		// The insecure flag opens node IPs and host names only.
		{name: "insecure: any address and name", policy: insecure, cert: node1, node: "edge-1",
			ips: []string{"10.0.0.6", "169.254.169.254", "10.96.0.1"}, hosts: []string{"kubernetes.default.svc"}},
		{name: "insecure: still checks the certificate", policy: insecure, cert: certSpec{cn: "system:node:edge-2"}, node: "edge-1", wantErr: "certificate is for node"},
		{name: "insecure: CIDRs still need a rule", policy: insecure, cert: node1, node: "edge-1", cidrs: []string{"0.0.0.0/0"}, wantErr: "CIDR 0.0.0.0/0"},
		{name: "insecure: the default route still needs a rule", policy: insecure, cert: node1, node: "edge-1", dflt: true, wantErr: "default route"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cert := &x509.Certificate{Subject: pkix.Name{CommonName: tc.cert.cn}, DNSNames: tc.cert.dns}
			for _, s := range tc.cert.ips {
				cert.IPAddresses = append(cert.IPAddresses, net.ParseIP(s))
			}
			h := &wire.Hello{NodeName: tc.node, HostNames: tc.hosts, DefaultRoute: tc.dflt}
			for _, s := range tc.ips {
				h.NodeIPs = append(h.NodeIPs, netip.MustParseAddr(s))
			}
			for _, s := range tc.cidrs {
				h.CIDRs = append(h.CIDRs, netip.MustParsePrefix(s))
			}
			checkErr(t, tc.policy.Authorize(context.Background(), cert, h), tc.wantErr)
		})
	}
}

func TestCertNodeAuthorizerAndChain(t *testing.T) {
	cert := &x509.Certificate{Subject: pkix.Name{CommonName: "system:node:edge-1"}}
	open := &wire.Hello{NodeName: "edge-1", NodeIPs: []netip.Addr{netip.MustParseAddr("169.254.169.254")}, DefaultRoute: true}
	checkErr(t, CertNodeAuthorizer{}.Authorize(context.Background(), cert, open), "")
	checkErr(t, CertNodeAuthorizer{}.Authorize(context.Background(), cert, &wire.Hello{NodeName: "edge-2"}), "certificate is for node")
	checkErr(t, Chain{CertNodeAuthorizer{}, Policy{}}.Authorize(context.Background(), cert, open), "the default route is not allowed")
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
}
