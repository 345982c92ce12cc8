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
	// Require refuses any request without a verified certificate.
	Require bool
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
