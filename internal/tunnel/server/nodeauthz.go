package server

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeGetter reads a Node; client-go's typed NodeInterface satisfies it.
type NodeGetter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Node, error)
}

// nodeAddrs are the addresses a Node object lists for itself.
type nodeAddrs struct {
	ips   map[netip.Addr]bool
	names map[string]bool
	// missing is set when the Node does not exist.
	missing bool
}

// lookupNode reads node's status.addresses (and its name). A missing Node
// is not an error: it vouches for nothing, and the caller says so.
func lookupNode(ctx context.Context, nodes NodeGetter, name string) (nodeAddrs, error) {
	a := nodeAddrs{ips: map[netip.Addr]bool{}, names: map[string]bool{}}
	node, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		a.missing = true
		return a, nil
	}
	if err != nil {
		return a, fmt.Errorf("get node %q: %w", name, err)
	}
	a.names[normalizeName(node.Name)] = true
	for _, addr := range node.Status.Addresses {
		if ip, err := netip.ParseAddr(addr.Address); err == nil {
			a.ips[ip.Unmap()] = true
		} else {
			a.names[normalizeName(addr.Address)] = true
		}
	}
	return a, nil
}
