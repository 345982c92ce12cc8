package model

import (
	"errors"
	"slices"
	"strings"
	"time"
)

// Snippet is what an accepted configuration or server snippet adds: nginx
// directives of an allowlist, each parsed into typed values (package
// snippet). It never holds configuration text: the renderer prints every
// value through its escaping helpers, so a snippet cannot add what the
// model cannot express.
type Snippet struct {
	// Steps are the directives of nginx's rewrite module (set, rewrite,
	// return) in the order written: nginx runs them in that order.
	Steps []SnippetStep
	// AddHeaders are add_header's response headers.
	AddHeaders []TemplateHeader
	// MoreSet and MoreClear are the headers-more module's
	// more_set_headers and more_clear_headers.
	MoreSet   []MoreHeaders
	MoreClear []MoreHeaders
	// ProxySetHeaders are proxy_set_header's request headers to the
	// backend; ProxyHideHeaders proxy_hide_header's names.
	ProxySetHeaders  []TemplateHeader
	ProxyHideHeaders []string
	// Expires is the expires directive; nil when not set.
	Expires *Expires
	// Maps are an http snippet's map blocks, each defining a variable
	// that the snippets of every host may read.
	Maps []SnippetMap
	// Access are the allow and deny directives, as the address lists
	// they mean (nil for none); the builder adds them to the policy of
	// every location the snippet applies to (And), so render prints
	// them as it prints any address list.
	Access *AccessList
}

// Join returns a snippet that applies a, then b: their directives in that
// order, b's expires winning. Either may be nil.
func Join(a, b *Snippet) *Snippet {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := &Snippet{
		Steps:            slices.Concat(a.Steps, b.Steps),
		AddHeaders:       slices.Concat(a.AddHeaders, b.AddHeaders),
		MoreSet:          slices.Concat(a.MoreSet, b.MoreSet),
		MoreClear:        slices.Concat(a.MoreClear, b.MoreClear),
		ProxySetHeaders:  slices.Concat(a.ProxySetHeaders, b.ProxySetHeaders),
		ProxyHideHeaders: slices.Concat(a.ProxyHideHeaders, b.ProxyHideHeaders),
		Expires:          a.Expires,
		Access:           And(a.Access, b.Access),
		Maps:             slices.Concat(a.Maps, b.Maps),
	}
	if b.Expires != nil {
		out.Expires = b.Expires
	}
	return out
}

// Reads returns the first of names that the snippet reads (in a value,
// a condition, a map's source), "" when it reads none.
func (s *Snippet) Reads(names []string) string {
	if s == nil || len(names) == 0 {
		return ""
	}
	var ts []Template
	var ifVars []string
	var steps func([]SnippetStep)
	steps = func(ss []SnippetStep) {
		for _, st := range ss {
			switch {
			case st.Set != nil:
				ts = append(ts, st.Set.Value)
			case st.Rewrite != nil:
				ts = append(ts, st.Rewrite.Replacement)
			case st.Return != nil:
				ts = append(ts, st.Return.Text)
			case st.If != nil:
				ifVars = append(ifVars, st.If.Variable)
				steps(st.If.Then)
			}
		}
	}
	steps(s.Steps)
	for _, hs := range [][]TemplateHeader{s.AddHeaders, s.ProxySetHeaders} {
		for _, h := range hs {
			ts = append(ts, h.Value)
		}
	}
	for _, m := range s.MoreSet {
		for _, h := range m.Headers {
			ts = append(ts, h.Value)
		}
	}
	for _, m := range s.Maps {
		ts = append(ts, m.Source, m.Default)
		for _, e := range m.Entries {
			ts = append(ts, e.Value)
		}
	}
	for _, n := range names {
		if slices.Contains(ifVars, n) {
			return n
		}
		for _, t := range ts {
			for _, p := range t {
				if p.Variable == n {
					return n
				}
			}
		}
	}
	return ""
}

// UsesHeadersMore reports whether the snippet needs the headers-more
// module.
func (s *Snippet) UsesHeadersMore() bool {
	return s != nil && len(s.MoreSet)+len(s.MoreClear) > 0
}

// Answers reports whether the snippet can answer a request in the rewrite
// phase (a return, a redirecting rewrite), before the access phase that
// checks passwords, address lists and limits.
func (s *Snippet) Answers() bool {
	if s == nil {
		return false
	}
	return answers(s.Steps)
}

func answers(steps []SnippetStep) bool {
	return answersWith(steps, func(*SnippetReturn) bool { return true })
}

// Serves reports whether the snippet can answer a request with something
// other than a refusal: a return of a status below 400, or a redirect.
// Ahead of an address list, such an answer would reach the clients the
// list keeps out.
func (s *Snippet) Serves() bool {
	return s != nil && answersWith(s.Steps, func(r *SnippetReturn) bool { return r.Code < 400 })
}

// answersWith reports whether steps can answer with a return that
// counts, or a redirecting rewrite.
func answersWith(steps []SnippetStep, counts func(*SnippetReturn) bool) bool {
	for _, st := range steps {
		if st.Return != nil && counts(st.Return) || st.Rewrite != nil && st.Rewrite.Redirects() || st.If != nil && answersWith(st.If.Then, counts) {
			return true
		}
	}
	return false
}

// SnippetMap is nginx's map: Variable gets the Value of the first entry
// whose key Source matches (literal keys before regexes, as nginx tries
// them), else Default.
type SnippetMap struct {
	// Source is the value matched: text and variables a snippet may read.
	Source Template
	// Variable is the new variable's name without "$" (snippet.VariableName).
	Variable string
	Default  Template
	// HasDefault tells a default of "" from none (also "").
	HasDefault bool
	Entries    []MapEntry
}

