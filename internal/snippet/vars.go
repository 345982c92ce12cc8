package snippet

import (
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// allowedVariables are the nginx variables a snippet value may read: facts
// of the request that any backend could see anyway. Variables that expose
// the controller (paths, upstream addresses, TLS internals) or that Lua
// and Causeway use are not among them.
var allowedVariables = map[string]bool{
	"host": true, "request_uri": true, "uri": true, "document_uri": true, "scheme": true,
	"remote_addr": true, "remote_port": true, "request_id": true, "server_name": true,
	"request_method": true, "args": true, "query_string": true, "is_args": true,
	"server_port": true, "https": true, "content_type": true, "content_length": true,
	"server_protocol": true, "request": true, "status": true, "time_iso8601": true,
	"msec": true, "request_time": true,
}

// variablePrefixes are families of request variables a value may read:
// a request header, cookie or query argument by name.
var variablePrefixes = []string{"http_", "cookie_", "arg_"}

// reservedPrefixes are variable families nginx or Causeway define; a
// snippet may not set a variable of these names.
var reservedPrefixes = []string{
	"http_", "cookie_", "arg_", "sent_http_", "sent_trailer_", "upstream_", "ssl_", "proxy_",
	"realip_", "limit_", "request_", "remote_", "server_", "connection", "tcpinfo_", "binary_",
	"causeway", "jwt_", "geoip", "secure_link", "fastcgi_", "uwsgi_", "scgi_", "memcached_",
	"time_", "date_", "body_", "bytes_", "content_", "document_", "invalid_", "gzip_", "brotli_",
	"auth_", "http2", "http3", "quic", "spdy", "pipe", "pid", "nginx_", "hostname", "msec",
	"realpath_", "modern_browser", "ancient_browser", "msie", "query_string", "status",
}

// reservedNames are further names defined by nginx or by Causeway's
// configuration.
var reservedNames = map[string]bool{"req_id": true, "skip": true, "args": true, "is_args": true,
	"uri": true, "host": true, "scheme": true, "https": true, "request": true}

// VariableName checks the name of a variable a snippet sets: 1 to 32
// lower-case letters, digits and "_", starting with a letter, and none of
// nginx's or Causeway's own variables (setting $args or $limit_rate would
// change nginx's behaviour; setting $causeway_backend, the routing).
func VariableName(name string) error {
	if name == "" || len(name) > 32 || name[0] < 'a' || name[0] > 'z' {
		return fmt.Errorf("variable name %q: want 1 to 32 lower-case letters, digits and _, starting with a letter", model.Truncate(name))
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return fmt.Errorf("variable name %q: want lower-case letters, digits and _ only", model.Truncate(name))
		}
	}
	if reservedNames[name] || allowedVariables[name] {
		return fmt.Errorf("variable $%s is nginx's own", name)
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(name, p) {
			return fmt.Errorf("variable $%s is in a family nginx or Causeway defines (%s…)", name, p)
		}
	}
	return nil
}

// scope is what variables a value may read at a point of a snippet.
type scope struct {
	// set are the variables the snippet set (or mapped) so far; known
	// those defined elsewhere that it may read (the http-snippet's maps).
	set, known map[string]bool
	// groups allows $1..$9 (a rewrite's replacement).
	groups bool
}

// readable checks a variable reference.
func (sc *scope) readable(name string) error {
	switch {
	case allowedVariables[name], sc.set[name], sc.known[name]:
		return nil
	case len(name) == 1 && name[0] >= '1' && name[0] <= '9':
		if sc.groups {
			return nil
		}
		return fmt.Errorf("$%s names a regex group, which only a rewrite's replacement may use", name)
	}
	for _, p := range variablePrefixes {
		if rest, ok := strings.CutPrefix(name, p); ok && rest != "" && lowerName(rest) {
			return nil
		}
	}
	return fmt.Errorf("variable $%s is not one a snippet may read", model.Truncate(name))
}

// lowerName reports whether s holds only lower-case letters, digits and _.
func lowerName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// parseTemplate splits a word into literals and variable references, as
// nginx's script compiler reads "$name" and "${name}". Every "$" must start
// a reference the scope allows; a literal never holds "$".
func (sc *scope) parseTemplate(s string) (model.Template, error) {
	var t model.Template
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t = append(t, model.TemplatePart{Literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		if s[i] != '$' {
			lit.WriteByte(s[i])
			i++
			continue
		}
		i++
		var name string
		if i < len(s) && s[i] == '{' {
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ${ in %q", model.Truncate(s))
			}
			name = s[i+1 : i+end]
			i += end + 1
		} else if i < len(s) && s[i] >= '1' && s[i] <= '9' {
			// nginx reads one digit after "$" as a group.
			name = s[i : i+1]
			i++
		} else {
			j := i
			for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
				j++
			}
			name = s[i:j]
			i = j
		}
		if name == "" || !lowerName(name) {
			return nil, fmt.Errorf("%q holds a $ that starts no variable name of lower-case letters, digits and _", model.Truncate(s))
		}
		if err := sc.readable(name); err != nil {
			return nil, err
		}
		flush()
		t = append(t, model.TemplatePart{Variable: name})
	}
	flush()
	return t, nil
}

// Value reads a value outside a snippet (modsecurity-transaction-id, say)
// into literals and variable references: the variables any snippet value
// may read, no regex group and no variable a snippet set.
func Value(s string) (model.Template, error) {
	sc := scope{}
	return sc.parseTemplate(s)
}
