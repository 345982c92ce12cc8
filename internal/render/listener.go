package render

import (
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
)

// Listener TLS, HSTS and HTTP/2: the http-level settings of the HTTPS
// listeners (templates/nginx.conf.tmpl, "Listener TLS"). Each value is
// re-checked here against a grammar at least as narrow as the
// ConfigMap's; a zero Config prints ingress-nginx's defaults.

// hstsVariable is empty on plain HTTP and holds the Strict-Transport-
// Security value on HTTPS; add_header sends nothing for an empty value.
const hstsVariable = "$causeway_hsts"

// TLSProtocols is ssl_protocols' list of fixed tokens.
func (v *mainView) TLSProtocols() (string, error) {
	p := v.Config.SSLProtocols
	if len(p) == 0 {
		p = model.DefaultConfig().SSLProtocols
	}
	return fixedTokens("TLS protocol", p, sslProtocols)
}

// TLSCiphers is ssl_ciphers' quoted list, or "" for OpenSSL's.
func (v *mainView) TLSCiphers() (string, error) {
	if v.Config.SSLCiphers == "" {
		return "", nil
	}
	return ciphers(v.Config.SSLCiphers)
}

// TLSCurves is ssl_ecdh_curve's ':'-joined list of fixed names, or auto.
func (v *mainView) TLSCurves() (string, error) {
	if len(v.Config.SSLECDHCurves) == 0 {
		return "auto", nil
	}
	for _, c := range v.Config.SSLECDHCurves {
		if !model.ECDHCurves[c] || strings.ContainsAny(c, ": ") {
			return "", fmt.Errorf("ECDH curve %q is not one OpenSSL knows", c)
		}
	}
	return strings.Join(v.Config.SSLECDHCurves, ":"), nil
}

// TLSSessionCacheSize is the shared session cache's size.
func (v *mainView) TLSSessionCacheSize() (string, error) {
	n := v.Config.SSLSessionCacheSize
	if n == 0 {
		n = model.DefaultConfig().SSLSessionCacheSize
	}
	if n < 0 {
		return "", fmt.Errorf("negative session cache size %d", n)
	}
	return nginxSize(model.Size(n))
}

// TLSSessionTimeout is ssl_session_timeout.
func (v *mainView) TLSSessionTimeout() (string, error) {
	d := v.Config.SSLSessionTimeout
	if d == 0 {
		d = model.DefaultConfig().SSLSessionTimeout
	}
	return nginxTime(d)
}

// HSTSValue is the quoted Strict-Transport-Security value, or "" when
// HSTS is off.
func (v *mainView) HSTSValue() (string, error) {
	h := v.Config.HSTS
	if setsHeader(v.Config.AddHeaders, "Strict-Transport-Security") {
		return "", nil
	}
	if !h.Enabled {
		if v.hstsOverridden {
			// Empty, for the servers with HSTS of their own (hsts.go).
			return `""`, nil
		}
		return "", nil
	}
	if h.MaxAge < 0 {
		return "", fmt.Errorf("negative HSTS max-age %d", h.MaxAge)
	}
	return Quote(h.Value())
}

// HSTSVariable names the variable of HSTSValue's map.
func (v *mainView) HSTSVariable() string { return hstsVariable }

// hstsHeader repeats the http level's Strict-Transport-Security in a
// location that adds headers of its own (nginx inherits add_header only
// into levels that add none), unless its own headers set it. overridden
// says that some server has HSTS of its own (hsts.go).
func hstsHeader(c model.Config, overridden bool, own []model.Header) (headerLine, bool) {
	if !c.HSTS.Enabled && !overridden {
		return headerLine{}, false
	}
	for _, h := range own {
		if strings.EqualFold(h.Name, "Strict-Transport-Security") {
			return headerLine{}, false
		}
	}
	return headerLine{Name: `"Strict-Transport-Security"`, Value: hstsVariable}, true
}

// defaultCertPath is the file of the certificate presented by hosts
// without one of their own: --default-ssl-certificate's Secret, or the
// self-generated one.
func defaultCertPath(m *model.Model, dir layout.Dir) (string, error) {
	if m.DefaultCertificate == "" {
		return dir.DefaultCert(), nil
	}
	for _, s := range m.Secrets {
		if s.Key() == m.DefaultCertificate {
			return dir.Path(layout.SecretFile(s.Namespace, s.Name)), nil
		}
	}
	return "", fmt.Errorf("default certificate %q is not in the model", m.DefaultCertificate)
}

// defaultCertArg is ssl_certificate's argument for the default
// certificate: its file, read at handshake time (the path ends in the
// always-empty variable), so that a renewed --default-ssl-certificate
// Secret needs no reload. Only the servers that need an SSL context of
// their own have it (tlscontext.go).
func defaultCertArg(m *model.Model, dir layout.Dir) (string, error) {
	path, err := defaultCertPath(m, dir)
	if err != nil {
		return "", err
	}
	p, err := quotedPathBody(path)
	if err != nil {
		return "", fmt.Errorf("default certificate: %w", err)
	}
	return p + "$" + CertReloadVariable, nil
}
