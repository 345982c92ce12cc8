package render

import (
	"errors"
	"fmt"

	"github.com/causeway/causeway/internal/model"
)

// A host's own Strict-Transport-Security (a VirtualServer's hsts Policy,
// model.ServerHSTS) replaces the ConfigMap's for that server: the server
// sets the http level's $causeway_hsts itself in its rewrite phase, empty
// unless the request came over TLS (or, behind a proxy, said
// X-Forwarded-Proto: https). Every place that repeats the http level's
// Strict-Transport-Security line (listener.go, hstsHeader) then sends the
// server's value. With the ConfigMap's HSTS off, the http level keeps the
// line, with an empty value, for such servers, and such a server hides the
// backend's own header itself (serverView.HiddenHeaders).

// hstsView is a server's Strict-Transport-Security: Value is the quoted
// header value; BehindProxy tests X-Forwarded-Proto instead of $https.
type hstsView struct {
	Value       string
	BehindProxy bool `json:",omitempty"`
}

// hstsOverridden reports whether some server has HSTS of its own.
func hstsOverridden(m *model.Model) bool {
	for _, s := range m.Servers {
		if s.Policy != nil && s.Policy.HSTS != nil {
			return true
		}
	}
	return false
}

// planServerHSTS prints srv's own HSTS into v.
func planServerHSTS(v *serverView, srv *model.Server, c model.Config) error {
	if srv.Policy == nil || srv.Policy.HSTS == nil {
		return nil
	}
	h := srv.Policy.HSTS
	if setsHeader(c.AddHeaders, "Strict-Transport-Security") {
		return errors.New("a host's HSTS cannot replace add-headers' Strict-Transport-Security")
	}
	if h.MaxAge < 0 {
		return fmt.Errorf("negative HSTS max-age %d", h.MaxAge)
	}
	value := ""
	if h.Enabled {
		value = h.Value()
	}
	q, err := Quote(value)
	if err != nil {
		return err
	}
	v.HSTS = &hstsView{Value: q, BehindProxy: h.BehindProxy}
	return nil
}
