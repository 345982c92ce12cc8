package balancer

import (
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// HeaderEdit is one request header edit of a split's header set
// (model.HeaderEdit): action is set, add or remove.
type HeaderEdit struct {
	Name   string `json:"name"`
	Action string `json:"action"`
	Value  string `json:"value,omitempty"`
}

// HeaderVariable is the nginx variable a location whose split has header
// sets sends request header name from (proxy_set_header name $variable):
// the access hook (causeway.balancer.access) sets it for the backend it
// picks. Letters are lowered, digits kept, and each of "-", "_" and "."
// is written "_h", "_u" and "_d", so that two names (which
// model.ParseHeaderName allows) never share a variable. validate.lua's
// header_var is its twin.
func HeaderVariable(name string) string {
	var b strings.Builder
	b.WriteString("causeway_header_")
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '-':
			b.WriteString("_h")
		case c == '_':
			b.WriteString("_u")
		case c == '.':
			b.WriteString("_d")
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func headerSets(hs []model.RequestHeaders) [][]HeaderEdit {
	var out [][]HeaderEdit
	for _, h := range hs {
		set := make([]HeaderEdit, len(h))
		for i, e := range h {
			set[i] = HeaderEdit{Name: e.Name, Action: string(e.Action), Value: string(e.Value)}
		}
		out = append(out, set)
	}
	return out
}

func modelHeaderSets(hs [][]HeaderEdit) []model.RequestHeaders {
	var out []model.RequestHeaders
	for _, h := range hs {
		set := make(model.RequestHeaders, len(h))
		for i, e := range h {
			set[i] = model.HeaderEdit{Name: e.Name, Action: model.HeaderAction(e.Action), Value: model.HeaderValue(e.Value)}
		}
		out = append(out, set)
	}
	return out
}
