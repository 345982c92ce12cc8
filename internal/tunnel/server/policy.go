package server

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/netip"
	"strings"

	"github.com/causeway/causeway/internal/tunnel/wire"
)

// Policy is the server's default Authorizer. An agent whose certificate
// names node N (CN system:node:N) may register as N and claim:
//   - host name N itself;
//   - node IPs and host names its certificate vouches for (IP and DNS
//     SANs);
//   - with Nodes, those that N's Node object lists in status.addresses;
//   - node IPs inside a CIDR, and host names matching a host: pattern, of
//     a Routes rule for N: the administrator granted those already;
//   - CIDRs and the default route only under Routes.
//
// Anything else is refused: another node's IP, 169.254.169.254, the
// kubernetes Service IP or kubernetes.default.svc would otherwise pull the
// cloud's traffic for them into the agent.
type Policy struct {
	Routes RouteRules
	// Nodes, when set, is consulted for node IPs and host names that the
	// certificate and Routes do not cover.
	Nodes NodeGetter
	// InsecureAcceptAnyNodeAddress accepts every node IP and host name, as
	// the server did before this policy; CIDRs and the default route still
	// need Routes.
	InsecureAcceptAnyNodeAddress bool
}

// Authorize implements Authorizer.
func (p Policy) Authorize(ctx context.Context, cert *x509.Certificate, hello *wire.Hello) error {
	node := hello.NodeName
	if err := checkNodeName(cert, node); err != nil {
		return err
	}
	for _, c := range hello.CIDRs {
		if !p.Routes.allowsPrefix(node, c) {
			return fmt.Errorf("CIDR %s is not allowed for node %q (no --route-allow rule covers it)", c, node)
		}
	}
	if hello.DefaultRoute && !p.Routes.allowsDefault(node) {
		return fmt.Errorf("the default route is not allowed for node %q (no --route-allow rule grants it)", node)
	}
	if p.InsecureAcceptAnyNodeAddress {
		return nil
	}

	// Claims neither the certificate nor the rules vouch for; only the API
	// may still vouch for them.
	var ips []netip.Addr
	var names []string
	sans := certSANs(cert)
	for _, ip := range hello.NodeIPs {
		if !sans.ips[ip.Unmap()] && !p.Routes.allowsAddr(node, ip) {
			ips = append(ips, ip)
		}
	}
	for _, h := range hello.HostNames {
		n := normalizeName(h)
		if n == "" {
			return fmt.Errorf("empty host name claimed by node %q", node)
		}
		if n != normalizeName(node) && !sans.names[n] && !p.Routes.allowsHost(node, n) {
			names = append(names, h)
		}
	}
	if len(ips)+len(names) == 0 {
		return nil
	}

	checked := "its certificate's SANs and the --route-allow rules; no Kubernetes API is consulted"
	var api nodeAddrs
	if p.Nodes != nil {
		var err error
		if api, err = lookupNode(ctx, p.Nodes, node); err != nil {
			return err
		}
		checked = "its certificate's SANs, the --route-allow rules and its Node's status.addresses in the API"
		if api.missing {
			checked = fmt.Sprintf("its certificate's SANs and the --route-allow rules; Node %q does not exist in the API", node)
		}
	}
	for _, ip := range ips {
		if !api.ips[ip.Unmap()] {
			return fmt.Errorf("node IP %s is not among node %q's addresses (checked %s)", ip, node, checked)
		}
	}
	for _, h := range names {
		if !api.names[normalizeName(h)] {
			return fmt.Errorf("host name %q is not among node %q's names (checked %s)", h, node, checked)
		}
	}
	return nil
}

type sanSet struct {
	ips   map[netip.Addr]bool
	names map[string]bool
}

// certSANs are the IP and DNS subject alternative names of cert. Node
// client certificates from the kubelet signer carry none; certificates
// from files may list the node's addresses.
func certSANs(cert *x509.Certificate) sanSet {
	s := sanSet{ips: map[netip.Addr]bool{}, names: map[string]bool{}}
	for _, ip := range cert.IPAddresses {
		if a, ok := netip.AddrFromSlice(ip); ok {
			s.ips[a.Unmap()] = true
		}
	}
	for _, n := range cert.DNSNames {
		// A wildcard SAN names a server's domain; it does not make every
		// name in it this node's.
		if !strings.Contains(n, "*") {
			s.names[normalizeName(n)] = true
		}
	}
	return s
}
