package controller

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/stapling"
)

// ReasonOCSP is the reason of the Problems of a TLS Secret whose
// certificate gets no OCSP response stapled.
const ReasonOCSP = "OCSPStapling"

// Stapler fetches the OCSP responses of the hosts' certificates;
// *stapling.Stapler implements it.
type Stapler interface {
	Keep(certs []stapling.Cert)
	Lookup(key string) stapling.Staple
	Changed() <-chan struct{}
}

// fillOCSP gives each served TLS Secret whose certificate names an OCSP
// responder the response fetched so far (enable-ocsp), and returns the
// Problems of those that get none. keep makes m's certificates the ones
// fetched from now on (false for the trial builds of bisection).
func (c *Controller) fillOCSP(m *model.Model, snap *source.Snapshot, keep bool) []model.Problem {
	st := c.opts.Staples
	if st == nil {
		return nil
	}
	if !m.Config.EnableOCSP || c.dyn == nil && m.Config.ReloadFreeCertificates {
		// Off, or certificates nginx reads per handshake, which it cannot
		// staple (the build says so).
		if keep {
			st.Keep(nil)
		}
		return nil
	}
	var problems []model.Problem
	var certs []stapling.Cert
	keys := map[*model.TLSSecret]string{}
	parsed := make(map[[32]byte]parsedChain, len(m.Secrets))
	for _, s := range m.Secrets {
		// Every build sees every Secret: parse a chain once, not per build.
		sum := sha256.Sum256(s.PEM)
		pc, ok := c.chains[sum]
		if !ok {
			pc.leaf, pc.issuer = chain(s.PEM)
		}
		parsed[sum] = pc
		leaf, issuer := pc.leaf, pc.issuer
		if leaf == nil || len(leaf.OCSPServer) == 0 {
			continue // nothing to ask
		}
		if issuer == nil {
			problems = append(problems, secretProblem(snap, s, "enable-ocsp: the certificate names an OCSP responder, but tls.crt holds no issuer "+
				"certificate after it, which the request needs; nothing is stapled"))
			continue
		}
		leafSum := sha256.Sum256(leaf.Raw)
		key := s.Key() + "@" + hex.EncodeToString(leafSum[:8])
		keys[s] = key
		certs = append(certs, stapling.Cert{Key: key, Leaf: leaf, Issuer: issuer})
	}
	if keep {
		st.Keep(certs)
		c.chains = parsed
	}
	for _, s := range m.Secrets {
		key, ok := keys[s]
		if !ok {
			continue
		}
		staple := st.Lookup(key)
		s.OCSP = staple.DER
		if staple.Err != nil {
			what := "nothing is stapled"
			if staple.DER != nil {
				what = "the last response, still valid, is stapled"
			}
			problems = append(problems, secretProblem(snap, s, fmt.Sprintf("enable-ocsp: %v; %s", staple.Err, what)))
		}
	}
	return problems
}

// parsedChain is a Secret's chain as fillOCSP parsed it.
type parsedChain struct{ leaf, issuer *x509.Certificate }

// chain is a PEM chain's first certificate and the one after it.
func chain(data []byte) (leaf, issuer *x509.Certificate) {
	var certs []*x509.Certificate
	for len(certs) < 2 {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, nil
		}
		certs = append(certs, c)
	}
	switch len(certs) {
	case 0:
		return nil, nil
	case 1:
		return certs[0], nil
	}
	return certs[0], certs[1]
}

// secretProblem is a Problem on a TLS Secret.
func secretProblem(snap *source.Snapshot, s *model.TLSSecret, msg string) model.Problem {
	ref := model.ObjectRef{Kind: "Secret", Namespace: s.Namespace, Name: s.Name}
	if snap != nil {
		for _, o := range snap.Secrets {
			if o.Namespace == s.Namespace && o.Name == s.Name {
				ref.UID = string(o.UID)
			}
		}
	}
	return model.Problem{Object: ref, Reason: ReasonOCSP, Message: msg}
}

// staplesChanged receives when a staple changed; nil (never) without a
// stapler.
func (c *Controller) staplesChanged() <-chan struct{} {
	if c.opts.Staples == nil {
		return nil
	}
	return c.opts.Staples.Changed()
}
