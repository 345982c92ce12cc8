package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Snippets (model.Snippet) are typed directives of an allowlist; this file
// prints them. A server snippet's rewrite steps run at the server level,
// before a location is chosen; its header directives are repeated in
// every location of the server, ahead of the location's own, so that no
// location loses them to nginx's inheritance rules (a level that sets any
// add_header, proxy_set_header or proxy_hide_header inherits none).

// stepView is one rewrite-module directive; exactly one of Set, Regex,
// Code and If is set. Values are quoted templates.
type stepView struct {
	// If is an if block of steps.
	If *ifView `json:",omitempty"`
	// Set is the variable's name (a checked variableName), Value its
	// value.
	Set, Value string `json:",omitempty"`
	// Regex, Replacement and Flag are a rewrite's.
	Regex, Replacement, Flag string `json:",omitempty"`
	// Code and Text are a return's; Text may be "".
	Code int    `json:",omitempty"`
	Text string `json:",omitempty"`
}

// snippetView is what a location prints of the snippets that apply to it.
// ifView is an if block: its condition, inside the parentheses, and its
// steps (never another if).
type ifView struct {
	Cond string
	Then []stepView
}

// ifOps are the operators of an if condition.
var ifOps = map[string]bool{"=": true, "!=": true, "~": true, "~*": true, "!~": true, "!~*": true}

// planIf prints an if block: the variable braced, the text or regex
// re-checked against the model's grammar and quoted.
func planIf(c *model.SnippetIf) (*ifView, error) {
	if !variableName(c.Variable) {
		return nil, fmt.Errorf("snippet: if on variable %q", c.Variable)
	}
	// nginx reads the condition's variable as "$name" only, never braced;
	// a space or the closing parenthesis follows it.
	v := &ifView{Cond: "$" + userVariable(c.Variable)}
	if c.Op != "" {
		if !ifOps[c.Op] {
			return nil, fmt.Errorf("snippet: if operator %q", c.Op)
		}
		var err error
		if c.Op == "=" || c.Op == "!=" {
			_, err = model.ParseHeaderValue(c.Value)
		} else {
			_, err = model.ParseHeaderRegex(c.Value)
		}
		if err != nil {
			return nil, fmt.Errorf("snippet: if value: %w", err)
		}
		q, err := Quote(c.Value)
		if err != nil {
			return nil, err
		}
		v.Cond += " " + c.Op + " " + q
	}
	for _, st := range c.Then {
		if st.If != nil {
			return nil, fmt.Errorf("snippet: if inside if")
		}
	}
	var err error
	if v.Then, err = planSteps(c.Then); err != nil {
		return nil, err
	}
	if len(v.Then) == 0 {
		return nil, fmt.Errorf("snippet: empty if")
	}
	return v, nil
}

type snippetView struct {
	Steps      []stepView      `json:",omitempty"`
	AddHeaders []addHeaderView `json:",omitempty"`
	More       []moreView      `json:",omitempty"`
	// Hide are the quoted names of proxy_hide_header, with the http
	// level's repeated.
	Hide    []string `json:",omitempty"`
	Expires string   `json:",omitempty"`
}

type addHeaderView struct {
	Name, Value string
	Always      bool
}

// moreView is a more_set_headers or more_clear_headers directive: its
// name, the quoted -s and -t values ("" for none) and quoted arguments.
type moreView struct {
	Directive     string
	Status, Types string
	Args          []string
}

// planSteps prints rewrite-module directives.
func planSteps(steps []model.SnippetStep) ([]stepView, error) {
	var out []stepView
	for _, st := range steps {
		var v stepView
		var err error
		switch {
		case st.Set != nil:
			if !variableName(st.Set.Name) {
				return nil, fmt.Errorf("snippet: variable name %q", st.Set.Name)
			}
			v.Set = st.Set.Name
			v.Value, err = quoteTemplate(st.Set.Value)
		case st.Rewrite != nil:
			r := st.Rewrite
			switch r.Flag {
			case model.RewriteNone, model.RewriteLast, model.RewriteBreak, model.RewriteRedirect, model.RewritePermanent:
				v.Flag = string(r.Flag)
			default:
				return nil, fmt.Errorf("snippet: rewrite flag %q", r.Flag)
			}
			if v.Regex, err = rewriteRegex(r.Regex); err == nil {
				v.Replacement, err = quoteTemplate(r.Replacement)
			}
		case st.If != nil:
			v.If, err = planIf(st.If)
		case st.Return != nil:
			r := st.Return
			if r.Code != 444 && (r.Code < 200 || r.Code > 599) {
				return nil, fmt.Errorf("snippet: return code %d", r.Code)
			}
			v.Code = r.Code
			if r.HasText {
				v.Text, err = quoteTemplate(r.Text)
			}
		default:
			return nil, fmt.Errorf("snippet: empty step")
		}
		if err != nil {
			return nil, fmt.Errorf("snippet: %w", err)
		}
		out = append(out, v)
	}
	return out, nil
}

