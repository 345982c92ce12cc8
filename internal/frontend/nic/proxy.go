package nic

import (
	"fmt"
	"reflect"
	"strings"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// proxy translates a proxy action's rewritePath, requestHeaders and
// responseHeaders into the location's policy (nil when it sets none). A
// bad header drops itself; a bad rewritePath leaves the route out, as
// passing the path unchanged would reach another resource.
func (t *translator) proxy(field string, p *nicv1.ActionProxy) (*model.Policy, bool) {
	pol := &model.Policy{}
	if p.RewritePath != "" {
		r, err := rewritePath(p.RewritePath, t.path)
		if err != nil {
			t.dropped(fmt.Sprintf("%s.rewritePath %q: %v; the route is left out", field, model.Truncate(p.RewritePath), err))
			return nil, false
		}
		pol.Rewrite = r
	}
	var sn model.Snippet
	if h := p.RequestHeaders; h != nil {
		pol.NoRequestHeaders = h.Pass != nil && !*h.Pass
		for i, hd := range h.Set {
			if th, ok := t.templateHeader(fmt.Sprintf("%s.requestHeaders.set[%d]", field, i), hd, false); ok {
				sn.ProxySetHeaders = append(sn.ProxySetHeaders, th)
			}
		}
	}
	if h := p.ResponseHeaders; h != nil {
		sn.ProxyHideHeaders = t.headerNames(field+".responseHeaders.hide", h.Hide, nil)
		pol.ProxyPassHeaders = t.headerNames(field+".responseHeaders.pass", h.Pass, nil)
		pol.ProxyIgnoreHeaders = t.headerNames(field+".responseHeaders.ignore", h.Ignore, model.IgnorableHeaders)
		for i, hd := range h.Add {
			if th, ok := t.templateHeader(fmt.Sprintf("%s.responseHeaders.add[%d]", field, i), hd.Header, hd.Always); ok {
				sn.AddHeaders = append(sn.AddHeaders, th)
			}
		}
	}
	if !reflect.DeepEqual(sn, model.Snippet{}) {
		// The snippet model holds these typed directives, printed by the
		// same code as an accepted configuration-snippet's.
		pol.Snippet = &sn
	}
	if reflect.DeepEqual(*pol, model.Policy{}) {
		return nil, true
	}
	return pol, true
}

// rewritePath reads NGINX Ingress Controller's rewritePath: on a prefix
// or exact route it replaces the route's path, keeping the rest (nginx's
// proxy_pass with a URI); on a regex route it replaces the whole path,
// and may use the regex's groups as $1 to $9.
func rewritePath(s string, m model.Match) (*model.Rewrite, error) {
	if m.Type != model.Regex {
		if strings.ContainsAny(s, "?$") {
			return nil, fmt.Errorf("a prefix or exact route's rewritePath is a path without ? or $")
		}
		target, err := model.ParseRewriteTarget(s, 0)
		if err != nil {
			return nil, err
		}
		return &model.Rewrite{Target: target, Prefix: true}, nil
	}
	target, err := model.ParseRewriteTarget(s, model.RegexGroups(m.Path))
	if err != nil {
		return nil, err
	}
	return &model.Rewrite{Target: target}, nil
}

// templateHeader reads a header whose value may use the variables NGINX
// Ingress Controller allows in a proxy's headers.
func (t *translator) templateHeader(field string, h nicv1.Header, always bool) (model.TemplateHeader, bool) {
	return t.templateHeaderOf(field, h, always, model.ProxyHeaderVariables)
}

// templateHeaderOf reads a header whose value may use the variables of vs.
func (t *translator) templateHeaderOf(field string, h nicv1.Header, always bool, vs model.VariableSet) (model.TemplateHeader, bool) {
	name, err := model.ParseHeaderName(h.Name)
	var value model.Template
	if err == nil {
		value, err = model.ParseVariableTemplate(h.Value, vs)
	}
	if err != nil {
		t.dropped(fmt.Sprintf("%s %q: %v; the header is left out", field, model.Truncate(h.Name), err))
		return model.TemplateHeader{}, false
	}
	return model.TemplateHeader{Name: name, Value: value, Always: always}, true
}

// headerNames reads header names, of allowed when set; a bad one is
// dropped with a Problem.
func (t *translator) headerNames(field string, in []string, allowed map[string]bool) []string {
	var out []string
	for i, n := range in {
		_, err := model.ParseHeaderName(n)
		if err == nil && allowed != nil && !allowed[n] {
			err = fmt.Errorf("not one of the headers nginx can ignore (X-Accel-*, Expires, Cache-Control, Set-Cookie, Vary)")
		}
		if err != nil {
			t.dropped(fmt.Sprintf("%s[%d] %q: %v; left out", field, i, model.Truncate(n), err))
			continue
		}
		out = append(out, n)
	}
	return out
}
