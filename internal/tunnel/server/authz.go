package server

import (
	"context"
	"crypto/x509"
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/tunnel/wire"
)

// Authorizer decides whether an agent holding cert may register what hello
// claims. It runs once per link, before the agent is routable.
type Authorizer interface {
	Authorize(ctx context.Context, cert *x509.Certificate, hello *wire.Hello) error
}

// NodeCNPrefix is the common-name prefix of node client certificates, as
// issued by the kubernetes.io/kube-apiserver-client signer for kubelets.
const NodeCNPrefix = "system:node:"

// CertNodeAuthorizer accepts a registration only when the node name equals
// the one in the certificate's common name (system:node:<name>), and then
// accepts every claim: any node IP, host name, CIDR and the default route.
// It is not the server's default (Policy is); tests of the transport use
// it, and custom chains may start with it.
type CertNodeAuthorizer struct{}

// Authorize implements Authorizer.
func (CertNodeAuthorizer) Authorize(_ context.Context, cert *x509.Certificate, hello *wire.Hello) error {
	return checkNodeName(cert, hello.NodeName)
}

func checkNodeName(cert *x509.Certificate, node string) error {
	cn := cert.Subject.CommonName
	certNode, ok := strings.CutPrefix(cn, NodeCNPrefix)
	if !ok || certNode == "" {
		return fmt.Errorf("certificate common name %q is not %s<node>", cn, NodeCNPrefix)
	}
	if node != certNode {
		return fmt.Errorf("certificate is for node %q but the agent claims node %q", certNode, node)
	}
	return nil
}

// Chain runs authorizers in order and stops at the first refusal.
type Chain []Authorizer

// Authorize implements Authorizer.
func (c Chain) Authorize(ctx context.Context, cert *x509.Certificate, hello *wire.Hello) error {
	for _, a := range c {
		if err := a.Authorize(ctx, cert, hello); err != nil {
			return err
		}
	}
	return nil
}
