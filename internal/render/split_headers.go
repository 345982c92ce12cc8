package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// A split whose targets edit request headers of their own
// (model.Split.Headers: Gateway API's backendRef RequestHeaderModifier)
// must pick before nginx builds the request to the backend, which it does
// before the balancer runs: such a location gets the balancer's access
// hook, as a split that may answer does. Each header name the split's
// sets edit becomes one request header line of the location, sent from a
// variable of its own (balancer.HeaderVariable):
//
//	set $causeway_header_backend $http_backend;
//	proxy_set_header Backend $causeway_header_backend;
//
// The set (rewrite phase, before any break) gives the variable what the
// location sends without an edit: the client's header, or the
// location's own line for that name (a proxy-set-headers header, Host).
// The hook then sets the variables of the picked target's edits. The
// edits' values are pushed state, never configuration text: a new value
// or weight is a push; a new header name reloads.

// splitHeaders gives lv the header lines and defaults of l's split's
// header sets, and its access hook.
func (sp *serverPlan) splitHeaders(lv *locationView, l *model.Location) error {
	p := l.Action.Proxy
	if p == nil || p.Split == nil || len(p.Split.Headers) == 0 || !sp.rc.lua {
		return nil
	}
	v := lv.Policy
	if v == nil {
		// A location without a policy of its own (planPolicy).
		var pol model.Policy
		module, _, err := protocol(pol.Protocol)
		if err != nil {
			return err
		}
		v = &policyView{Module: module}
		lv.Policy = v
	}
	if v.SatisfyAny {
		return fmt.Errorf("location %q: a split with header edits cannot be checked with satisfy any, "+
			"which would skip its access hook", l.Match.Path)
	}
	v.ChoiceHook = true
	if v.Headers == nil {
		v.Headers = sp.clientHeaders(&headersView{Module: v.Module, GRPC: v.Module == "grpc", Custom: sp.rc.setHeaders})
	}
	h := *v.Headers
	h.Custom = slices.Clip(h.Custom)
	for _, name := range p.Split.HeaderNames() {
		if !headerName(name) {
			return fmt.Errorf("location %q: split header name %q is not a token", l.Match.Path, name)
		}
		variable := balancer.HeaderVariable(name)
		var def string
		if strings.EqualFold(name, "Host") {
			switch {
			case h.Host != "":
				def = h.Host
			case h.ProxyHost:
				def = "$proxy_host"
			default:
				def = "$causeway_upstream_host"
			}
			h.Host, h.ProxyHost = "$"+variable, false
		} else {
			def = clientHeader(name)
			if i := slices.IndexFunc(h.Custom, func(c headerLine) bool { return strings.EqualFold(c.Name, `"`+name+`"`) }); i >= 0 {
				def = h.Custom[i].Value
			}
			h.Custom = replaceHeader(h.Custom, headerLine{Name: `"` + name + `"`, Value: "$" + variable})
		}
		v.HeaderDefaults = append(v.HeaderDefaults, headerLine{Name: variable, Value: def})
	}
	v.Headers = &h
	return nil
}

// clientHeader is the variable of the client's request header name
// ($http_<name>), or "" for a name with ".", which nginx ignores in
// requests (ignore_invalid_headers) and no variable can name.
func clientHeader(name string) string {
	if strings.Contains(name, ".") {
		return `""`
	}
	return "$http_" + strings.ReplaceAll(strings.ToLower(name), "-", "_")
}

// plainSplitHeaders is l with the edits of backend's target in its
// split applied to every request, without the Lua balancer: backend
// (Proxy.Backend) then serves every request, and gets its own edits as a
// rule's filter would give them.
func (sp *serverPlan) plainSplitHeaders(l *model.Location, backend string) *model.Location {
	p := l.Action.Proxy
	if sp.rc.lua || p == nil || p.Split == nil {
		return l
	}
	h := p.Split.HeadersOf(backend)
	if len(h) == 0 {
		return l
	}
	cp := *l
	pol := model.Policy{}
	if l.Policy != nil {
		pol = *l.Policy
	}
	pol.Snippet = model.Join(pol.Snippet, h.Snippet())
	cp.Policy = &pol
	return &cp
}
