package render

import (
	"fmt"

	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/causeway/causeway/internal/layout"
)

// maxQuoted bounds any single quoted value, well under nginx's 4 KiB token
// limit even when every byte needs escaping; nothing legitimate comes close.
const maxQuoted = 2048

// Quote is the one escaping helper: every string that reaches a template
// passes through it. It yields an nginx double-quoted string in which the
// configuration lexer sees exactly the input: backslashes and double quotes
// are escaped, so a value can never end its token, and ";", "{", "}" and
// "#" are inert inside quotes. It refuses what quoting cannot make safe:
// "$" (nginx expands variables inside quotes for many directives), control
// characters, invalid UTF-8 and over-long values. The model's grammars
// already exclude all of these; Quote is the second wall.
func Quote(s string) (string, error) {
	if len(s) > maxQuoted {
		return "", fmt.Errorf("value of %d bytes is longer than %d", len(s), maxQuoted)
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("value %q is not valid UTF-8", s)
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '$':
			return "", fmt.Errorf("value %q holds '$', which nginx would expand", s)
		case unicode.IsControl(r):
			return "", fmt.Errorf("value %q holds a control character", s)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String(), nil
}

// serverName renders a host for server_name. Hosts come validated from the
// model; they are checked again here because a wrong one would change
// routing. "*.foo.com" becomes a regular expression matching exactly one
// extra label, as Ingress wildcards do (nginx's own "*.foo.com" would also
// match "a.b.foo.com"). The regex ends with \z rather than "$", so Quote can
// keep refusing "$".
func serverName(host string) (string, error) {
	if host == "" {
		return "_", nil
	}
	name := strings.TrimPrefix(host, "*.")
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return "", fmt.Errorf("host %q has a character outside [a-z0-9.-]", host)
		}
	}
	if name == host {
		return Quote(host)
	}
	return Quote(`~^[^.]+\.` + strings.ReplaceAll(name, ".", `\.`) + `\z`)
}

// listen renders an address:port for listen, with IPv6 in brackets; an
// empty address means all addresses.
func listen(addr string, port int) (string, error) {
	if port < 1 || port > 65535 {
		return "", fmt.Errorf("port %d out of range", port)
	}
	p := strconv.Itoa(port)
	if addr == "" {
		return p, nil
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return "", fmt.Errorf("listen address: %w", err)
	}
	return netip.AddrPortFrom(a, uint16(port)).String(), nil
}

// upstreamName turns a backend key "namespace/service/port" into an nginx
// upstream name. Each part is a DNS label or port name from the model, so
// none contains "_", and joining with "_" is one-to-one.
func upstreamName(key string) (string, error) {
	parts := strings.Split(key, "/")
	if len(parts) != 3 {
		return "", fmt.Errorf("backend key %q is not namespace/service/port", key)
	}
	for _, p := range parts {
		if p == "" || len(p) > 63 {
			return "", fmt.Errorf("backend key %q has an empty or over-long part", key)
		}
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return "", fmt.Errorf("backend key %q has a character outside [a-z0-9-]", key)
			}
		}
	}
	return "be_" + strings.Join(parts, "_"), nil
}

// certMode is how nginx loads a host's certificate.
type certMode int

const (
	// certAtReload: a static path, read when the configuration loads; a
	// renewed certificate needs a reload.
	certAtReload certMode = iota
	// certPerHandshake: the path ends in an always-empty variable, which
	// makes nginx read the file at each handshake: renewals need no reload,
	// at the cost of a file read and parse per full handshake (measured:
	// about half the handshake rate). Used without the Lua module.
	certPerHandshake
	// certLua: a static path plus ssl_certificate_by_lua, which hands nginx
	// a copy parsed once per worker and dropped when the controller reports
	// changed files: no reload, and handshakes as fast as static.
	certLua
)

// certDirectives returns the ssl_certificate argument and, in certLua
// mode, the ssl_certificate_by_lua line for a TLS secret "namespace/name".
// Both parts of the key are re-checked (a DNS label and a DNS subdomain)
// because they become a path. A path joined to a variable or placed in a
// Lua string cannot be quoted, so it must need no quoting at all
// (quotedPathBody refuses anything else).
func certDirectives(dir layout.Dir, key string, mode certMode) (cert, lua string, err error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || !dnsChars(ns, false) || len(ns) > 63 || !dnsChars(name, true) || len(name) > 253 {
		return "", "", fmt.Errorf("secret %q is not namespace/name", key)
	}
	file := dir.Path(layout.SecretFile(ns, name))
	if mode == certAtReload {
		cert, err = Quote(file)
		return cert, "", err
	}
	plain, err := quotedPathBody(file)
	if err != nil {
		return "", "", err
	}
	if mode == certPerHandshake {
		return plain + "$" + CertReloadVariable, "", nil
	}
	return plain, `ssl_certificate_by_lua_block { require("causeway.certs").serve("` + plain + `") }`, nil
}

// CertReloadVariable is always empty; see secretPath.
const CertReloadVariable = "causeway_cert_reload"

// dnsChars reports whether s is non-empty and holds only [a-z0-9-], plus
// "." when dots is set, starting with a letter or digit.
func dnsChars(s string, dots bool) bool {
	if s == "" || s[0] == '-' || s[0] == '.' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || dots && r == '.') {
			return false
		}
	}
	return true
}
