package equivalence

import (
	"fmt"
	"net/http"
	"net/netip"
	"reflect"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// fieldDiff is one field that differs: its path below the compared value
// ("CORS.Credentials") and each side's value, in words.
type fieldDiff struct {
	path, a, b string
}

// diffFields compares two values of one type field by field (exported
// fields, pointers followed, a nil pointer read as unset) and returns the
// leaves that differ.
func diffFields(a, b any) []fieldDiff {
	var out []fieldDiff
	walk("", reflect.ValueOf(a), reflect.ValueOf(b), &out)
	return out
}

func walk(path string, a, b reflect.Value, out *[]fieldDiff) {
	switch a.Kind() {
	case reflect.Pointer:
		switch {
		case a.IsNil() && b.IsNil():
		case a.IsNil() || b.IsNil():
			*out = append(*out, fieldDiff{path, show(a), show(b)})
		default:
			walk(path, a.Elem(), b.Elem(), out)
		}
	case reflect.Struct:
		t := a.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			walk(strings.TrimPrefix(path+"."+f.Name, "."), a.Field(i), b.Field(i), out)
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			*out = append(*out, fieldDiff{path, show(a), show(b)})
		}
	}
}

// show prints a value for a report: unset for a nil pointer or an empty
// slice, the value otherwise (durations as durations).
func show(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "unset"
		}
		return show(v.Elem())
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			return "unset"
		}
	}
	return fmt.Sprintf("%+v", v.Interface())
}

// grouped folds the leaves by their first path element, the aspect
// prefix's field: "CORS.Credentials" and "CORS.Origins" become one
// "CORS" difference with both leaves on each side.
func grouped(prefix string, diffs []fieldDiff, add func(aspect, a, b string)) {
	var order []string
	as, bs := map[string][]string{}, map[string][]string{}
	for _, d := range diffs {
		top, rest, _ := strings.Cut(d.path, ".")
		if _, ok := as[top]; !ok {
			order = append(order, top)
		}
		if rest == "" {
			as[top], bs[top] = append(as[top], d.a), append(bs[top], d.b)
			continue
		}
		as[top] = append(as[top], rest+"="+d.a)
		bs[top] = append(bs[top], rest+"="+d.b)
	}
	for _, top := range order {
		add(prefix+top, strings.Join(as[top], " "), strings.Join(bs[top], " "))
	}
}

// view is what a request sees of the location that proxies it, with the
// settings one front-end writes in one field and another in another read
// alike: the URI the backend receives (after any rewrite), the request
// headers set for it (the ConfigMap's, x-forwarded-prefix, upstream-vhost's
// Host, a filter's), the response headers added, and the rest of the
// policy with those fields cleared.
type view struct {
	// Rewrite is the URI the backend receives.
	Rewrite         string
	RequestHeaders  map[string]string
	ResponseHeaders map[string]string
}

func viewOf(m *model.Model, srv *model.Server, loc *model.Location, r request) (view, model.Policy) {
	v := view{Rewrite: loc.Rewritten(srv.Regex, r.path, ""), RequestHeaders: map[string]string{}, ResponseHeaders: map[string]string{}}
	var pol model.Policy
	if loc.Policy != nil {
		pol = *loc.Policy
	}
	p := &pol
	for _, h := range m.Config.ProxySetHeaders {
		v.RequestHeaders[http.CanonicalHeaderKey(h.Name)] = string(h.Value)
	}
	for _, h := range m.Config.AddHeaders {
		v.ResponseHeaders[http.CanonicalHeaderKey(h.Name)] = string(h.Value)
	}
	if p.XForwardedPrefix != nil && p.Rewrite != nil {
		v.RequestHeaders["X-Forwarded-Prefix"] = string(*p.XForwardedPrefix)
	}
	if p.UpstreamHost != nil {
		v.RequestHeaders["Host"] = string(*p.UpstreamHost)
	}
	for _, h := range p.ResponseHeaders {
		v.ResponseHeaders[http.CanonicalHeaderKey(h.Name)] = string(h.Value)
	}
	if sn := p.Snippet; sn != nil {
		for _, h := range sn.ProxySetHeaders {
			v.RequestHeaders[http.CanonicalHeaderKey(h.Name)] = h.Value.String()
		}
		for _, h := range sn.AddHeaders {
			v.ResponseHeaders[http.CanonicalHeaderKey(h.Name)] = h.Value.String()
		}
		rest := *sn
		rest.ProxySetHeaders, rest.AddHeaders, rest.ProxyHideHeaders = nil, nil, nil
		p.Snippet = &rest
		if reflect.ValueOf(rest).IsZero() {
			p.Snippet = nil
		}
	}
	p.Rewrite, p.XForwardedPrefix, p.UpstreamHost, p.ResponseHeaders = nil, nil, nil, nil
	if a := p.Access; a != nil && len(a.Deny) == 0 && refusesNoOne(a.Allow) {
		p.Access = nil
	}
	if p.Protocol == "" {
		p.Protocol = model.ProtocolHTTP
	}
	return v, pol
}

// serverSide is what of a server a request sees beyond its locations
// and its redirects (app-root, HTTPS), which answer compares.
type serverSide struct {
	Policy    model.ServerPolicy
	ClientTLS *model.ClientTLS
	TLS       *model.ServerTLS
}

// backendSide is what of a backend a request sees beyond its endpoints.
type backendSide struct {
	Balance   model.Balance
	Limits    model.PeerLimits
	Keepalive model.Keepalive
	External  *model.ExternalName
}

func serverOf(srv *model.Server, scheme string) serverSide {
	s := serverSide{ClientTLS: srv.ClientTLS}
	if srv.Policy != nil {
		s.Policy = *srv.Policy
		s.Policy.AppRoot, s.Policy.ForceSSLRedirect, s.Policy.PreserveTrailingSlash = "", false, false
		s.Policy.Source = model.ObjectRef{}
	}
	if scheme == "https" {
		s.TLS = srv.TLS
	}
	return s
}

func backendOf(b *model.Backend) backendSide {
	if b == nil {
		return backendSide{}
	}
	return backendSide{Balance: b.Balance, Limits: b.Limits, Keepalive: b.Keepalive, External: b.External}
}

// refusesNoOne reports whether an allow list admits every address, IPv4
// and IPv6 (cert-manager's HTTP-01 solver writes 0.0.0.0/0 and ::/0).
func refusesNoOne(allow []netip.Prefix) bool {
	v4, v6 := false, false
	for _, p := range allow {
		v4 = v4 || p.Bits() == 0 && p.Addr().Is4()
		v6 = v6 || p.Bits() == 0 && p.Addr().Is6()
	}
	return v4 && v6
}