// MapEntry is one key of a map and its value.
type MapEntry struct {
	// Op is "" for a literal Key (text ParseHeaderValue accepts, without
	// "$"), or "~" or "~*" for a Key that is a regex ParseHeaderRegex
	// accepts, case-sensitive or not.
	Op, Key string
	Value   Template
}

// SnippetStep is one rewrite-module directive: exactly one field is set.
type SnippetStep struct {
	Set     *SetVariable
	Rewrite *SnippetRewrite
	Return  *SnippetReturn
	// If runs its steps when its condition holds.
	If *SnippetIf
}

// SnippetIf is nginx's if with a condition on one variable and a body of
// return, set and rewrite (last or redirecting) steps, never another if.
type SnippetIf struct {
	// Variable is a variable the snippet may read, without "$".
	Variable string
	// Op is "" (the variable is neither empty nor "0"), "=" or "!="
	// (Value is text ParseHeaderValue accepted), or "~", "~*", "!~",
	// "!~*" (Value is a regex ParseHeaderRegex accepted).
	Op, Value string
	Then      []SnippetStep
}

// SetVariable is nginx's set: a variable of the snippet's own gets a value.
type SetVariable struct {
	// Name is the variable's name without "$" (see snippet.VariableName).
	Name  string
	Value Template
}

// SnippetRewrite is nginx's rewrite.
type SnippetRewrite struct {
	// Regex is "^" followed by a regular expression ParseRegex accepted.
	Regex string
	// Replacement may refer to the regex's groups as $1..$9.
	Replacement Template
	Flag        RewriteFlag
}

// Redirects reports whether the rewrite answers with a redirect instead
// of changing the URI.
func (r *SnippetRewrite) Redirects() bool {
	if r.Flag == RewriteRedirect || r.Flag == RewritePermanent {
		return true
	}
	if len(r.Replacement) == 0 {
		return false
	}
	first := r.Replacement[0]
	if first.Variable == "scheme" {
		return true
	}
	return first.Variable == "" && (strings.HasPrefix(first.Literal, "http://") || strings.HasPrefix(first.Literal, "https://"))
}

// RewriteFlag is rewrite's last argument; "" changes the URI and goes on
// with the next directive.
type RewriteFlag string

// The rewrite flags.
const (
	RewriteNone      RewriteFlag = ""
	RewriteLast      RewriteFlag = "last"
	RewriteBreak     RewriteFlag = "break"
	RewriteRedirect  RewriteFlag = "redirect"
	RewritePermanent RewriteFlag = "permanent"
)

// SnippetReturn is nginx's return: a status and, for redirects (301, 302,
// 303, 307, 308), a URL, else an optional body text.
type SnippetReturn struct {
	Code int
	// Text is the URL of a redirect or the body of another answer.
	Text Template
	// HasText tells "return 200" (no body) from `return 200 ""`.
	HasText bool
}

// TemplateHeader is a header whose value may refer to variables.
type TemplateHeader struct {
	Name  string
	Value Template
	// Always sends an add_header header on every status, not only on
	// successes and redirects.
	Always bool
}

// MoreHeaders is one more_set_headers or more_clear_headers directive.
type MoreHeaders struct {
	// Headers are the headers to set; for more_clear_headers only their
	// names count, and a name may end with "*" (every header starting so).
	Headers []TemplateHeader
	// Statuses and Types limit the directive to responses with these
	// statuses and content types (-s, -t); empty means all.
	Statuses []int
	Types    []string
}

// Expires is nginx's expires.
type Expires struct {
	// Mode is "off", "epoch", "max" or "" for a time.
	Mode string
	// Time is the offset from now (or from the file's modification time
	// with Modified); it may be negative.
	Time     time.Duration
	Modified bool
}

// Template is a value that nginx assembles per request: literal text and
// variable references, in order. A literal never holds "$".
type Template []TemplatePart

// TemplatePart is either a literal or a variable reference (its name
// without "$"; "1".."9" for a regex group).
type TemplatePart struct {
	Literal  string
	Variable string
}

// String prints the template as nginx's own syntax would: ${name} for a
// variable. It is for messages and tests, never for configuration.
func (t Template) String() string {
	var b strings.Builder
	for _, p := range t {
		if p.Variable != "" {
			b.WriteString("${" + p.Variable + "}")
		} else {
			b.WriteString(p.Literal)
		}
	}
	return b.String()
}

// ClosedLocation is a location block of a refused server snippet that
// only refuses requests (location ~ /\.git { deny all; }): instead of
// closing every path of the snippet's objects, the requests it matches
// answer 503, and the rest are served (snippet.DenyingLocations).
type ClosedLocation struct {
	// Modifier is nginx's: "" or "^~" (a prefix), "=" (exact), "~" or
	// "~*" (a regex, case-sensitive or not).
	Modifier string
	// Path is a path ValidatePath accepts for a prefix or exact match, or
	// a regex ValidateClosedRegex accepts.
	Path string
	// Source is the object whose snippet it is.
	Source ObjectRef
}

// ValidateClosedRegex checks the regex of a closed location: as nginx
// reads a location regex, unanchored, but in the grammar of path regexes
// (ParseRegex, which wants a leading "/"), so PCRE and Go agree on it.
func ValidateClosedRegex(re string) error {
	check := re
	if !strings.HasPrefix(check, "/") {
		check = "/" + strings.TrimPrefix(check, "^")
	}
	if strings.HasPrefix(re, "^") && !strings.HasPrefix(re, "^/") {
		return errors.New("an anchored location regex must start with ^/")
	}
	_, err := ParseRegex(check)
	return err
}
