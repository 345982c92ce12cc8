package snippet

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// Context is where a snippet applies, which decides its allowlist.
type Context string

// The contexts.
const (
	// Location is configuration-snippet: inside each location of an
	// Ingress.
	Location Context = "location"
	// Server is server-snippet: the whole host.
	Server Context = "server"
	// Auth is auth-snippet: the location that asks an external
	// authentication service, which answers nothing itself.
	Auth Context = "auth"
	// HTTP is http-snippet (and NGINX Ingress Controller's
	// http-snippets): nginx's http level, which every host inherits. Only
	// directives that nginx allows there and that set headers or
	// expiry are read; the builder applies them to every host, ahead of
	// the server-snippet.
	HTTP Context = "http"
)

// directive reads one directive's arguments into the snippet.
type directive func(p *parser, args []Token) error

// allowlists are the directives each context accepts.
var allowlists = map[Context]map[string]directive{
	Location: {
		"add_header": parseAddHeader, "more_set_headers": parseMoreSet, "more_clear_headers": parseMoreClear,
		"proxy_set_header": parseProxySetHeader, "proxy_hide_header": parseProxyHideHeader,
		"return": parseReturn, "rewrite": parseRewrite, "expires": parseExpires, "set": parseSet,
		"allow": parseAllow, "deny": parseDeny,
	},
	Auth: {
		"proxy_set_header": parseProxySetHeader, "proxy_hide_header": parseProxyHideHeader, "set": parseSet,
	},
	HTTP: {
		"add_header": parseAddHeader, "more_set_headers": parseMoreSet, "more_clear_headers": parseMoreClear,
		"proxy_set_header": parseProxySetHeader, "proxy_hide_header": parseProxyHideHeader, "expires": parseExpires,
		"allow": parseAllow, "deny": parseDeny,
	},
}

func init() {
	allowlists[Server] = allowlists[Location]
}

// ErrEmpty is returned for a snippet without directives.
var ErrEmpty = errors.New("snippet holds no directive")

type parser struct {
	ctx Context
	out model.Snippet
	sc  scope
	// n counts the directives read.
	n int
	// rules are the allow and deny directives, in order (access.go).
	rules []accessRule
}

// Parse reads a snippet of the given context into typed values. It
// refuses the whole snippet at the first thing it cannot read: a
// directive outside the allowlist (named in the error), a block, a value
// outside its grammar, a variable a snippet may not read.
func Parse(src string, ctx Context) (*model.Snippet, error) { return ParseReading(src, ctx, nil) }

// ParseReading is Parse for a snippet that may also read the variables
// known defines elsewhere (the maps of the ConfigMap's http-snippet).
func ParseReading(src string, ctx Context, known []string) (*model.Snippet, error) {
	allowed, ok := allowlists[ctx]
	if !ok {
		return nil, fmt.Errorf("no snippet is accepted in the %s context", ctx)
	}
	toks, err := Tokenize(src)
	if err != nil {
		if name := reading(toks); name != "" {
			return nil, fmt.Errorf("directive %q: %w", model.Truncate(name), err)
		}
		return nil, err
	}
	p := &parser{ctx: ctx, sc: scope{set: map[string]bool{}, known: map[string]bool{}}}
	for _, k := range known {
		p.sc.known[k] = true
	}
	i, err := p.statements(toks, 0, allowed, false)
	switch {
	case err != nil:
		return nil, err
	case i < len(toks):
		return nil, fmt.Errorf("line %d: a \"}\" would close the enclosing %s block", toks[i].Line, ctx)
	case p.n == 0:
		return nil, ErrEmpty
	}
	if p.out.Access, err = accessList(p.rules); err != nil {
		return nil, err
	}
	if p.out.Access != nil && p.out.Serves() {
		return nil, errors.New("it both lets clients in by address (allow, deny) and answers (a return below 400, a redirect), " +
			"and nginx answers before it checks the address: every client would get the answer")
	}
	return &p.out, nil
}

