package nic

import (
	"fmt"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// errorPages translates a route's errorPages (NGINX Ingress Controller's
// rules: codes 300 to 599, exactly one of redirect and return, a return
// with a body). A page whose URL or body Causeway's grammar refuses is
// left out, reported; so is a header.
func (t *translator) errorPages(field string, in []nicv1.ErrorPage) ([]model.ResponsePage, error) {
	var out []model.ResponsePage
	if in != nil {
		// errorPages: [] is set: a subroute with it takes none of its
		// delegating route's.
		out = []model.ResponsePage{}
	}
	for i, e := range in {
		f := fmt.Sprintf("%s.errorPages[%d]", field, i)
		if (e.Redirect == nil) == (e.Return == nil) {
			return nil, fmt.Errorf("%s must have exactly one of redirect and return", f)
		}
		if len(e.Codes) == 0 {
			return nil, fmt.Errorf("%s.codes must list at least one status", f)
		}
		for j, c := range e.Codes {
			if c < 300 || c > 599 {
				return nil, fmt.Errorf("%s.codes[%d] %d: want 300 to 599", f, j, c)
			}
		}
		p := model.ResponsePage{Codes: e.Codes}
		if e.Redirect != nil {
			r, ok, err := t.redirect(f+".redirect", &e.Redirect.ActionRedirect, model.ErrorPageRedirectVariables)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			p.Redirect = r
		} else {
			r := e.Return
			if r.Body == "" {
				return nil, fmt.Errorf("%s.return.body is required", f)
			}
			if c := r.Code; c != 0 && (c < 200 || c > 599 || c >= 300 && c < 400) {
				return nil, fmt.Errorf("%s.return.code %d: want a 2xx, 4xx or 5xx code", f, c)
			}
			body, err := model.ParseVariableTemplate(r.Body, model.ErrorPageVariables)
			if err != nil {
				t.dropped(fmt.Sprintf("%s.return.body: %v; the error page is left out", f, err))
				continue
			}
			p.Return = &model.Return{Status: r.Code, Body: body}
			if r.Type != "" {
				if p.Return.Type, err = model.ParseReturnType(r.Type); err != nil {
					t.dropped(fmt.Sprintf("%s.return.type %q: %v; the default (text/html) is used", f, model.Truncate(r.Type), err))
				}
			}
			for j, h := range r.Headers {
				if th, ok := t.templateHeaderOf(fmt.Sprintf("%s.return.headers[%d]", f, j), h, false, model.ErrorPageHeaderVariables); ok {
					p.Headers = append(p.Headers, th)
				}
			}
		}
		out = append(out, p)
	}
	return out, nil
}
