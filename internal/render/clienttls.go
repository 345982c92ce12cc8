package render

import (
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
)

// clientTLSView is client certificate authentication of a server
// (ingress-nginx's auth-tls-*). nginx asks for and verifies the
// certificate in the handshake with the server that SNI chose, and
// answers 400 (or the error page) itself when verification fails; the
// server's own checks refuse what reaches it anyway: a plain-HTTP request
// when a certificate is required, and a subject DN that does not match.
type clientTLSView struct {
	// CA and CRL are the quoted files (layout.ProxyCAFile,
	// layout.ProxyCRLFile); CRL may be "".
	CA, CRL string
	// Verify is one of the fixed ssl_verify_client values.
	Verify string
	Depth  int
	// Require refuses any request without a verified certificate; with
	// Close, by closing the connection without an answer (444).
	Require, Close bool
	// ErrorPage is the quoted redirect target, or "".
	ErrorPage string
	// MatchCN is the quoted regex $ssl_client_s_dn must contain a match of.
	MatchCN string
}

var clientVerifyValues = map[model.ClientVerify]bool{model.VerifyOn: true, model.VerifyOff: true,
	model.VerifyOptional: true, model.VerifyOptionalNoCA: true}

// planClientTLS prints srv.ClientTLS. The CA and CRL files are read when
// nginx loads its configuration; Render hashes them into the version.
func (sp *serverPlan) planClientTLS() error {
	c := sp.srv.ClientTLS
	if l := sp.srv.Listeners; l != nil && l.HTTPS != nil && l.HTTPS.ClientCA != "" {
		if c != nil || l.HTTP != nil {
			// The model never makes one: a Gateway listener's servers
			// have no client verification of their own, nor cleartext.
			return fmt.Errorf("a server on HTTPS listener %s, which checks client certificates, with its own verification or a cleartext listener", l.HTTPS.Name)
		}
		v, err := listenerClientTLS(l.HTTPS, sp.rc.m, sp.rc.p)
		sp.v.ClientTLS = v
		return err
	}
	if c == nil {
		return nil
	}
	if !clientVerifyValues[c.Verify] {
		return fmt.Errorf("client certificate verification %q", c.Verify)
	}
	if c.Depth < 1 || c.Depth > model.MaxClientVerifyDepth {
		return fmt.Errorf("client certificate verify depth %d", c.Depth)
	}
	v := &clientTLSView{Verify: string(c.Verify), Depth: c.Depth, Require: c.Verify == model.VerifyOn}
	s := sp.proxySecret(c.Secret)
	if s == nil || len(s.CA) == 0 {
		return fmt.Errorf("client CA secret %q is not in the model", c.Secret)
	}
	ns, name, err := secretParts(c.Secret)
	if err != nil {
		return err
	}
	if v.CA, err = Quote(sp.rc.p.StateDir.Path(layout.ProxyCAFile(ns, name))); err != nil {
		return err
	}
	if len(s.CRL) > 0 {
		if v.CRL, err = Quote(sp.rc.p.StateDir.Path(layout.ProxyCRLFile(ns, name))); err != nil {
			return err
		}
	}
	if c.ErrorPage != "" {
		u, err := model.ParseRedirectURL(c.ErrorPage)
		if err != nil {
			return fmt.Errorf("client certificate error page: %w", err)
		}
		if v.ErrorPage, err = Quote(u); err != nil {
			return err
		}
	}
	if c.MatchCN != "" {
		re, ok := strings.CutPrefix(c.MatchCN, "CN=")
		if !ok {
			return fmt.Errorf("client certificate CN pattern %q", c.MatchCN)
		}
		if _, err := model.ParseHeaderRegex(re); err != nil {
			return fmt.Errorf("client certificate CN pattern: %w", err)
		}
		if v.MatchCN, err = Quote(c.MatchCN); err != nil {
			return err
		}
	}
	sp.v.ClientTLS = v
	return nil
}

// clientHeaders adds the client certificate headers to a request header
// block of a server with client authentication: a level that sets any
// header inherits none, so every block repeats them.
func (sp *serverPlan) clientHeaders(h *headersView) *headersView {
	if c := sp.srv.ClientTLS; c != nil {
		h.ClientInfo = true
		h.ClientCert = c.PassCertificate
	}
	return sp.rc.traceHeaders(h)
}

// listenerClientVerifyDepth is how long a client's chain to a listener's
// CA may be, as for backends (BackendTLSPolicy).
const listenerClientVerifyDepth = 4

// listenerClientTLS is the client certificate check of an HTTPS listener
// (model.HTTPListener.ClientCA) for its servers and its default server:
// every client is asked for a certificate, checked against the CA
// bundle; without a valid one the connection is closed unanswered (nginx's
// own refusal, 495 or 496, too), or with ClientCAOptional served all the
// same. nginx's own refusal would answer 400, which a client could take
// for the backend's.
func listenerClientTLS(l *model.HTTPListener, m *model.Model, p Params) (*clientTLSView, error) {
	if l.ClientCA == "" {
		return nil, nil
	}
	if !l.SSL {
		return nil, fmt.Errorf("listener %s checks client certificates without TLS", l.Name)
	}
	var ca *model.ProxyCA
	for _, c := range m.ProxyCAs {
		if c.Key() == l.ClientCA {
			ca = c
		}
	}
	if ca == nil || len(ca.CA) == 0 {
		return nil, fmt.Errorf("listener %s: ConfigMap CA bundle %q is not in the model", l.Name, l.ClientCA)
	}
	ns, name, err := secretParts(l.ClientCA)
	if err != nil {
		return nil, err
	}
	v := &clientTLSView{Verify: string(model.VerifyOptionalNoCA), Depth: listenerClientVerifyDepth, Require: !l.ClientCAOptional, Close: true}
	if l.ClientCAOptional {
		// Every client is served: nginx asks for a certificate but
		// checks it against no CA, since it refuses some it cannot
		// verify (a bad signature, an expired one) with 400 itself.
		return v, nil
	}
	if v.CA, err = Quote(p.StateDir.Path(layout.ProxyConfigMapCAFile(ns, name))); err != nil {
		return nil, err
	}
	return v, nil
}