// statements reads directives from toks[i] up to the end or, inside an
// if block, up to its "}"; it returns the index of that "}" (or
// len(toks)).
func (p *parser) statements(toks []Token, i int, allowed map[string]directive, inIf bool) (int, error) {
	for i < len(toks) {
		t := toks[i]
		if t.Kind == CloseBrace {
			return i, nil
		}
		if t.Kind != Word {
			return 0, fmt.Errorf("line %d: %s where a directive name belongs", t.Line, t.Kind)
		}
		if t.Quoted || !directiveName(t.Text) {
			return 0, fmt.Errorf("line %d: %q is not a directive name", t.Line, model.Truncate(t.Text))
		}
		j := i + 1
		for j < len(toks) && toks[j].Kind == Word {
			j++
		}
		if j == len(toks) {
			return 0, fmt.Errorf("line %d: directive %q does not end with \";\"", t.Line, t.Text)
		}
		if p.n++; p.n > MaxDirectives {
			return 0, fmt.Errorf("snippet has more than %d directives", MaxDirectives)
		}
		if toks[j].Kind == OpenBrace && t.Text == "map" && p.ctx == HTTP {
			end, err := p.mapBlock(toks, i, j)
			if err != nil {
				return 0, fmt.Errorf("line %d: directive \"map\": %w", t.Line, err)
			}
			i = end + 1
			continue
		}
		if toks[j].Kind == OpenBrace {
			if t.Text != "if" || inIf || p.ctx == Auth {
				return 0, fmt.Errorf("line %d: directive %q opens a block; a snippet may hold no blocks but an if of its rewrite directives", t.Line, t.Text)
			}
			end, err := p.ifBlock(toks, i, j)
			if err != nil {
				return 0, fmt.Errorf("line %d: directive \"if\": %w", t.Line, err)
			}
			i = end + 1
			continue
		}
		if toks[j].Kind != Semicolon {
			return 0, fmt.Errorf("line %d: directive %q ends with %s, not \";\"", t.Line, t.Text, toks[j].Kind)
		}
		parse, ok := allowed[t.Text]
		if !ok {
			where := "a " + string(p.ctx) + " snippet"
			if inIf {
				where = "an if block"
			}
			return 0, fmt.Errorf("line %d: directive %q is not allowed in %s", t.Line, t.Text, where)
		}
		if err := parse(p, toks[i+1:j]); err != nil {
			return 0, fmt.Errorf("line %d: directive %q: %w", t.Line, t.Text, err)
		}
		i = j + 1
	}
	if inIf {
		return 0, fmt.Errorf("the if block is not closed")
	}
	return i, nil
}

// reading returns the name of the top-level directive that toks end
// inside, or "".
func reading(toks []Token) string {
	name, depth, next := "", 0, true
	for _, t := range toks {
		switch t.Kind {
		case Word:
			if next && depth == 0 {
				name, next = t.Text, false
			}
		case OpenBrace:
			depth++
		case CloseBrace:
			depth--
			next = depth <= 0
		case Semicolon:
			next = depth <= 0
		}
		if next && depth <= 0 {
			name = ""
		}
	}
	return name
}

// directiveName reports whether s looks like an nginx directive name.
func directiveName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func wantArgs(args []Token, lo, hi int) error {
	if len(args) < lo || len(args) > hi {
		if lo == hi {
			return fmt.Errorf("want %d arguments, not %d", lo, len(args))
		}
		return fmt.Errorf("want %d to %d arguments, not %d", lo, hi, len(args))
	}
	return nil
}

// value reads a value that may hold variables: at most 1024 bytes of
// printable characters (tabs are refused: values travel in headers).
func (p *parser) value(t Token) (model.Template, error) {
	if len(t.Text) > 1024 {
		return nil, fmt.Errorf("value of %d bytes is longer than 1024", len(t.Text))
	}
	if strings.ContainsRune(t.Text, '\t') {
		return nil, errors.New("value holds a tab")
	}
	return p.sc.parseTemplate(t.Text)
}

