package render

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
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
	return hostMatch(host, "~")
}

// anyDepthName renders a wildcard host that matches any number of labels
// (model.Server.AnyDepth) as nginx's own wildcard name, which does, and
// which nginx prefers over shorter wildcards as Gateway API asks.
func anyDepthName(host string) (string, error) {
	if _, err := hostMatch(host, "~"); err != nil {
		return "", err
	}
	return Quote(host)
}

// hostMatch renders a host as a quoted name, or for "*.suffix" as a
// regular expression of operator op ("~", or "~*" to ignore case)
// matching exactly one label before suffix.
func hostMatch(host, op string) (string, error) {
	name := strings.TrimPrefix(host, "*.")
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return "", fmt.Errorf("host %q has a character outside [a-z0-9.-]", host)
		}
	}
	if name == host {
		return Quote(host)
	}
	return Quote(op + `^[^.]+\.` + strings.ReplaceAll(name, ".", `\.`) + `\z`)
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
// (quotedPathBody refuses anything else). With ocsp, the Lua line also
// names the secret's OCSP response file (layout.OCSPFile), which
// causeway.certs staples when it exists.
func certDirectives(dir layout.Dir, key string, mode certMode, ocsp bool) (cert, lua string, err error) {
	ns, name, err := secretParts(key)
	if err != nil {
		return "", "", err
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
	if ocsp {
		staple, err := quotedPathBody(dir.Path(layout.OCSPFile(ns, name)))
		if err != nil {
			return "", "", err
		}
		return plain, certsServe + `("` + plain + `", "` + staple + `") }`, nil
	}
	return plain, certsServe + `("` + plain + `") }`, nil
}

// certsServe opens the Lua block that serves a certificate (its path, and
// the OCSP response's, follow); certsServeTable is its form for the servers
// where hosts of the hosts table land (hop.go).
const (
	certsServe      = `ssl_certificate_by_lua_block { require("causeway.certs").serve`
	certsServeTable = `ssl_certificate_by_lua_block { require("causeway.certs").serve_table`
)

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

// The generators below emit the few values that must hold a '$' (a regex
// end anchor, a capture reference, a fixed nginx variable) or that nginx
// reads as a list of tokens. Each re-validates its input against a grammar
// at least as narrow as the model's and refuses everything else.

// regexChars are the characters a path regular expression may hold.
var regexChars = regexp.MustCompile(`^[A-Za-z0-9/._~!*()+,=:@&?|\[\]^$\\{}-]+$`)

// regexLocation re-checks a path regular expression (model.Regex) and
// returns it with every end anchor '$' replaced by \z, which PCRE and RE2
// both read as the end of the subject, so the result passes Quote. A '$'
// that is not an anchor (escaped, or inside a character class) is refused.
func regexLocation(re string) (string, error) {
	if len(re) > maxQuoted || !regexChars.MatchString(re) {
		return "", fmt.Errorf("path regex %q holds a character outside [A-Za-z0-9/._~!*()+,=:@&?|[]^$\\{}-]", re)
	}
	if _, err := regexp.Compile(re); err != nil {
		return "", fmt.Errorf("path regex %q: %w", re, err)
	}
	var b strings.Builder
	for i := 0; i < len(re); i++ {
		switch c := re[i]; c {
		case '\\':
			if i+1 == len(re) || re[i+1] == '$' {
				return "", fmt.Errorf("path regex %q: '$' must be an end anchor", re)
			}
			b.WriteString(re[i : i+2])
			i++
		case '[':
			end, err := classEnd(re, i)
			if err != nil {
				return "", err
			}
			b.WriteString(re[i:end])
			i = end - 1
		case '$':
			b.WriteString(`\z`)
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	if _, err := regexp.Compile(out); err != nil {
		return "", fmt.Errorf("path regex %q: %w", re, err)
	}
	return out, nil
}

// classEnd returns the index just past the character class opening at
// re[start], refusing a '$' inside it. A ']' first in the class (after an
// optional '^') is a literal, and [:name:] is a POSIX class.
func classEnd(re string, start int) (int, error) {
	i := start + 1
	if i < len(re) && re[i] == '^' {
		i++
	}
	if i < len(re) && re[i] == ']' {
		i++
	}
	for ; i < len(re); i++ {
		switch {
		case re[i] == '$':
			return 0, fmt.Errorf("path regex %q: '$' must be an end anchor", re)
		case re[i] == '\\':
			if i+1 < len(re) && re[i+1] == '$' {
				return 0, fmt.Errorf("path regex %q: '$' must be an end anchor", re)
			}
			i++
		case strings.HasPrefix(re[i:], "[:"):
			end := strings.Index(re[i+2:], ":]")
			if end < 0 {
				return 0, fmt.Errorf("path regex %q: unterminated [: class", re)
			}
			i += 2 + end + 1
		case re[i] == ']':
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("path regex %q: unterminated character class", re)
}

// replacementChars are the characters of a rewrite target besides its
// capture references: a path's, without '?' (which would change how nginx
// passes the query string on).
const replacementChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._~!*()+,=:@&-"

// rewriteReplacement returns the quoted replacement of a rewrite directive.
// It starts with '/' or a capture reference, so nginx never reads it as a
// redirect, and '$' occurs only as $1 to $9, which nginx expands inside the
// quotes.
func rewriteReplacement(target string) (string, error) {
	if target == "" || len(target) > maxQuoted {
		return "", fmt.Errorf("rewrite target of %d bytes", len(target))
	}
	if target[0] != '/' && target[0] != '$' {
		return "", fmt.Errorf("rewrite target %q must start with / or a capture", target)
	}
	for i := 0; i < len(target); i++ {
		c := target[i]
		if c == '$' {
			if i+1 == len(target) || target[i+1] < '1' || target[i+1] > '9' {
				return "", fmt.Errorf("rewrite target %q: '$' must start a capture $1 to $9", target)
			}
			if i+2 < len(target) && target[i+2] >= '0' && target[i+2] <= '9' {
				// nginx would read $1 and a digit, not a tenth group.
				return "", fmt.Errorf("rewrite target %q: a capture $1 to $9 must not be followed by a digit", target)
			}
			i++
			continue
		}
		if strings.IndexByte(replacementChars, c) < 0 {
			return "", fmt.Errorf("rewrite target %q holds %q", target, c)
		}
	}
	return `"` + target + `"`, nil
}

// nginxVar is a variable a generator may join to validated literals; only
// the constants below exist, so user input never names a variable.
type nginxVar string

const (
	varScheme      nginxVar = "scheme"
	varHTTPHost    nginxVar = "http_host"
	varRequestURI  nginxVar = "request_uri"
	varServerPort  nginxVar = "server_port"
	varRedirectURI nginxVar = "causeway_redirect_uri" // nginx.conf.tmpl
)

// joinVars returns one quoted token of fixed variables and literals. The
// variables are braced, so a literal can never extend a variable's name;
// literals must need no escaping and hold no '$', '{' or '}'.
func joinVars(parts ...any) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for _, part := range parts {
		switch p := part.(type) {
		case nginxVar:
			switch p {
			case varScheme, varHTTPHost, varRequestURI, varServerPort, varRedirectURI:
			default:
				return "", fmt.Errorf("variable %q is not one a generator may emit", p)
			}
			b.WriteString("${" + string(p) + "}")
		case string:
			q, err := Quote(p)
			if err != nil {
				return "", err
			}
			if q != `"`+p+`"` || strings.ContainsAny(p, "{} \t") {
				return "", fmt.Errorf("value %q must not need quoting", p)
			}
			b.WriteString(p)
		default:
			return "", fmt.Errorf("joinVars: %T", part)
		}
	}
	b.WriteByte('"')
	if b.Len() > maxQuoted {
		return "", fmt.Errorf("value of %d bytes is longer than %d", b.Len(), maxQuoted)
	}
	return b.String(), nil
}

// pathOnly are the characters of an Exact or Prefix path (model.pathChars).
var pathOnly = regexp.MustCompile(`^/[A-Za-z0-9._~!*()+,=:@&/-]*$`)

// appRootURL is the 302 target of app-root: the request's scheme and Host
// followed by the path, as ingress-nginx sends it.
func appRootURL(path string) (string, error) {
	if !pathOnly.MatchString(path) {
		return "", fmt.Errorf("app-root %q must be a path of [A-Za-z0-9._~!*()+,=:@&/-]", path)
	}
	return joinVars(varScheme, "://", varHTTPHost, path)
}

// hostRedirectURL is the target of a redirect to host with the request's
// scheme, port (unless both listeners use the standard ports) and URI.
func hostRedirectURL(host string, port bool, uri nginxVar) (string, error) {
	if !dnsChars(host, true) || len(host) > 253 {
		return "", fmt.Errorf("redirect host %q is not a DNS name", host)
	}
	if port {
		return joinVars(varScheme, "://", host, ":", varServerPort, uri)
	}
	return joinVars(varScheme, "://", host, uri)
}

// urlChars are the characters of a mirror URL: a path's, plus the query
// and IPv6 literal characters.
var urlChars = regexp.MustCompile(`^[A-Za-z0-9._~!*()+,=:@&/?%\[\]-]+$`)

// mirrorURL returns the quoted proxy_pass target of a mirror: an absolute
// http(s) URL, optionally followed by the literal "$request_uri".
func mirrorURL(u string) (string, error) {
	base, withURI := strings.CutSuffix(u, "$"+string(varRequestURI))
	if !urlChars.MatchString(base) {
		return "", fmt.Errorf("mirror URL %q holds a character outside [A-Za-z0-9._~!*()+,=:@&/?%%[]-]", u)
	}
	p, err := url.Parse(base)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil || p.Opaque != "" {
		return "", fmt.Errorf("mirror URL %q must be an absolute http(s) URL", u)
	}
	if withURI {
		return joinVars(base, varRequestURI)
	}
	return Quote(base)
}

// origin is a CORS origin: scheme://host[:port], the host optionally
// starting with "*." for exactly one label.
var origin = regexp.MustCompile(`^([a-z][a-z0-9+.-]*://)(\*\.)?([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?::[0-9]{1,5})?)$`)

// originRegex returns a regular expression matching exactly one allowed
// origin, anchored with ^ and \z (not '$', so Quote takes it). A wildcard
// label matches one DNS label; every other character is literal.
func originRegex(o string) (string, error) { return originRegexDepth(o, false) }

// originRegexDepth is originRegex whose wildcard matches one or more
// labels when anyDepth (Gateway API's wildcard origins).
func originRegexDepth(o string, anyDepth bool) (string, error) {
	if o == "null" {
		return `^null\z`, nil
	}
	m := origin.FindStringSubmatch(o)
	if m == nil {
		return "", fmt.Errorf("CORS origin %q is not scheme://host[:port]", o)
	}
	re := "^" + regexp.QuoteMeta(m[1])
	if m[2] != "" && anyDepth {
		re += `(?:[A-Za-z0-9-]+\.)+`
	} else if m[2] != "" {
		re += `[A-Za-z0-9-]+\.`
	}
	return re + regexp.QuoteMeta(m[3]) + `\z`, nil
}

// headerName re-checks a header or CORS token: RFC 9110 token characters
// that carry no meaning to nginx.
// A loop, not a regexp: it runs for every token of every location.
func headerName(s string) bool {
	if len(s) == 0 || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// tokenList returns the quoted, comma-separated list of header names or
// methods ("*" allowed when star).
func tokenList(what string, tokens []string, star bool) (string, error) {
	for _, t := range tokens {
		if !headerName(t) && !(star && t == "*") {
			return "", fmt.Errorf("%s %q is not a token", what, t)
		}
	}
	if len(tokens) == 0 {
		return "", nil
	}
	return Quote(strings.Join(tokens, ", "))
}

// nextUpstreamTokens are the conditions proxy_next_upstream and
// grpc_next_upstream take.
var nextUpstreamTokens = map[string]bool{
	"error": true, "timeout": true, "invalid_header": true, "http_500": true, "http_502": true,
	"http_503": true, "http_504": true, "http_403": true, "http_404": true, "http_429": true,
	"non_idempotent": true, "off": true,
}

// sslProtocols are the protocols proxy_ssl_protocols takes.
var sslProtocols = map[string]bool{"TLSv1": true, "TLSv1.1": true, "TLSv1.2": true, "TLSv1.3": true}

// fixedTokens returns tokens space-separated, each from allowed.
func fixedTokens(what string, tokens []string, allowed map[string]bool) (string, error) {
	for _, t := range tokens {
		if !allowed[t] {
			return "", fmt.Errorf("%s %q is not one nginx knows", what, t)
		}
	}
	return strings.Join(tokens, " "), nil
}

// cipherChars is OpenSSL's cipher list grammar.
var cipherChars = regexp.MustCompile(`^[A-Za-z0-9:+!@._=-]+$`)

func ciphers(c string) (string, error) {
	if len(c) > 1024 || !cipherChars.MatchString(c) {
		return "", fmt.Errorf("cipher list %q holds a character outside [A-Za-z0-9:+!@._=-]", c)
	}
	return Quote(c)
}

// nginxTime prints a positive duration in nginx's time syntax: whole
// seconds as "60s", anything else in milliseconds, rounded up.
func nginxTime(d time.Duration) (string, error) {
	switch {
	case d < 0:
		return "", fmt.Errorf("negative duration %s", d)
	case d == 0:
		return "", nil
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s", nil
	}
	return strconv.FormatInt(int64((d+time.Millisecond-1)/time.Millisecond), 10) + "ms", nil
}

// nginxSize prints a byte count in nginx's size syntax ("1m", "8k", "100").
func nginxSize(n model.Size) (string, error) {
	switch {
	case n < 0:
		return "", fmt.Errorf("negative size %d", n)
	case n > 0 && n%(1<<20) == 0:
		return strconv.FormatInt(int64(n>>20), 10) + "m", nil
	case n > 0 && n%(1<<10) == 0:
		return strconv.FormatInt(int64(n>>10), 10) + "k", nil
	}
	return strconv.FormatInt(int64(n), 10), nil
}

// secretParts re-checks a secret key "namespace/name": a DNS label and a
// DNS subdomain, since both become part of a path.
func secretParts(key string) (ns, name string, err error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || !dnsChars(ns, false) || len(ns) > 63 || !dnsChars(name, true) || len(name) > 253 {
		return "", "", fmt.Errorf("secret %q is not namespace/name", key)
	}
	return ns, name, nil
}

// realIPCIDR prints a trusted peer prefix for set_real_ip_from and geo:
// a valid, masked prefix, whose text can hold only hex digits, ".", ":"
// and "/".
func realIPCIDR(p netip.Prefix) (string, error) {
	if !p.IsValid() || p != p.Masked() {
		return "", fmt.Errorf("trusted CIDR %s is not a masked prefix", p)
	}
	s := p.String()
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '.' || c == ':' || c == '/') {
			return "", fmt.Errorf("trusted CIDR %q holds %q", s, c)
		}
	}
	return s, nil
}

// realIPHeaderName prints the header real_ip_header reads: 1 to 128
// letters, digits and "-" (so never "proxy_protocol", which the caller
// writes itself).
func realIPHeaderName(name string) (string, error) {
	if name == "" || len(name) > 128 {
		return "", fmt.Errorf("real IP header %q: want 1 to 128 characters", name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return "", fmt.Errorf("real IP header %q holds %q", name, c)
		}
	}
	return name, nil
}

// quoteTemplate returns a snippet value (model.Template) as one quoted
// token: literals escaped by Quote (so they hold no '$'), variables
// braced as ${name} with the name re-checked, regex groups as $1 to $9
// (nginx reads one digit after '$', and ${1} would name a variable).
func quoteTemplate(t model.Template) (string, error) { return quoteTemplateWith(t, Quote) }

// quoteTextTemplate is quoteTemplate for response text, whose literals
// may hold newlines, tabs and carriage returns (quoteText).
func quoteTextTemplate(t model.Template) (string, error) { return quoteTemplateWith(t, quoteText) }

// quoteText is Quote for response text: newlines, tabs and carriage
// returns are written as nginx's \n, \t and \r escapes, and every run
// between them passes through Quote.
func quoteText(s string) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for {
		i := strings.IndexAny(s, "\n\t\r")
		run := s
		if i >= 0 {
			run = s[:i]
		}
		q, err := Quote(run)
		if err != nil {
			return "", err
		}
		b.WriteString(q[1 : len(q)-1])
		if i < 0 {
			break
		}
		b.WriteString(map[byte]string{'\n': `\n`, '\t': `\t`, '\r': `\r`}[s[i]])
		s = s[i+1:]
	}
	b.WriteByte('"')
	if b.Len() > maxQuoted {
		return "", fmt.Errorf("value of %d bytes is longer than %d", b.Len(), maxQuoted)
	}
	return b.String(), nil
}

func quoteTemplateWith(t model.Template, quote func(string) (string, error)) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for _, p := range t {
		switch v := p.Variable; {
		case v == "":
			q, err := quote(p.Literal)
			if err != nil {
				return "", err
			}
			b.WriteString(q[1 : len(q)-1])
		case len(v) == 1 && v[0] >= '1' && v[0] <= '9':
			b.WriteString("$" + v)
		case variableName(v):
			b.WriteString("${" + userVariable(v) + "}")
		default:
			return "", fmt.Errorf("variable name %q", v)
		}
	}
	b.WriteByte('"')
	if b.Len() > maxQuoted {
		return "", fmt.Errorf("value of %d bytes is longer than %d", b.Len(), maxQuoted)
	}
	return b.String(), nil
}

// requestIDAlias is what nginx reads for "$request_id" in what users
// write (snippets, log-format-upstream, cache keys): ingress-nginx's
// meaning, where it is the ID a request without a client's X-Request-ID
// sends its backend. With the Lua balancer that ID is not nginx's own
// $request_id (requestid.go), so nginx.conf defines this to match.
const requestIDAlias = "causeway_nginx_request_id"

// userVariable is the variable nginx reads for a variable a user names.
func userVariable(name string) string {
	if name == "request_id" {
		return requestIDAlias
	}
	return name
}

// variableName reports whether s is a variable name a snippet may use:
// lower-case letters, digits and '_', starting with a letter, not one of
// Causeway's.
func variableName(s string) bool {
	if s == "" || len(s) > 64 || s[0] < 'a' || s[0] > 'z' || strings.HasPrefix(s, "causeway") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// rewriteRegex returns the quoted regex of a snippet's rewrite: "^" and a
// path regex that regexLocation re-checks (its end anchors become \z).
func rewriteRegex(re string) (string, error) {
	rest, ok := strings.CutPrefix(re, "^")
	if !ok {
		return "", fmt.Errorf("rewrite regex %q is not anchored", re)
	}
	out, err := regexLocation(rest)
	if err != nil {
		return "", err
	}
	return Quote("^" + out)
}

// staplingFile is the quoted OCSP response file of secret key when the
// model holds a response for it, "" otherwise: nginx's ssl_stapling_file
// must exist when it loads the configuration.
func staplingFile(m *model.Model, dir layout.Dir, key string) (string, error) {
	for _, s := range m.Secrets {
		if s.Key() == key && len(s.OCSP) > 0 {
			return Quote(dir.Path(layout.OCSPFile(s.Namespace, s.Name)))
		}
	}
	return "", nil
}
