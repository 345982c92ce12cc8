package render

import (
	"fmt"

	"github.com/causeway/causeway/internal/model"
)

// planProxyHeaders prints the backend headers a location passes to the
// client or ignores, and whether the client's request headers reach the
// backend.
func planProxyHeaders(v *policyView, pol *model.Policy) error {
	v.NoRequestHeaders = pol.NoRequestHeaders
	for _, h := range pol.ProxyPassHeaders {
		if !headerName(h) {
			return fmt.Errorf("pass header %q is not a token", h)
		}
		v.PassHeaders = append(v.PassHeaders, `"`+h+`"`)
	}
	for _, h := range pol.ProxyIgnoreHeaders {
		if !model.IgnorableHeaders[h] {
			return fmt.Errorf("ignore header %q", h)
		}
		v.IgnoreHeaders = append(v.IgnoreHeaders, `"`+h+`"`)
	}
	return nil
}