func parseAddHeader(p *parser, args []Token) error {
	if err := wantArgs(args, 2, 3); err != nil {
		return err
	}
	h, err := p.header(args[0], args[1])
	if err != nil {
		return err
	}
	if len(args) == 3 {
		if args[2].Text != "always" {
			return fmt.Errorf("third argument %q: want \"always\"", model.Truncate(args[2].Text))
		}
		h.Always = true
	}
	p.out.AddHeaders = append(p.out.AddHeaders, h)
	return nil
}

// framingHeaders say how a message is delimited; nginx writes them, and a
// second value would let a client or backend read the message otherwise
// (request smuggling, response splitting).
var framingHeaders = []string{"content-length", "transfer-encoding", "connection"}

// headerName checks a header name a snippet sets or clears.
func headerName(t Token) (string, error) {
	n, err := model.ParseHeaderName(t.Text)
	if err != nil {
		return "", err
	}
	for _, f := range framingHeaders {
		if strings.EqualFold(f, n) {
			return "", fmt.Errorf("header %s frames the message and is nginx's to write", n)
		}
	}
	return n, nil
}

func (p *parser) header(name, value Token) (model.TemplateHeader, error) {
	n, err := headerName(name)
	if err != nil {
		return model.TemplateHeader{}, err
	}
	v, err := p.value(value)
	if err != nil {
		return model.TemplateHeader{}, err
	}
	return model.TemplateHeader{Name: n, Value: v}, nil
}

// ClientHeaders are the request headers Causeway sets towards every
// backend from the real client (X-Forwarded-*, X-Real-IP ...). A snippet
// may not replace them: nginx would send both lines.
var ClientHeaders = []string{"upgrade", "x-real-ip", "x-forwarded-for", "x-forwarded-host",
	"x-forwarded-port", "x-forwarded-proto", "x-request-id", "x-forwarded-prefix", "x-original-uri",
	"ssl-client-verify", "ssl-client-subject-dn", "ssl-client-issuer-dn", "ssl-client-cert"}

func parseProxySetHeader(p *parser, args []Token) error {
	if err := wantArgs(args, 2, 2); err != nil {
		return err
	}
	h, err := p.header(args[0], args[1])
	if err != nil {
		return err
	}
	for _, c := range ClientHeaders {
		if strings.EqualFold(c, h.Name) {
			return fmt.Errorf("header %s is set by Causeway from the client's connection", h.Name)
		}
	}
	p.out.ProxySetHeaders = append(p.out.ProxySetHeaders, h)
	return nil
}

func parseProxyHideHeader(p *parser, args []Token) error {
	if err := wantArgs(args, 1, 1); err != nil {
		return err
	}
	n, err := headerName(args[0])
	if err != nil {
		return err
	}
	p.out.ProxyHideHeaders = append(p.out.ProxyHideHeaders, n)
	return nil
}

// moreOptions reads the -s and -t options of more_set_headers and
// more_clear_headers; it returns the remaining arguments.
func moreOptions(args []Token, m *model.MoreHeaders) ([]Token, error) {
	for len(args) > 0 && strings.HasPrefix(args[0].Text, "-") && !args[0].Quoted {
		opt := args[0].Text
		if opt != "-s" && opt != "-t" {
			return nil, fmt.Errorf("option %q: want -s or -t", model.Truncate(opt))
		}
		if len(args) < 2 {
			return nil, fmt.Errorf("option %s needs a value", opt)
		}
		for _, f := range strings.Fields(args[1].Text) {
			if opt == "-s" {
				code, err := statusCode(f)
				if err != nil {
					return nil, err
				}
				m.Statuses = append(m.Statuses, code)
			} else {
				t, err := contentType(f)
				if err != nil {
					return nil, err
				}
				m.Types = append(m.Types, t)
			}
		}
		args = args[2:]
	}
	if len(args) == 0 {
		return nil, errors.New("no header given")
	}
	if len(args) > 32 {
		return nil, errors.New("more than 32 headers")
	}
	return args, nil
}

func statusCode(s string) (int, error) {
	code, err := strconv.Atoi(s)
	if err != nil || code < 100 || code > 599 || len(s) != 3 {
		return 0, fmt.Errorf("status %q: want a code from 100 to 599", model.Truncate(s))
	}
	return code, nil
}