// templateHeaders prints headers whose values are templates.
func templateHeaders(hs []model.TemplateHeader) ([]addHeaderView, error) {
	var out []addHeaderView
	for _, h := range hs {
		if !headerName(h.Name) {
			return nil, fmt.Errorf("snippet: header name %q is not a token", h.Name)
		}
		v, err := quoteTemplate(h.Value)
		if err != nil {
			return nil, fmt.Errorf("snippet: header %s: %w", h.Name, err)
		}
		out = append(out, addHeaderView{Name: `"` + h.Name + `"`, Value: v, Always: h.Always})
	}
	return out, nil
}

// planMore prints headers-more directives.
func planMore(directive string, ms []model.MoreHeaders) ([]moreView, error) {
	var out []moreView
	for _, m := range ms {
		v := moreView{Directive: directive}
		var codes []string
		for _, c := range m.Statuses {
			if c < 100 || c > 599 {
				return nil, fmt.Errorf("snippet: status %d", c)
			}
			codes = append(codes, strconv.Itoa(c))
		}
		if len(codes) > 0 {
			v.Status = `"` + strings.Join(codes, " ") + `"`
		}
		if len(m.Types) > 0 {
			for _, t := range m.Types {
				if !contentTypeToken(t) {
					return nil, fmt.Errorf("snippet: content type %q", t)
				}
			}
			v.Types = `"` + strings.Join(m.Types, " ") + `"`
		}
		for _, h := range m.Headers {
			name := strings.TrimSuffix(h.Name, "*")
			if !headerName(name) || directive == "more_set_headers" && name != h.Name {
				return nil, fmt.Errorf("snippet: header name %q", h.Name)
			}
			if directive == "more_clear_headers" {
				v.Args = append(v.Args, `"`+h.Name+`"`)
				continue
			}
			val, err := quoteTemplate(h.Value)
			if err != nil {
				return nil, fmt.Errorf("snippet: header %s: %w", h.Name, err)
			}
			// "Name: value" as one token: the name needs no escaping.
			v.Args = append(v.Args, `"`+h.Name+": "+val[1:])
		}
		out = append(out, v)
	}
	return out, nil
}

// contentTypeToken re-checks a -t value (snippet.contentType).
func contentTypeToken(t string) bool {
	slash := strings.IndexByte(t, '/')
	if slash <= 0 || slash == len(t)-1 || len(t) > 128 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-+._", c) >= 0 || i == slash) {
			return false
		}
	}
	return true
}

// expiresArg prints expires' arguments.
func expiresArg(e *model.Expires) (string, error) {
	switch e.Mode {
	case "off", "epoch", "max":
		if e.Modified {
			return "", fmt.Errorf("snippet: expires modified %s", e.Mode)
		}
		return e.Mode, nil
	case "":
	default:
		return "", fmt.Errorf("snippet: expires %q", e.Mode)
	}
	d := e.Time
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	if d%1e9 != 0 || d > 10*365*24*3600*1e9 {
		return "", fmt.Errorf("snippet: expires time %v", e.Time)
	}
	out := sign + strconv.FormatInt(int64(d/1e9), 10) + "s"
	if e.Modified {
		out = "modified " + out
	}
	return out, nil
}

