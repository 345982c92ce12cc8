package model

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// URL templates: auth-url, auth-signin and the ConfigMap's global-auth-url
// and global-auth-signin may name nginx variables, as ingress-nginx lets
// them, so that oauth2-proxy's recipe works as written:
//
//	auth-url:    https://$host/oauth2/auth
//	auth-signin: https://$host/oauth2/start?rd=$escaped_request_uri
//
// A template is never free text: the scheme, the host and the port are
// each a literal or one named variable, and the path and query are
// literals of the URL grammar (ParseRedirectURL's) and variables from an
// allowlist. nginx builds the URL per request from the parsed parts; no
// value a client sends can reach the configuration, and the variables a
// client controls freely ($http_..., $arg_..., $best_http_host) may only
// stand in the query, where they cannot change the path asked.

// The variables a URL template may name (without "$"), besides
// http_<name> and arg_<name>.
const (
	// URLVarHost is the request's host ($host), URLVarBestHTTPHost its
	// Host header as sent ($http_host, or $host when the client sent
	// none), as ingress-nginx's $best_http_host.
	URLVarHost         = "host"
	URLVarBestHTTPHost = "best_http_host"
	// URLVarScheme is the request's scheme, URLVarServerPort the port
	// it came in on.
	URLVarScheme     = "scheme"
	URLVarServerPort = "server_port"
	// URLVarRequestURI is the request URI as the client sent it;
	// URLVarEscapedRequestURI the same, URL-encoded as a query value,
	// as ingress-nginx's $escaped_request_uri.
	URLVarRequestURI        = "request_uri"
	URLVarEscapedRequestURI = "escaped_request_uri"
)

// urlVarNames are the fixed names a template may use.
var urlVarNames = []string{URLVarHost, URLVarBestHTTPHost, URLVarScheme, URLVarServerPort, URLVarRequestURI, URLVarEscapedRequestURI}

// maxURLVarSuffix bounds the <name> of http_<name> and arg_<name>.
const maxURLVarSuffix = 64

// URLTemplateVar reports whether name (lower case, without "$") may be
// part of a URL template: one of the fixed names, or http_ or arg_
// followed by 1 to 64 of [a-z0-9_].
func URLTemplateVar(name string) bool {
	for _, n := range urlVarNames {
		if name == n {
			return true
		}
	}
	for _, p := range []string{"http_", "arg_"} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			return rest != "" && len(rest) <= maxURLVarSuffix && strings.Trim(rest, "abcdefghijklmnopqrstuvwxyz0123456789_") == ""
		}
	}
	return false
}

// pathVar reports whether a variable may stand in a template's path:
// those whose value nginx restricts to host, scheme or port bytes, and
// $request_uri, which is the path the client asked (nginx refuses one
// that climbs above the root).
func pathVar(name string) bool {
	switch name {
	case URLVarHost, URLVarScheme, URLVarServerPort, URLVarRequestURI:
		return true
	}
	return false
}

// URLPart is one piece of a template's path and query: a variable name
// (URLTemplateVar, without "$") or, when Var is "", a literal.
type URLPart struct {
	Var, Literal string
}

// URLTemplate is a parsed URL template.
type URLTemplate struct {
	// Scheme is "http" or "https"; "" is the request's ($scheme).
	Scheme string
	// Host is a literal host as ParseRedirectURL prints it (lower-case
	// DNS name, IPv4 address or bracketed IPv6 address); "" when HostVar
	// names the request's own host (URLVarHost or URLVarBestHTTPHost).
	Host, HostVar string
	// Port is a literal port, 0 for none; PortVar names $server_port.
	Port    int
	PortVar bool
	// Rest is the path and query in order. It is empty or starts with
	// a literal "/" or "?", or with $request_uri.
	Rest []URLPart
}

// SelfHost reports whether the host is the request's own.
func (t URLTemplate) SelfHost() bool { return t.HostVar != "" }

