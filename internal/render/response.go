package render

import (
	"fmt"

	"github.com/causeway/causeway/internal/model"
)

// planReturn prints a fixed response: its status and, with a body, the
// body (literals through the one escaping helper, variables re-checked)
// and its type, text/plain by default as in NGINX Ingress Controller.
func planReturn(lv *locationView, r *model.Return) error {
	lv.Return = r.Status
	if r.Body == nil {
		return nil
	}
	if r.Status < 200 || r.Status > 599 || r.Status >= 300 && r.Status < 400 {
		return fmt.Errorf("return %d with a body: nginx would read the body as a URL", r.Status)
	}
	typ := r.Type
	if typ == "" {
		typ = "text/plain"
	}
	if !contentTypeToken(typ) {
		return fmt.Errorf("return type %q", typ)
	}
	var err error
	if lv.ReturnType, err = Quote(typ); err != nil {
		return err
	}
	lv.ReturnText, err = quoteTextTemplate(r.Body)
	return err
}