// planSnippet prints what a location prints of its own snippet (own) and
// of its server's (server): the server's header directives first, then
// the location's; the location's rewrite steps. hidden are the http
// level's hidden headers, repeated when the location hides any.
func planSnippet(server, own *model.Snippet, hidden []string) (*snippetView, error) {
	if server == nil && own == nil {
		return nil, nil
	}
	v := &snippetView{}
	var err error
	if own != nil {
		if v.Steps, err = planSteps(own.Steps); err != nil {
			return nil, err
		}
	}
	var hide []string
	for _, s := range []*model.Snippet{server, own} {
		if s == nil {
			continue
		}
		add, err := templateHeaders(s.AddHeaders)
		if err != nil {
			return nil, err
		}
		v.AddHeaders = append(v.AddHeaders, add...)
		for _, d := range []struct {
			name string
			ms   []model.MoreHeaders
		}{{"more_set_headers", s.MoreSet}, {"more_clear_headers", s.MoreClear}} {
			more, err := planMore(d.name, d.ms)
			if err != nil {
				return nil, err
			}
			v.More = append(v.More, more...)
		}
		hide = append(hide, s.ProxyHideHeaders...)
		if s.Expires != nil {
			if v.Expires, err = expiresArg(s.Expires); err != nil {
				return nil, err
			}
		}
	}
	if len(hide) > 0 {
		seen := map[string]bool{}
		for _, n := range append(append([]string(nil), hidden...), hide...) {
			if !headerName(n) {
				return nil, fmt.Errorf("snippet: hidden header %q", n)
			}
			if k := strings.ToLower(n); !seen[k] {
				seen[k] = true
				v.Hide = append(v.Hide, `"`+n+`"`)
			}
		}
	}
	return v, nil
}

// snippetHeaders are the response header names a location's snippets add
// with add_header, as model.Header for inheritedHeaders.
func snippetHeaders(ss ...*model.Snippet) []model.Header {
	var out []model.Header
	for _, s := range ss {
		if s == nil {
			continue
		}
		for _, h := range s.AddHeaders {
			out = append(out, model.Header{Name: h.Name})
		}
	}
	return out
}

// snippetSetHeaders prints the proxy_set_header lines of a location's
// snippets, the server's first; a later line for the same name replaces
// an earlier one, and a Host line replaces the default Host.
func snippetSetHeaders(hv *headersView, ss ...*model.Snippet) error {
	for _, s := range ss {
		if s == nil {
			continue
		}
		lines, err := templateHeaders(s.ProxySetHeaders)
		if err != nil {
			return err
		}
		for i, h := range s.ProxySetHeaders {
			if strings.EqualFold(h.Name, "Host") {
				hv.Host, hv.ProxyHost = lines[i].Value, false
				continue
			}
			hv.Custom = replaceHeader(hv.Custom, headerLine{Name: lines[i].Name, Value: lines[i].Value})
		}
	}
	return nil
}

// replaceHeader sets a header line in a list, replacing one of the same
// name; the list is copied, since the http level's lines are shared.
func replaceHeader(ls []headerLine, l headerLine) []headerLine {
	out := make([]headerLine, 0, len(ls)+1)
	for _, x := range ls {
		if !strings.EqualFold(x.Name, l.Name) {
			out = append(out, x)
		}
	}
	return append(out, l)
}

// snippets are the snippets that apply to a location with policy pol
// (nil for none): the server's header directives (the ConfigMap's
// server-snippet, then the host's) and the location's own (the ConfigMap's
// location-snippet, then the Ingress's).
func (sp *serverPlan) snippets(pol *model.Policy) (server, own *model.Snippet) {
	c := &sp.rc.m.Config
	server = c.ServerSnippet
	if sp.srv.Policy != nil {
		server = model.Join(server, sp.srv.Policy.Snippet)
	}
	own = c.LocationSnippet
	if pol != nil {
		own = model.Join(own, pol.Snippet)
	}
	return server, own
}

// usesHeadersMore reports whether a snippet of the model needs the
// headers-more module.
func usesHeadersMore(m *model.Model) bool {
	if m.Config.ServerSnippet.UsesHeadersMore() || m.Config.LocationSnippet.UsesHeadersMore() {
		return true
	}
	for _, srv := range m.Servers {
		if srv.Policy != nil && srv.Policy.Snippet.UsesHeadersMore() {
			return true
		}
		for _, l := range append(slices.Clip(srv.Locations), srv.Default) {
			if l != nil && l.Policy != nil && l.Policy.Snippet.UsesHeadersMore() {
				return true
			}
		}
	}
	return false
}
