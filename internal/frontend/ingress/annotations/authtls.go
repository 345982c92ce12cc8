package annotations

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// authTLSGroup is ingress-nginx's client certificate authentication. nginx
// asks for the certificate during the TLS handshake, before it knows which
// Ingress a request is for, so the settings belong to the host: the oldest
// Ingress of a host that sets them wins. They are security settings: a
// value that cannot be used makes every path of the Ingress answer 503,
// and the host's paths too (see build.serverPolicy), never serves them
// without the check.
var authTLSGroup = Group{
	Name: "auth-tls",
	Annotations: supported("auth-tls",
		Annotation{Name: "auth-tls-secret", Names: model.KindSecret, Scope: ScopeServer, Default: "none (no client certificate is asked for)",
			Grammar: "namespace/name of a Secret in the Ingress's namespace holding ca.crt (PEM certificates) and optionally ca.crl (PEM CRLs); " +
				"a missing or invalid Secret makes every path of the host answer 503",
			Difference: "the Secret must be in the Ingress's own namespace; the other auth-tls annotations without this one close the paths instead of being ignored"},
		Annotation{Name: "auth-tls-verify-client", Scope: ScopeServer, Default: "on",
			Grammar: "on (a certificate the CA verifies is required: 400 otherwise), optional (checked when sent: 400 if invalid), " +
				"optional_no_ca (asked for, never refused; the backend sees ssl-client-verify) or off",
			Difference: "with on, plain-HTTP requests to the host answer 400 too (ingress-nginx serves them unless they are redirected to HTTPS)"},
		Annotation{Name: "auth-tls-verify-depth", Scope: ScopeServer, Default: "1",
			Grammar:    fmt.Sprintf("an integer from 1 to %d: the longest certificate chain accepted", model.MaxClientVerifyDepth),
			Difference: "values out of range close the paths instead of falling back to 1"},
		Annotation{Name: "auth-tls-error-page", Scope: ScopeServer, Default: "none (400)",
			Grammar:    "an absolute http or https URL, as permanent-redirect accepts it; a client without a valid certificate is redirected there (302)",
			Difference: "no relative paths or named locations"},
		Annotation{Name: "auth-tls-pass-certificate-to-upstream", Scope: ScopeServer, Default: "false",
			Grammar: "true or false: send the client certificate (URL-encoded PEM) to the backend in the ssl-client-cert header; " +
				"ssl-client-verify, ssl-client-subject-dn and ssl-client-issuer-dn are always sent",
			Difference: "a ssl-client-cert header that the client sent is removed when this is false (ingress-nginx passes it on)"},
		Annotation{Name: "auth-tls-match-cn", Scope: ScopeServer, Default: "none",
			Grammar: "\"CN=\" followed by a regular expression (the grammar of block-user-agents' regexes: no \"$\", quotes, \";\" or braces " +
				"other than repeat counts), searched for in the certificate's subject DN (CN=a,O=b); a request whose DN has no match answers 403",
			Difference: "the regex grammar is stricter than ingress-nginx's character list"},
	),
	Parse: parseAuthTLS,
}

// authTLSNames are the group's annotations.
var authTLSNames = []string{"auth-tls-secret", "auth-tls-verify-client", "auth-tls-verify-depth", "auth-tls-error-page",
	"auth-tls-pass-certificate-to-upstream", "auth-tls-match-cn"}

// ClientTLSSettings are the auth-tls annotations of one Ingress. Closed is
// set when one of them cannot be used: the host then answers 503.
type ClientTLSSettings struct {
	Secret          ObjectName
	Verify          model.ClientVerify
	Depth           int
	ErrorPage       string
	PassCertificate bool
	MatchCN         string
	Closed          bool
}

func parseAuthTLS(r *Reader, res *Result) {
	c := &ClientTLSSettings{Verify: model.VerifyOn, Depth: 1}
	fail := func(name, v string, err error) {
		r.FailClosed(name, v, err)
		c.Closed = true
	}
	if v, ok := r.Get("auth-tls-secret"); ok {
		n, err := parseProxySSLSecret(v, r.ref.Namespace)
		if err != nil {
			fail("auth-tls-secret", v, err)
		}
		c.Secret = n
	} else {
		for _, name := range authTLSNames[1:] {
			if v, ok := r.Get(name); ok {
				fail(name, v, errors.New("needs auth-tls-secret, the CA to verify client certificates against"))
			}
		}
		res.Server.ClientTLS = &ClientTLSSettings{Closed: true}
		r.setKeys(&res.Server.Keys, authTLSNames...)
		return
	}
	if v, ok := r.Get("auth-tls-verify-client"); ok {
		verify, err := parseClientVerify(v)
		if err != nil {
			fail("auth-tls-verify-client", v, err)
		}
		c.Verify = verify
	}
	if v, ok := r.Get("auth-tls-verify-depth"); ok {
		d, err := strconv.Atoi(v)
		if err != nil || d < 1 || d > model.MaxClientVerifyDepth || strings.TrimSpace(v) != v || v[0] == '+' || v[0] == '0' {
			fail("auth-tls-verify-depth", v, fmt.Errorf("want an integer from 1 to %d", model.MaxClientVerifyDepth))
		}
		c.Depth = d
	}
	if v, ok := r.Get("auth-tls-error-page"); ok {
		u, err := model.ParseRedirectURL(v)
		if err != nil {
			fail("auth-tls-error-page", v, err)
		}
		c.ErrorPage = u
	}
	if v, ok := r.Get("auth-tls-pass-certificate-to-upstream"); ok {
		pass, err := model.ParseBool(v)
		if err != nil {
			fail("auth-tls-pass-certificate-to-upstream", v, err)
		}
		c.PassCertificate = pass
	}
	if v, ok := r.Get("auth-tls-match-cn"); ok {
		cn, err := ParseMatchCN(v)
		if err != nil {
			fail("auth-tls-match-cn", v, err)
		}
		c.MatchCN = cn
	}
	if c.Closed {
		// Only the fact that the host must close is kept.
		c = &ClientTLSSettings{Closed: true}
	}
	res.Server.ClientTLS = c
	r.setKeys(&res.Server.Keys, authTLSNames...)
}

// clientVerify are the values of auth-tls-verify-client.
var clientVerify = map[string]bool{string(model.VerifyOn): true, string(model.VerifyOff): true,
	string(model.VerifyOptional): true, string(model.VerifyOptionalNoCA): true}

func parseClientVerify(s string) (model.ClientVerify, error) {
	v, err := model.ParseTokenList(s, clientVerify, 1)
	if err != nil {
		return "", errors.New("want on, off, optional or optional_no_ca")
	}
	return model.ClientVerify(v[0]), nil
}

// ParseMatchCN checks auth-tls-match-cn: "CN=" and a regular expression
// as model.ParseHeaderRegex accepts it. The result is printed quoted, in
// an nginx "if" that searches $ssl_client_s_dn.
func ParseMatchCN(s string) (string, error) {
	re, ok := strings.CutPrefix(s, "CN=")
	if !ok {
		return "", errors.New(`want "CN=" followed by a regular expression`)
	}
	if _, err := model.ParseHeaderRegex(re); err != nil {
		return "", err
	}
	return s, nil
}
