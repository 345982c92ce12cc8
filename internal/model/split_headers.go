package model

import (
	"fmt"
	"strconv"
	"strings"
)

// HeaderAction is what a header edit does to a request header.
type HeaderAction string

// The edits of Gateway API's RequestHeaderModifier.
const (
	// HeaderSet replaces the client's value (or adds the header).
	HeaderSet HeaderAction = "set"
	// HeaderAdd appends the value to the client's, after a comma, or
	// sends the value alone when the client sent none.
	HeaderAdd HeaderAction = "add"
	// HeaderRemove sends no such header.
	HeaderRemove HeaderAction = "remove"
)

// HeaderEdit is one edit of a request header sent to a backend.
type HeaderEdit struct {
	// Name passed ParseHeaderName.
	Name   string
	Action HeaderAction
	// Value passed ParseHeaderValue; "" for HeaderRemove.
	Value HeaderValue
}

// MaxHeaderEdits bounds the edits of one RequestHeaders: Gateway API's 16
// each to set, add and remove.
const MaxHeaderEdits = 48

// RequestHeaders are the edits a request's headers get on the way to a
// backend, at most one per name (names compare ignoring case). A split's
// target may carry its own (Split.Headers): Gateway API's backendRef
// RequestHeaderModifier, which applies only to the requests that backend
// is picked for, after the location's own edits (a rule's filter).
type RequestHeaders []HeaderEdit

// Validate checks every edit: names and values of their grammars, one
// edit per name, a known action.
func (h RequestHeaders) Validate() error {
	if len(h) > MaxHeaderEdits {
		return fmt.Errorf("%d header edits: at most %d", len(h), MaxHeaderEdits)
	}
	seen := map[string]bool{}
	for _, e := range h {
		if _, err := ParseHeaderName(e.Name); err != nil {
			return err
		}
		k := strings.ToLower(e.Name)
		if seen[k] {
			return fmt.Errorf("header %q: one edit per name", e.Name)
		}
		seen[k] = true
		switch e.Action {
		case HeaderSet, HeaderAdd:
			if _, err := ParseHeaderValue(string(e.Value)); err != nil {
				return fmt.Errorf("header %q: %w", e.Name, err)
			}
		case HeaderRemove:
			if e.Value != "" {
				return fmt.Errorf("header %q: a removal has no value", e.Name)
			}
		default:
			return fmt.Errorf("header %q: unknown action %q: want set, add or remove", e.Name, e.Action)
		}
	}
	return nil
}

// find returns the index of the edit of name, -1 when none.
func (h RequestHeaders) find(name string) int {
	for i, e := range h {
		if strings.EqualFold(e.Name, name) {
			return i
		}
	}
	return -1
}

// Then returns the edits of h followed by those of b, as one edit per
// name (Gateway API applies a rule's filters, then its backendRef's):
// b's set or remove replaces h's edit of the name; b's add appends to
// h's value (a set stays a set, an add an add), or after h's removal
// sets the value alone. The order is h's, then b's names h has not.
func (h RequestHeaders) Then(b RequestHeaders) RequestHeaders {
	if len(b) == 0 {
		return h
	}
	out := append(RequestHeaders(nil), h...)
	for _, e := range b {
		i := out.find(e.Name)
		if i < 0 {
			out = append(out, e)
			continue
		}
		prev := out[i]
		switch {
		case e.Action != HeaderAdd:
			out[i] = e
		case prev.Action == HeaderRemove:
			out[i] = HeaderEdit{Name: e.Name, Action: HeaderSet, Value: e.Value}
		default:
			out[i].Value = joinHeaderValue(prev.Value, e.Value)
		}
	}
	return out
}

// joinHeaderValue is a's value with b appended after a comma, as an add
// appends to the client's.
func joinHeaderValue(a, b HeaderValue) HeaderValue {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "," + b
}

// HeaderNames are the names a split's header sets edit, once each (the
// first spelling), in the order they first appear: the request headers
// its location sends as the pick says.
func (s *Split) HeaderNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, h := range s.Headers {
		for _, e := range h {
			if k := strings.ToLower(e.Name); !seen[k] {
				seen[k] = true
				out = append(out, e.Name)
			}
		}
	}
	return out
}

