package nic

import (
	"fmt"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// action translates an action: exactly one of pass, redirect, return and
// proxy. ok is false when the route is left out, with a Problem.
func (t *translator) action(field string, a *nicv1.Action, upstreams map[string]*Upstream) (Action, bool, error) {
	n := 0
	for _, set := range []bool{a.Pass != "", a.Redirect != nil, a.Return != nil, a.Proxy != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return Action{}, false, fmt.Errorf("%s must have exactly one of pass, redirect, return and proxy", field)
	}
	upstream := func(name string) error {
		if _, ok := upstreams[name]; !ok {
			return fmt.Errorf("%s names upstream %q, which spec.upstreams does not define", field, model.Truncate(name))
		}
		return nil
	}
	switch {
	case a.Pass != "":
		if err := upstream(a.Pass); err != nil {
			return Action{}, false, err
		}
		return Action{Upstream: a.Pass}, true, nil
	case a.Proxy != nil:
		if err := upstream(a.Proxy.Upstream); err != nil {
			return Action{}, false, err
		}
		pol, ok := t.proxy(field+".proxy", a.Proxy)
		return Action{Upstream: a.Proxy.Upstream, Policy: pol}, ok, nil
	case a.Redirect != nil:
		r, ok, err := t.redirect(field+".redirect", a.Redirect, model.RedirectVariables)
		return Action{Redirect: r}, ok, err
	default:
		return t.actionReturn(field+".return", a.Return)
	}
}

// redirect translates a redirect whose URL may use the variables of vs.
func (t *translator) redirect(field string, r *nicv1.ActionRedirect, vs model.VariableSet) (*model.Redirect, bool, error) {
	code := r.Code
	if code == 0 {
		code = 301
	}
	switch code {
	case 301, 302, 307, 308:
	default:
		return nil, false, fmt.Errorf("%s.code %d: want 301, 302, 307 or 308", field, code)
	}
	if url, err := model.ParseRedirectURL(r.URL); err == nil {
		return &model.Redirect{Code: code, URL: url}, true, nil
	}
	tmpl, err := model.ParseRedirectTemplate(r.URL, vs)
	if err != nil {
		t.dropped(fmt.Sprintf("%s.url %q: %v; the route is left out", field, model.Truncate(r.URL), err))
		return nil, false, nil
	}
	return &model.Redirect{Code: code, Template: tmpl}, true, nil
}

// actionReturn translates a fixed response: a body with NGINX variables
// from the allowed set, its type, and headers (a bad header or type drops
// only itself).
func (t *translator) actionReturn(field string, r *nicv1.ActionReturn) (Action, bool, error) {
	code := r.Code
	if code == 0 {
		code = 200
	}
	if code < 200 || code > 599 {
		return Action{}, false, fmt.Errorf("%s.code %d: want 200 to 599", field, code)
	}
	ret := &model.Return{Status: code}
	if r.Body != "" {
		if code >= 300 && code < 400 {
			return Action{}, false, fmt.Errorf("%s.code %d: a return with a body wants a 2xx, 4xx or 5xx code", field, code)
		}
		body, err := model.ParseVariableTemplate(r.Body, model.ReturnBodyVariables)
		if err != nil {
			t.dropped(fmt.Sprintf("%s.body: %v; the route is left out", field, err))
			return Action{}, false, nil
		}
		ret.Body = body
	}
	if r.Type != "" {
		if typ, err := model.ParseReturnType(r.Type); err != nil {
			t.dropped(fmt.Sprintf("%s.type %q: %v; the default (text/plain) is used", field, model.Truncate(r.Type), err))
		} else {
			ret.Type = typ
		}
	}
	return Action{Return: ret, Headers: t.headers(field+".headers", r.Headers)}, true, nil
}

// headers translates response headers with fixed values; a bad one is
// dropped with a Problem.
func (t *translator) headers(field string, in []nicv1.Header) []model.Header {
	var out []model.Header
	for i, h := range in {
		name, err := model.ParseHeaderName(h.Name)
		var value model.HeaderValue
		if err == nil {
			value, err = model.ParseHeaderValue(h.Value)
		}
		if err != nil {
			t.dropped(fmt.Sprintf("%s[%d] %q: %v; the header is not sent", field, i, model.Truncate(h.Name), err))
			continue
		}
		out = append(out, model.Header{Name: name, Value: value})
	}
	return out
}

// dropped reports a value that is not used as written (NGINX Ingress
// Controller may accept it; Causeway's grammar does not).
func (t *translator) dropped(msg string) {
	t.problems = append(t.problems, model.Problem{Object: t.ref, Reason: model.ReasonInvalid, Message: msg})
}
