package nic

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// The TLS policies: ingressMTLS is the server's client certificate check
// (the auth-tls-* annotations' model.ClientTLS), egressMTLS the TLS
// client towards upstreams (proxy-ssl-*'s model.UpstreamTLS). The Secrets
// they name are resolved by the builder.

// IngressMTLS is an ingressMTLS policy.
type IngressMTLS struct {
	// CASecret is the nginx.org/ca Secret (ca.crt, optionally ca.crl) in
	// the Policy's namespace.
	CASecret string
	Verify   model.ClientVerify
	Depth    int
}

// EgressMTLS is an egressMTLS policy.
type EgressMTLS struct {
	// TLSSecret is a kubernetes.io/tls Secret with the client certificate
	// presented to upstreams; "" presents none.
	TLSSecret string
	// TrustedSecret is an nginx.org/ca Secret to verify upstreams with.
	TrustedSecret string
	// TLS holds the rest; its secrets are the builder's to fill in.
	TLS model.UpstreamTLS
}

// verifyClients are ingressMTLS's verifyClient values.
var verifyClients = []model.ClientVerify{model.VerifyOn, model.VerifyOff, model.VerifyOptional, model.VerifyOptionalNoCA}

func (t *translator) ingressMTLS(m *nicv1.IngressMTLS) (*IngressMTLS, error) {
	if m.ClientCertSecret == "" {
		return nil, errors.New("spec.ingressMTLS.clientCertSecret is required")
	}
	out := &IngressMTLS{CASecret: m.ClientCertSecret, Verify: model.VerifyOn, Depth: 1}
	if m.VerifyClient != "" {
		out.Verify = model.ClientVerify(m.VerifyClient)
		if !slices.Contains(verifyClients, out.Verify) {
			return nil, fmt.Errorf("spec.ingressMTLS.verifyClient %q: want on, off, optional or optional_no_ca", model.Truncate(m.VerifyClient))
		}
	}
	if m.VerifyDepth != nil {
		if *m.VerifyDepth < 0 || *m.VerifyDepth > model.MaxClientVerifyDepth {
			return nil, fmt.Errorf("spec.ingressMTLS.verifyDepth %d: want 0 to %d", *m.VerifyDepth, model.MaxClientVerifyDepth)
		}
		out.Depth = max(*m.VerifyDepth, 1)
	}
	if m.CrlFileName != "" {
		t.unsupported("spec.ingressMTLS.crlFileName", "Causeway reads no files of the controller's; put the CRL in the Secret's ca.crl")
	}
	return out, nil
}

// egressProtocols are the protocols offered to upstreams, as
// proxy-ssl-protocols allows them.
var egressProtocols = map[string]bool{"TLSv1.2": true, "TLSv1.3": true}

func (t *translator) egressMTLS(e *nicv1.EgressMTLS) (*EgressMTLS, error) {
	const f = "spec.egressMTLS."
	if e.VerifyServer && e.TrustedCertSecret == "" {
		return nil, errors.New(f + "verifyServer needs trustedCertSecret")
	}
	out := &EgressMTLS{TLSSecret: e.TLSSecret, TrustedSecret: e.TrustedCertSecret,
		TLS: model.UpstreamTLS{Verify: e.VerifyServer, VerifyDepth: 1, ServerName: e.ServerName}}
	if e.VerifyDepth != nil {
		if *e.VerifyDepth < 0 || *e.VerifyDepth > model.MaxClientVerifyDepth {
			return nil, fmt.Errorf(f+"verifyDepth %d: want 0 to %d", *e.VerifyDepth, model.MaxClientVerifyDepth)
		}
		out.TLS.VerifyDepth = max(*e.VerifyDepth, 1)
	}
	if e.SSLName != "" {
		if err := model.ValidateHost(e.SSLName); err != nil || strings.HasPrefix(e.SSLName, "*.") {
			return nil, fmt.Errorf(f+"sslName %q: want a DNS name", model.Truncate(e.SSLName))
		}
		out.TLS.Name = e.SSLName
	}
	if e.Protocols != "" {
		all, err := model.ParseTokenList(e.Protocols, model.TLSProtocols, len(model.TLSProtocols))
		if err != nil {
			return nil, fmt.Errorf(f+"protocols %q: %v", model.Truncate(e.Protocols), err)
		}
		for _, p := range all {
			if egressProtocols[p] {
				out.TLS.Protocols = append(out.TLS.Protocols, p)
			} else {
				t.unsupported(f+"protocols "+p, "only TLSv1.2 and TLSv1.3 are offered to upstreams, as with proxy-ssl-protocols")
			}
		}
		if len(out.TLS.Protocols) == 0 {
			return nil, fmt.Errorf(f+"protocols %q: want TLSv1.2 or TLSv1.3", model.Truncate(e.Protocols))
		}
	}
	if e.Ciphers != "" {
		c, err := model.ParseCipherList(e.Ciphers)
		if err != nil {
			return nil, fmt.Errorf(f+"ciphers: %v", err)
		}
		out.TLS.Ciphers = c
	}
	if e.SessionReuse != nil && *e.SessionReuse {
		t.unsupported(f+"sessionReuse", "TLS sessions with upstreams are not reused (proxy_ssl_session_reuse off)")
	}
	return out, nil
}