// validateHeaders checks a split's header sets and the targets' indexes
// into them.
func (s *Split) validateHeaders() error {
	if len(s.Headers) > MaxSplitAnswers {
		return fmt.Errorf("%d header sets: at most %d", len(s.Headers), MaxSplitAnswers)
	}
	for i, h := range s.Headers {
		if len(h) == 0 {
			return fmt.Errorf("header set %d is empty", i)
		}
		if err := h.Validate(); err != nil {
			return fmt.Errorf("header set %d: %w", i, err)
		}
	}
	if n := len(s.HeaderNames()); n > MaxSplitHeaderNames {
		return fmt.Errorf("the header sets edit %d names: at most %d", n, MaxSplitHeaderNames)
	}
	check := func(ts []Target) error {
		for _, t := range ts {
			if t.Headers < 0 || t.Headers > len(s.Headers) || t.Headers != 0 && t.Backend == "" {
				return fmt.Errorf("target %q headers %d: want 0, or for a backend one of the %d header sets", t.Backend, t.Headers, len(s.Headers))
			}
		}
		return nil
	}
	for _, r := range s.Rules {
		if err := check(r.Targets); err != nil {
			return err
		}
	}
	return check(s.Default)
}

// MaxSplitHeaderNames bounds the names a split's header sets edit: each
// is a request header line of its location.
const MaxSplitHeaderNames = 64

// Bounds of a header edit, as ParseHeaderName's and ParseHeaderValue's
// (the balancer's payload checks them again).
const (
	MaxHeaderNameLen  = maxHeaderNameLen
	MaxHeaderValueLen = maxHeaderValueLen
)

// Snippet is the edits as a location applies them to every request: a
// set is proxy_set_header; a removal proxy_set_header with an empty
// value (nginx then sends none); an add appends to the client's value
// with a comma (in a variable gateway_add_<i>, set to the value alone
// when the client sent none), or is a set for a name with a "." (which
// nginx never takes from a client).
func (h RequestHeaders) Snippet() *Snippet {
	var sn Snippet
	literal := func(v HeaderValue) Template {
		if v == "" {
			return Template{}
		}
		return Template{{Literal: string(v)}}
	}
	adds := 0
	for _, e := range h {
		switch e.Action {
		case HeaderSet:
			sn.ProxySetHeaders = append(sn.ProxySetHeaders, TemplateHeader{Name: e.Name, Value: literal(e.Value)})
		case HeaderAdd:
			v := literal(e.Value)
			if strings.Contains(e.Name, ".") {
				// nginx drops a client header whose name has a "."
				// (ignore_invalid_headers) and no variable names one:
				// there is nothing to add to.
				sn.ProxySetHeaders = append(sn.ProxySetHeaders, TemplateHeader{Name: e.Name, Value: v})
				continue
			}
			hv := "http_" + strings.ReplaceAll(strings.ToLower(e.Name), "-", "_")
			own := "gateway_add_" + strconv.Itoa(adds)
			adds++
			joined := append(Template{{Variable: hv}, {Literal: ","}}, v...)
			sn.Steps = append(sn.Steps,
				SnippetStep{Set: &SetVariable{Name: own, Value: joined}},
				SnippetStep{If: &SnippetIf{Variable: hv, Op: "=", Value: "",
					Then: []SnippetStep{{Set: &SetVariable{Name: own, Value: v}}}}})
			sn.ProxySetHeaders = append(sn.ProxySetHeaders, TemplateHeader{Name: e.Name, Value: Template{{Variable: own}}})
		case HeaderRemove:
			sn.ProxySetHeaders = append(sn.ProxySetHeaders, TemplateHeader{Name: e.Name, Value: Template{}})
		}
	}
	return &sn
}

// HeadersOf returns the edits of the first target of backend, in the
// order Backends lists them (the rules', then the default's): what a
// location sends backend when nothing picks per request (nginx without
// the Lua balancer, where Proxy.Backend serves every request).
func (s *Split) HeadersOf(backend string) RequestHeaders {
	for _, ts := range append(s.ruleTargets(), s.Default) {
		for _, t := range ts {
			if t.Answer == 0 && t.Backend == backend {
				if t.Headers > 0 && t.Headers <= len(s.Headers) {
					return s.Headers[t.Headers-1]
				}
				return nil
			}
		}
	}
	return nil
}

func (s *Split) ruleTargets() [][]Target {
	var out [][]Target
	for _, r := range s.Rules {
		out = append(out, r.Targets)
	}
	return out
}