// Uses reports whether the template names the variable.
func (t URLTemplate) Uses(name string) bool {
	if t.HostVar == name || t.Scheme == "" && name == URLVarScheme || t.PortVar && name == URLVarServerPort {
		return true
	}
	for _, p := range t.Rest {
		if p.Var == name {
			return true
		}
	}
	return false
}

// HasVars reports whether nginx completes the URL per request.
func (t URLTemplate) HasVars() bool {
	if t.Scheme == "" || t.HostVar != "" || t.PortVar {
		return true
	}
	for _, p := range t.Rest {
		if p.Var != "" {
			return true
		}
	}
	return false
}

// printParts prints parts with every variable braced.
func printParts(parts []URLPart) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Var != "" {
			b.WriteString("${" + p.Var + "}")
		} else {
			b.WriteString(p.Literal)
		}
	}
	return b.String()
}

// Parts is the whole template as literals and variables in order:
// scheme, "://", host, port and the path and query.
func (t URLTemplate) Parts() []URLPart {
	var out []URLPart
	if t.Scheme == "" {
		out = append(out, URLPart{Var: URLVarScheme}, URLPart{Literal: "://"})
	} else {
		out = append(out, URLPart{Literal: t.Scheme + "://"})
	}
	if t.HostVar != "" {
		out = append(out, URLPart{Var: t.HostVar})
	} else {
		out = append(out, URLPart{Literal: t.Host})
	}
	switch {
	case t.PortVar:
		out = append(out, URLPart{Literal: ":"}, URLPart{Var: URLVarServerPort})
	case t.Port != 0:
		out = append(out, URLPart{Literal: ":" + strconv.Itoa(t.Port)})
	}
	return append(out, t.Rest...)
}

// String prints the template with every variable braced, as the parsers
// return it; it parses back to the same template.
func (t URLTemplate) String() string { return printParts(t.Parts()) }

// QueryHas reports whether the template's query has the parameter
// param, written literally ("param=" after "?" or "&").
func (t URLTemplate) QueryHas(param string) bool {
	rest, inQuery := "", false
	for _, p := range t.Rest {
		switch {
		case p.Var == URLVarRequestURI && !inQuery:
			inQuery = true
			rest += "\x00"
		case p.Var != "":
			rest += "\x00"
		default:
			rest += p.Literal
		}
	}
	_, q, ok := strings.Cut(rest, "?")
	if !ok {
		return false
	}
	for kv := range strings.SplitSeq(q, "&") {
		if k, _, _ := strings.Cut(kv, "="); k == param {
			return true
		}
	}
	return false
}

// QueryKnown reports whether the template has a literal "?" before any
// $request_uri, so that a parameter appended after "&" lands in its query;
// false with no query at all.
func (t URLTemplate) QueryKnown() bool {
	for _, p := range t.Rest {
		if p.Var == URLVarRequestURI {
			return false
		}
		if p.Var == "" && strings.Contains(p.Literal, "?") {
			return true
		}
	}
	return false
}

// RequestURIInPath reports whether $request_uri stands in the path, so
// that where the query starts is only known per request.
func (t URLTemplate) RequestURIInPath() bool {
	for _, p := range t.Rest {
		if p.Var == URLVarRequestURI {
			return true
		}
		if p.Var == "" && strings.Contains(p.Literal, "?") {
			return false
		}
	}
	return false
}

// Literal grammars of a template's path and query pieces, with %XX
// escapes (a piece is whole: no escape spans a variable).
var (
	pathLiteral  = regexp.MustCompile(`^(?:[A-Za-z0-9._~!*()+,=:@&/-]|%[0-9A-Fa-f]{2})*$`)
	queryLiteral = urlQuery
)

// ParseURLTemplate checks a URL template and returns it parsed. The
// grammar, at most 2048 bytes:
//
//	template = scheme "://" host [ ":" port ] [ rest ]
//	scheme   = "http" | "https" | $scheme            (any case)
//	host     = DNS name | IPv4 | "[" IPv6 "]" | $host | $best_http_host
//	port     = 1 to 65535 | $server_port
//	rest     = ( "/" | "?" | $request_uri ) { literal | variable }
//
// $request_uri in the path (before a literal "?") ends the URL.
// Variables are written $name or ${name} (any case, printed lower case
// and braced), among URLTemplateVar's. In the path, before a literal "?"
// or $request_uri, only $host, $scheme, $server_port and $request_uri may
// stand; literals are ParseRedirectURL's path and query bytes. No user
// information, fragment, quote, space, ";" or brace outside ${}.
func ParseURLTemplate(s string) (URLTemplate, error) { return parseURLTemplate(s, "URL") }

