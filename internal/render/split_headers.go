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
// The set (rewrite phase, after the snippets' steps, which compute a
// rule's own edits) gives the variable what the location would send
// without a backend's edit: its own line for that name (a rule's edit, a
// proxy-set-headers header, Host), else the client's header. The hook
// then applies the picked target's edits to the variables. The edits'
// values are pushed state, never configuration text: a new value or
// weight is a push; a new header name reloads.
//
// Without the Lua balancer the location's backend serves every request
// (the controller reports that splits need the balancer), and its own
// edits are applied here, as rewrite-module steps on the same variables.

// splitHeaders gives lv the header lines and defaults of l's split's
// header sets, and its access hook (or the served backend's edits).
func (sp *serverPlan) splitHeaders(lv *locationView, l *model.Location) error {
	p := l.Action.Proxy
	if p == nil || p.Split == nil || len(p.Split.Headers) == 0 || p.AnswersOnly() {
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
	if !sp.rc.lua {
		var err error
		v.HeaderEdits, err = editSteps(p.Split.HeadersOf(sp.servedBackend(p)))
		return err
	}
	if v.SatisfyAny {
		return fmt.Errorf("location %q: a split with header edits cannot be checked with satisfy any, "+
			"which would skip its access hook", l.Match.Path)
	}
	v.ChoiceHook = true
	return nil
}

// editSteps are rewrite-module steps that apply edits to the variables
// of their headers, as the access hook does: a set or a removal sets the
// value (empty: nginx sends no such header); an add appends it after a
// comma, or sets it alone when the variable is empty. The variables are
// the balancer's (not a snippet's), the values pass through Quote.
func editSteps(edits model.RequestHeaders) ([]stepView, error) {
	var out []stepView
	for _, e := range edits {
		variable := balancer.HeaderVariable(e.Name)
		if strings.Trim(variable, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			return nil, fmt.Errorf("split header variable %q", variable)
		}
		value, err := Quote(string(e.Value))
		if err != nil {
			return nil, fmt.Errorf("split header %q: %w", e.Name, err)
		}
		if e.Action != model.HeaderAdd {
			out = append(out, stepView{Set: variable, Value: value})
			continue
		}
		joined := `"${` + variable + `},` + value[1:]
		out = append(out,
			stepView{If: &ifView{Cond: "$" + variable + ` != ""`, Then: []stepView{{Set: variable, Value: joined}}}},
			stepView{If: &ifView{Cond: "$" + variable + ` = ""`, Then: []stepView{{Set: variable, Value: value}}}})
	}
	return out, nil
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