// contentType checks a -t value: type/subtype in letters, digits and
// - + . _.
func contentType(s string) (string, error) {
	slash := strings.IndexByte(s, '/')
	ok := slash > 0 && slash < len(s)-1 && len(s) <= 128
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-+._", c) >= 0 || i == slash
	}
	if !ok {
		return "", fmt.Errorf("content type %q: want type/subtype of letters, digits and - + . _", model.Truncate(s))
	}
	return s, nil
}

func parseMoreSet(p *parser, args []Token) error {
	var m model.MoreHeaders
	args, err := moreOptions(args, &m)
	if err != nil {
		return err
	}
	for _, a := range args {
		name, val, _ := strings.Cut(a.Text, ":")
		n, err := headerName(Token{Text: name})
		if err != nil {
			return err
		}
		v, err := p.value(Token{Text: strings.TrimLeft(val, " ")})
		if err != nil {
			return err
		}
		m.Headers = append(m.Headers, model.TemplateHeader{Name: n, Value: v})
	}
	p.out.MoreSet = append(p.out.MoreSet, m)
	return nil
}

func parseMoreClear(p *parser, args []Token) error {
	var m model.MoreHeaders
	args, err := moreOptions(args, &m)
	if err != nil {
		return err
	}
	for _, a := range args {
		name := strings.TrimSuffix(a.Text, "*")
		n, err := headerName(Token{Text: name})
		if err != nil {
			return err
		}
		if name != a.Text {
			n += "*"
		}
		m.Headers = append(m.Headers, model.TemplateHeader{Name: n})
	}
	p.out.MoreClear = append(p.out.MoreClear, m)
	return nil
}

// redirectCodes are the statuses whose return argument is a URL.
var redirectCodes = map[int]bool{301: true, 302: true, 303: true, 307: true, 308: true}

func parseReturn(p *parser, args []Token) error {
	if err := wantArgs(args, 1, 2); err != nil {
		return err
	}
	r := &model.SnippetReturn{}
	code, err := strconv.Atoi(args[0].Text)
	switch {
	case err == nil && len(args[0].Text) == 3 && (code >= 200 && code <= 599 || code == 444):
		r.Code = code
		args = args[1:]
	case err == nil:
		return fmt.Errorf("status %q: want a code from 200 to 599 or 444", model.Truncate(args[0].Text))
	case len(args) == 1:
		// "return URL" is a 302.
		r.Code = 302
	default:
		return fmt.Errorf("status %q: want a code from 200 to 599 or 444", model.Truncate(args[0].Text))
	}
	if len(args) == 1 {
		t, err := p.value(args[0])
		if err != nil {
			return err
		}
		if redirectCodes[r.Code] && !redirectTarget(t) {
			return fmt.Errorf("redirect target %q: want a URL starting with http://, https://, $scheme:// or /", model.Truncate(args[0].Text))
		}
		r.Text, r.HasText = t, true
	}
	p.out.Steps = append(p.out.Steps, model.SnippetStep{Return: r})
	return nil
}

// redirectTarget reports whether a redirect's URL starts as nginx expects
// one (a path, or a scheme and "://").
func redirectTarget(t model.Template) bool {
	if len(t) == 0 {
		return false
	}
	if t[0].Variable == "scheme" {
		return len(t) > 1 && strings.HasPrefix(t[1].Literal, "://")
	}
	l := t[0].Literal
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "/") && !strings.HasPrefix(l, "//")
}