// parseURLTemplate implements ParseURLTemplate; what names the value in
// errors.
func parseURLTemplate(s, what string) (URLTemplate, error) {
	var t URLTemplate
	if len(s) > maxURLLen {
		return t, fmt.Errorf("%s is %d bytes long, more than %d", what, len(s), maxURLLen)
	}
	want := fmt.Errorf("%s: want an absolute http or https URL such as https://$host/oauth2/auth", what)
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return t, want
	}
	if strings.HasPrefix(scheme, "$") {
		name, n, err := readVar(scheme)
		if err != nil {
			return t, err
		}
		if n != len(scheme) || name != URLVarScheme {
			return t, fmt.Errorf("%s: the scheme may only be http, https or $scheme", what)
		}
	} else {
		t.Scheme = strings.ToLower(scheme)
		if t.Scheme != "http" && t.Scheme != "https" {
			return t, fmt.Errorf("%s must use http, https or $scheme", what)
		}
	}
	// The host: a variable, or a literal up to the port, path or query.
	if strings.HasPrefix(rest, "$") {
		name, n, err := readVar(rest)
		if err != nil {
			return t, err
		}
		if name != URLVarHost && name != URLVarBestHTTPHost {
			return t, fmt.Errorf("%s: the host may only be a name, an address, $host or $best_http_host, not $%s", what, Truncate(name))
		}
		t.HostVar, rest = name, rest[n:]
	} else {
		end := strings.IndexAny(rest, "/?$#")
		if strings.HasPrefix(rest, "[") {
			end = strings.IndexByte(rest, ']') + 1
			if end == 0 {
				return t, fmt.Errorf("%s has a [ without ] in its host", what)
			}
		} else if i := strings.IndexByte(rest, ':'); i >= 0 && (end < 0 || i < end) {
			end = i
		}
		if end < 0 {
			end = len(rest)
		}
		if name, _, _ := readVar(rest[end:]); end < len(rest) && rest[end] == '$' && name != URLVarRequestURI {
			return t, fmt.Errorf("%s: the host must be a name, an address, $host or $best_http_host as a whole", what)
		}
		h := rest[:end]
		if strings.ContainsAny(h, "@%") {
			return t, fmt.Errorf("%s must not hold a user name, a password or escapes in its host", what)
		}
		for i := 0; i < len(h); i++ {
			if c := h[i]; !urlChars[c] {
				return t, fmt.Errorf("%s must not contain %s", what, describeByte(c))
			}
		}
		host, err := urlHost(strings.Trim(h, "[]"), strings.HasPrefix(h, "["), false)
		if err != nil {
			return t, fmt.Errorf("%s: %w", what, err)
		}
		t.Host, rest = host, rest[end:]
	}
	if p, ok := strings.CutPrefix(rest, ":"); ok {
		if strings.HasPrefix(p, "$") {
			name, n, err := readVar(p)
			if err != nil {
				return t, err
			}
			if name != URLVarServerPort {
				return t, fmt.Errorf("%s: the port may only be a number or $server_port, not $%s", what, Truncate(name))
			}
			t.PortVar, rest = true, p[n:]
		} else {
			end := strings.IndexAny(p, "/?$#")
			if end < 0 {
				end = len(p)
			}
			n, err := strconv.Atoi(p[:end])
			if err != nil || end > 5 || n < 1 || n > 65535 || p[0] == '+' || p[0] == '-' {
				return t, fmt.Errorf("%s must have a port between 1 and 65535", what)
			}
			t.Port, rest = n, p[end:]
		}
	}
	if err := t.parseRest(rest, what); err != nil {
		return t, err
	}
	if out := t.String(); len(out) > maxURLLen {
		return t, fmt.Errorf("%s is %d bytes long, more than %d", what, len(out), maxURLLen)
	}
	return t, nil
}

