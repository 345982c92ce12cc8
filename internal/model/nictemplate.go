package model

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// NGINX Ingress Controller writes some values (a return body, a redirect
// URL, a header value) into nginx's configuration as quoted strings with
// ${name} variables; ParseVariableTemplate reads them into a Template
// whose variables come from an allowlist, so the renderer prints the
// literals through its one escaping helper and never the user's text.

// MaxTemplateLen bounds a value read by ParseVariableTemplate.
const MaxTemplateLen = 1024

// VariableSet says which variables (names without "$") a value may use.
type VariableSet struct {
	Names map[string]bool
	// Prefixes are families such as "http_": any name of the prefix and
	// 1 to 64 letters, digits and "_" (read lower-cased, as nginx does).
	Prefixes []string
	// Text allows newlines, tabs and carriage returns in literals (a
	// response body); otherwise literals are printable only.
	Text bool
}

// ReturnBodyVariables are the variables of an action's return body
// (NGINX Ingress Controller's list).
var ReturnBodyVariables = VariableSet{Names: setOf("request_uri", "request_method", "request_body", "scheme", "args", "host",
	"request_time", "request_length", "nginx_version", "pid", "connection", "remote_addr", "remote_port", "time_iso8601",
	"time_local", "server_addr", "server_port", "server_name", "server_protocol", "connections_active",
	"connections_reading", "connections_writing", "connections_waiting"),
	Prefixes: []string{"arg_", "http_", "cookie_"}, Text: true}

// ProxyHeaderVariables are the variables of a header an action's proxy
// sets or adds (NGINX Ingress Controller's list, less the jwt_ families
// of NGINX Plus).
var ProxyHeaderVariables = VariableSet{Names: setOf("request_uri", "request_method", "request_body", "scheme", "args", "host",
	"request_time", "request_length", "nginx_version", "pid", "connection", "remote_addr", "remote_port", "time_iso8601",
	"time_local", "server_addr", "server_port", "server_name", "server_protocol", "connections_active",
	"connections_reading", "connections_writing", "connections_waiting", "ssl_cipher", "ssl_ciphers", "ssl_client_cert",
	"ssl_client_escaped_cert", "ssl_client_fingerprint", "ssl_client_i_dn", "ssl_client_i_dn_legacy", "ssl_client_raw_cert",
	"ssl_client_s_dn", "ssl_client_s_dn_legacy", "ssl_client_serial", "ssl_client_v_end", "ssl_client_v_remain",
	"ssl_client_v_start", "ssl_client_verify", "ssl_curves", "ssl_early_data", "ssl_protocol", "ssl_server_name",
	"ssl_session_id", "ssl_session_reused"),
	Prefixes: []string{"arg_", "http_", "cookie_"}}

// RedirectVariables are the variables of an action's redirect URL.
var RedirectVariables = VariableSet{Names: setOf("scheme", "http_x_forwarded_proto", "request_uri", "host")}

// ErrorPageRedirectVariables are those of an error page's redirect URL.
var ErrorPageRedirectVariables = VariableSet{Names: setOf("scheme", "http_x_forwarded_proto")}

// ErrorPageVariables are those of an error page's body;
// ErrorPageHeaderVariables those of its header values.
var (
	ErrorPageVariables       = VariableSet{Names: setOf("upstream_status"), Text: true}
	ErrorPageHeaderVariables = VariableSet{Names: setOf("upstream_status")}
)

func setOf(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

var templateNameChars = newCharSet("_")

// allows returns the variable as nginx reads it, and whether vs allows it.
func (vs VariableSet) allows(name string) (string, bool) {
	if vs.Names[name] {
		return name, true
	}
	for _, p := range vs.Prefixes {
		rest, ok := strings.CutPrefix(name, p)
		if ok && checkChars(rest, "variable", 64, templateNameChars, "") == nil {
			return strings.ToLower(name), true
		}
	}
	return "", false
}

// ParseVariableTemplate reads a value as NGINX Ingress Controller writes
// it into nginx: the escapes \" \' \\ \n \t \r stand for their character
// (any other backslash is kept, as nginx keeps it), and every "$" starts
// a ${name} variable that vs allows. The result holds at most
// MaxTemplateLen bytes of valid UTF-8 without control characters other
// than those vs.Text allows.
func ParseVariableTemplate(s string, vs VariableSet) (Template, error) {
	if len(s) > MaxTemplateLen {
		return nil, fmt.Errorf("at most %d characters", MaxTemplateLen)
	}
	if !utf8.ValidString(s) {
		return nil, errors.New("not valid UTF-8")
	}
	var out Template
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, TemplatePart{Literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			if i+1 == len(s) {
				return nil, errors.New(`ends with an unescaped \`)
			}
			i++
			switch s[i] {
			case '"', '\'', '\\':
				lit.WriteByte(s[i])
			case 'n', 't', 'r':
				if !vs.Text {
					return nil, fmt.Errorf(`holds \%c, a control character`, s[i])
				}
				lit.WriteByte(map[byte]byte{'n': '\n', 't': '\t', 'r': '\r'}[s[i]])
			default:
				lit.WriteByte('\\')
				i--
			}
		case c == '"':
			return nil, errors.New(`holds an unescaped "`)
		case c == '$':
			end := strings.IndexByte(s[i:], '}')
			if !strings.HasPrefix(s[i:], "${") || end < 0 {
				return nil, errors.New("variables must be written ${name}")
			}
			name, ok := vs.allows(s[i+2 : i+end])
			if !ok {
				return nil, fmt.Errorf("${%s} is not a variable allowed here", Truncate(s[i+2:i+end]))
			}
			flush()
			out = append(out, TemplatePart{Variable: name})
			i += end
		case c < 0x20 || c == 0x7f:
			if !vs.Text || (c != '\n' && c != '\t' && c != '\r') {
				return nil, fmt.Errorf("holds %s", describeByte(c))
			}
			lit.WriteByte(c)
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	for _, p := range out {
		if strings.ContainsFunc(p.Literal, func(r rune) bool { return r >= 0x80 && r < 0xa0 || r == 0x2028 || r == 0x2029 }) {
			return nil, errors.New("holds a control character")
		}
	}
	return out, nil
}

// redirectSample stands for each redirect variable when a URL template is
// checked as a URL.
var redirectSample = map[string]string{"scheme": "https", "http_x_forwarded_proto": "https", "host": "example.com", "request_uri": "/path?q"}

// ParseRedirectTemplate reads a redirect URL that may use the variables
// of vs (a subset of RedirectVariables): a template that, with sample
// values for its variables, is an absolute URL ParseRedirectURL keeps as
// written.
func ParseRedirectTemplate(s string, vs VariableSet) (Template, error) {
	t, err := ParseVariableTemplate(s, vs)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, p := range t {
		if p.Variable != "" {
			b.WriteString(redirectSample[p.Variable])
		} else {
			b.WriteString(p.Literal)
		}
	}
	u, err := ParseRedirectURL(b.String())
	if err != nil {
		return nil, err
	}
	if u != b.String() {
		return nil, fmt.Errorf("not a URL as written (%q would be sent)", Truncate(u))
	}
	return t, nil
}

// ParseReturnType checks a return's MIME type: type/subtype of RFC 6838
// restricted names, at most 46 bytes, lower-cased; parameters such as
// "; charset=utf-8" are refused.
func ParseReturnType(s string) (string, error) { return parseMIMEType(s) }