func parseRewrite(p *parser, args []Token) error {
	if err := wantArgs(args, 2, 3); err != nil {
		return err
	}
	re, ok := strings.CutPrefix(args[0].Text, "^")
	if !ok {
		return fmt.Errorf("regex %q: want one anchored at the start (^/...)", model.Truncate(args[0].Text))
	}
	if _, err := model.ParseRegex(re); err != nil {
		return fmt.Errorf("regex %q: %w", model.Truncate(args[0].Text), err)
	}
	r := &model.SnippetRewrite{Regex: "^" + re}
	p.sc.groups = true
	repl, err := p.value(args[1])
	p.sc.groups = false
	if err != nil {
		return err
	}
	if !redirectTarget(repl) {
		return fmt.Errorf("replacement %q: want a path starting with / or a URL", model.Truncate(args[1].Text))
	}
	for _, part := range repl {
		if g := part.Variable; len(g) == 1 && int(g[0]-'0') > model.RegexGroups(re) {
			return fmt.Errorf("replacement %q names group $%s, and the regex has %d", model.Truncate(args[1].Text), g, model.RegexGroups(re))
		}
	}
	r.Replacement = repl
	if len(args) == 3 {
		switch f := model.RewriteFlag(args[2].Text); f {
		case model.RewriteLast, model.RewriteBreak, model.RewriteRedirect, model.RewritePermanent:
			r.Flag = f
		default:
			return fmt.Errorf("flag %q: want last, break, redirect or permanent", model.Truncate(args[2].Text))
		}
	}
	p.out.Steps = append(p.out.Steps, model.SnippetStep{Rewrite: r})
	return nil
}

// maxExpires bounds expires' time: ten years.
const maxExpires = 10 * 365 * 24 * time.Hour

func parseExpires(p *parser, args []Token) error {
	if err := wantArgs(args, 1, 2); err != nil {
		return err
	}
	if p.out.Expires != nil {
		return errors.New("is set twice")
	}
	e := &model.Expires{}
	if len(args) == 2 {
		if args[0].Text != "modified" {
			return fmt.Errorf("first of two arguments %q: want \"modified\"", model.Truncate(args[0].Text))
		}
		e.Modified = true
		args = args[1:]
	}
	switch v := args[0].Text; v {
	case "off", "epoch", "max":
		if e.Modified {
			return fmt.Errorf("%q cannot follow \"modified\"", v)
		}
		e.Mode = v
	default:
		d, err := nginxTime(v)
		if err != nil {
			return err
		}
		e.Time = d
	}
	p.out.Expires = e
	return nil
}

// nginxTime reads nginx's time syntax with an optional sign: 1h30m, 7d,
// 60 (seconds), at most ten years either way.
func nginxTime(s string) (time.Duration, error) {
	neg := strings.HasPrefix(s, "-")
	rest := strings.TrimPrefix(s, "-")
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour,
		'w': 7 * 24 * time.Hour, 'M': 30 * 24 * time.Hour, 'y': 365 * 24 * time.Hour}
	var total time.Duration
	bad := fmt.Errorf("time %q: want a number with units s, m, h, d, w, M or y (such as 1h30m), at most ten years", model.Truncate(s))
	if rest == "" || len(rest) > 32 {
		return 0, bad
	}
	for rest != "" {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i > 9 {
			return 0, bad
		}
		n, _ := strconv.Atoi(rest[:i])
		unit := time.Second
		if i < len(rest) {
			u, ok := units[rest[i]]
			if !ok || rest[i] == 'm' && i+1 < len(rest) && rest[i+1] == 's' {
				return 0, bad
			}
			unit = u
			i++
		} else if total != 0 {
			return 0, bad // a bare number only alone
		}
		total += time.Duration(n) * unit
		if total > maxExpires {
			return 0, bad
		}
		rest = rest[i:]
	}
	if neg {
		total = -total
	}
	return total, nil
}

func parseSet(p *parser, args []Token) error {
	if err := wantArgs(args, 2, 2); err != nil {
		return err
	}
	name, ok := strings.CutPrefix(args[0].Text, "$")
	if !ok || args[0].Quoted {
		return fmt.Errorf("first argument %q: want $name", model.Truncate(args[0].Text))
	}
	if err := VariableName(name); err != nil {
		return err
	}
	v, err := p.value(args[1])
	if err != nil {
		return err
	}
	p.sc.set[name] = true
	p.out.Steps = append(p.out.Steps, model.SnippetStep{Set: &model.SetVariable{Name: name, Value: v}})
	return nil
}