// parseRest reads the path and query into t.Rest.
func (t *URLTemplate) parseRest(rest, what string) error {
	if rest == "" {
		return nil
	}
	if rest[0] != '/' && rest[0] != '?' {
		name, _, err := readVar(rest)
		if err != nil || name != URLVarRequestURI {
			return fmt.Errorf("%s: after the host and port, want /, ? or $request_uri", what)
		}
	}
	inQuery := false
	for rest != "" {
		if rest[0] == '$' {
			name, n, err := readVar(rest)
			if err != nil {
				return err
			}
			if !URLTemplateVar(name) {
				return fmt.Errorf("variable $%s is not allowed: want $host, $best_http_host, $scheme, $server_port, $request_uri, "+
					"$escaped_request_uri, $http_<name> or $arg_<name>", Truncate(name))
			}
			if !inQuery && !pathVar(name) {
				return fmt.Errorf("variable $%s may only stand in the query, after ?: in the path a client could change what is asked", name)
			}
			t.Rest = append(t.Rest, URLPart{Var: name})
			rest = rest[n:]
			if name == URLVarRequestURI && !inQuery {
				// It carries the client's path and query: nothing could
				// follow it in the path.
				if rest != "" {
					return fmt.Errorf("%s: $request_uri in the path must end the URL", what)
				}
				inQuery = true
			}
			continue
		}
		end := strings.IndexByte(rest, '$')
		if end < 0 {
			end = len(rest)
		}
		lit := rest[:end]
		for i := 0; i < len(lit); i++ {
			switch c := lit[i]; {
			case c == '#':
				return fmt.Errorf("%s must not have a fragment", what)
			case !urlChars[c] || c == '[' || c == ']':
				return fmt.Errorf("%s must not contain %s", what, describeByte(c))
			}
		}
		path, query, hasQuery := lit, "", false
		if !inQuery {
			if i := strings.IndexByte(lit, '?'); i >= 0 {
				path, query, hasQuery = lit[:i], lit[i+1:], true
			}
		} else {
			path, query, hasQuery = "", lit, true
		}
		if !pathLiteral.MatchString(path) {
			return fmt.Errorf("%s must have a path of letters, digits, %%XX escapes and -._~!*()+,=:@&/", what)
		}
		if hasQuery && !queryLiteral.MatchString(query) {
			return fmt.Errorf("%s must have a query of letters, digits, %%XX escapes and -._~!*()+,=:@&/?", what)
		}
		inQuery = inQuery || hasQuery
		t.Rest = append(t.Rest, URLPart{Literal: lit})
		rest = rest[end:]
	}
	return nil
}

// readVar reads the variable at the start of s ("$name" or "${name}"),
// returning its lower-case name and the bytes it took.
func readVar(s string) (string, int, error) {
	if !strings.HasPrefix(s, "$") {
		return "", 0, errors.New("want a variable")
	}
	if strings.HasPrefix(s, "${") {
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return "", 0, errors.New("a ${ has no closing }")
		}
		name := s[2:end]
		if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
			return "", 0, fmt.Errorf("variable ${%s} is not a name", Truncate(name))
		}
		return strings.ToLower(name), end + 1, nil
	}
	j := 1
	for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
		j++
	}
	if j == 1 {
		return "", 0, errors.New("a $ names no variable")
	}
	return strings.ToLower(s[1:j]), j, nil
}

// ParseSigninURL checks auth-signin and global-auth-signin: a URL as
// ParseRedirectURL accepts it, or one with variables as
// ParseURLTemplate accepts it, printed with its variables braced.
func ParseSigninURL(s string) (string, error) {
	if !strings.Contains(s, "$") {
		return parseHTTPURL(s, "sign-in URL")
	}
	t, err := parseURLTemplate(s, "sign-in URL")
	if err != nil {
		return "", err
	}
	return t.String(), nil
}
