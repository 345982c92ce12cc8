package server

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/tunnel/wire"
)

// NodeGetter reads a Node; client-go's typed NodeInterface satisfies it.
type NodeGetter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Node, error)
}

// NodeAddressAuthorizer binds an agent to the Node object of its
// certificate: the node must exist, and every node IP and host name the
// agent registers must be one of that Node's status addresses (or its
// name). Without it any authenticated agent could claim another node's IP
// and receive its kubelet traffic.
//
// CIDRs and the default-route flag are not tied to a Node and are accepted
// from any authenticated agent.
type NodeAddressAuthorizer struct {
	Nodes NodeGetter
}

// Authorize implements Authorizer.
func (a NodeAddressAuthorizer) Authorize(ctx context.Context, cert *x509.Certificate, hello *wire.Hello) error {
	if err := checkNodeName(cert, hello.NodeName); err != nil {
		return err
	}
	node, err := a.Nodes.Get(ctx, hello.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("node %q does not exist in the API", hello.NodeName)
	}
	if err != nil {
		return fmt.Errorf("get node %q: %w", hello.NodeName, err)
	}
	ips := map[netip.Addr]bool{}
	names := map[string]bool{strings.ToLower(node.Name): true}
	for _, addr := range node.Status.Addresses {
		if ip, err := netip.ParseAddr(addr.Address); err == nil {
			ips[ip.Unmap()] = true
		} else {
			names[strings.ToLower(strings.TrimSuffix(addr.Address, "."))] = true
		}
	}
	for _, ip := range hello.NodeIPs {
		if !ips[ip.Unmap()] {
			return fmt.Errorf("node IP %s is not among node %q's addresses in the API", ip, node.Name)
		}
	}
	for _, h := range hello.HostNames {
		if !names[strings.ToLower(strings.TrimSuffix(h, "."))] {
			return fmt.Errorf("host name %q is not among node %q's addresses in the API", h, node.Name)
		}
	}
	return nil
}
