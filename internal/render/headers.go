package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
)

// The http-level headers between clients and backends (ConfigMap:
// hide-headers, add-headers, proxy-set-headers,
// allow-backend-server-header) and the listeners' DH parameters
// (ssl-dh-param). nginx inherits add_header and *_set_header only into
// levels that set none of their own, so locations that do repeat these
// (policy.go, inheritedHeaders; templates/server.conf.tmpl, "headers").

// headerLines prints validated headers as quoted name and value pairs.
func headerLines(hs []model.Header) ([]headerLine, error) {
	var out []headerLine
	for _, h := range hs {
		if !headerName(h.Name) {
			return nil, fmt.Errorf("header name %q is not a token", h.Name)
		}
		q, err := Quote(string(h.Value))
		if err != nil {
			return nil, err
		}
		out = append(out, headerLine{Name: `"` + h.Name + `"`, Value: q})
	}
	return out, nil
}

// planHeaders fills the header and DH parameter fields of v.
func (v *mainView) planHeaders(m *model.Model) error {
	c := &v.Config
	var err error
	if v.AddHeaderLines, err = headerLines(c.AddHeaders); err != nil {
		return fmt.Errorf("add-headers: %w", err)
	}
	if v.ProxySetHeaderLines, err = headerLines(c.ProxySetHeaders); err != nil {
		return fmt.Errorf("proxy-set-headers: %w", err)
	}
	if v.HiddenHeaders, err = quoteHidden(hiddenHeaders(c, c.HSTS.Enabled)); err != nil {
		return err
	}
	// As in ingress-nginx, the backend's Server header shows only with
	// server-tokens on as well.
	v.PassServerHeader = c.AllowBackendServerHeader && c.ServerTokens
	if d := m.DHParam; d != nil {
		if v.DHParamFile, err = Quote(v.dir.Path(layout.DHParamFile(d.Namespace, d.Name))); err != nil {
			return fmt.Errorf("ssl-dh-param: %w", err)
		}
	}
	for i, k := range m.TicketKeys {
		if len(k) != 48 && len(k) != 80 {
			return fmt.Errorf("session ticket key %d: %d bytes, want 48 or 80", i, len(k))
		}
		f, err := Quote(v.dir.Path(layout.TicketKeyFile(i)))
		if err != nil {
			return fmt.Errorf("session ticket key: %w", err)
		}
		v.TicketKeyFiles = append(v.TicketKeyFiles, f)
	}
	return nil
}

// hiddenHeaders are the backend headers the http level hides: hide-headers'
// and those add-headers sets, so the client sees one value, as with
// ingress-nginx's more_set_headers; and with sts (HSTS on, for every host
// or a server's own) Strict-Transport-Security. A server or location that
// hides headers of its own repeats them (snippet.go).
func hiddenHeaders(c *model.Config, sts bool) []string {
	hidden := append([]string(nil), c.HideHeaders...)
	for _, h := range c.AddHeaders {
		hidden = append(hidden, h.Name)
	}
	// With HSTS on, the backend's own Strict-Transport-Security is
	// replaced, not repeated (ingress-nginx sets it with more_set_headers,
	// NGINX Ingress Controller hides the backend's).
	const name = "Strict-Transport-Security"
	if sts && !slices.ContainsFunc(hidden, func(n string) bool { return strings.EqualFold(n, name) }) {
		hidden = append(hidden, name)
	}
	return hidden
}

// quoteHidden prints hidden header names, once each.
func quoteHidden(names []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if !headerName(n) {
			return nil, fmt.Errorf("hidden header name %q is not a token", n)
		}
		if k := strings.ToLower(n); !seen[k] {
			seen[k] = true
			out = append(out, `"`+n+`"`)
		}
	}
	return out, nil
}

// inheritedHeaders are the http level's response headers that a location
// adding headers of its own (own) must repeat: add-headers' (but those it
// sets itself) and Strict-Transport-Security.
func (rc *renderCtx) inheritedHeaders(own []model.Header) []headerLine {
	var out []headerLine
	for i, h := range rc.m.Config.AddHeaders {
		if !setsHeader(own, h.Name) {
			out = append(out, rc.addHeaders[i])
		}
	}
	if h, ok := hstsHeader(rc.m.Config, rc.hstsOverridden, slices.Concat(own, rc.m.Config.AddHeaders)); ok {
		out = append(out, h)
	}
	return out
}

func setsHeader(hs []model.Header, name string) bool {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}
