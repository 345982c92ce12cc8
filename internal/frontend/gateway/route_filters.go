package gateway

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// ruleFilters is what a rule's filters translate into.
type ruleFilters struct {
	policy   routePolicy
	redirect *Redirect
	mirrors  []Mirror
	// headers are RequestHeaderModifier's edits, which the rule puts in
	// its policy or, composed with its backendRefs' own, on its targets
	// (route_backend_filters.go); hasHeaders says the filter is there.
	headers    model.RequestHeaders
	hasHeaders bool
}

// filters translates a rule's filters. matches are the rule's (a
// ReplacePrefixMatch needs exactly one PathPrefix).
func (t *routeTranslator) filters(field string, in []gwv1.HTTPRouteFilter, matches []Match) (ruleFilters, *ruleError) {
	var out ruleFilters
	if len(in) > maxFilters {
		return out, ruleUnsupported("%s: %d filters, at most %d", field, len(in), maxFilters)
	}
	seen := map[gwv1.HTTPRouteFilterType]bool{}
	for i := range in {
		f := &in[i]
		ff := fmt.Sprintf("%s[%d]", field, i)
		if seen[f.Type] && f.Type != gwv1.HTTPRouteFilterRequestMirror {
			return out, ruleUnsupported("%s: a second %s filter", ff, f.Type)
		}
		seen[f.Type] = true
		var err *ruleError
		switch f.Type {
		case gwv1.HTTPRouteFilterRequestHeaderModifier:
			if f.RequestHeaderModifier == nil {
				return out, ruleUnsupported("%s.requestHeaderModifier is required", ff)
			}
			out.headers, err = requestHeaders(ff+".requestHeaderModifier", f.RequestHeaderModifier)
			out.hasHeaders = true
		case gwv1.HTTPRouteFilterResponseHeaderModifier:
			if f.ResponseHeaderModifier == nil {
				return out, ruleUnsupported("%s.responseHeaderModifier is required", ff)
			}
			err = responseHeaders(ff+".responseHeaderModifier", f.ResponseHeaderModifier, &out.policy)
		case gwv1.HTTPRouteFilterRequestRedirect:
			if f.RequestRedirect == nil {
				return out, ruleUnsupported("%s.requestRedirect is required", ff)
			}
			out.redirect, err = requestRedirect(ff+".requestRedirect", f.RequestRedirect, matches)
		case gwv1.HTTPRouteFilterURLRewrite:
			if f.URLRewrite == nil {
				return out, ruleUnsupported("%s.urlRewrite is required", ff)
			}
			err = urlRewrite(ff+".urlRewrite", f.URLRewrite, matches, &out.policy)
		case gwv1.HTTPRouteFilterRequestMirror:
			if f.RequestMirror == nil {
				return out, ruleUnsupported("%s.requestMirror is required", ff)
			}
			var m *Mirror
			if m, err = t.requestMirror(ff+".requestMirror", f.RequestMirror); m != nil {
				out.mirrors = append(out.mirrors, *m)
				if m.Percent > 0 { // 0% copies nothing
					p := out.policy.get()
					p.Mirrors = append(p.Mirrors, m.Model())
				}
			}
		case gwv1.HTTPRouteFilterCORS:
			if f.CORS == nil {
				return out, ruleUnsupported("%s.cors is required", ff)
			}
			var c *model.CORS
			if c, err = corsFilter(ff+".cors", f.CORS); err == nil {
				out.policy.get().CORS = c
			}
		case gwv1.HTTPRouteFilterExtensionRef:
			// The spec: a filter that cannot be resolved is never
			// skipped; the rule is left out instead.
			return out, ruleUnsupported("%s: ExtensionRef filters are not supported by Causeway", ff)
		default:
			return out, ruleUnsupported("%s.type %q is not supported by Causeway", ff, model.Truncate(string(f.Type)))
		}
		if err != nil {
			return out, err
		}
	}
	if out.redirect != nil && seen[gwv1.HTTPRouteFilterURLRewrite] {
		return out, &ruleError{reason: routeReasonIncompatibleFilters, msg: field + ": RequestRedirect and URLRewrite do not go together"}
	}
	if out.redirect != nil && (!out.policy.empty() || out.hasHeaders) {
		return out, &ruleError{reason: routeReasonIncompatibleFilters, msg: field +
			": a RequestRedirect answers by itself; Causeway does not apply the rule's other filters to the redirect"}
	}
	return out, nil
}

// headerName checks a header name a filter writes: the model's grammar
// (letters, digits, "-", "_" and "."), narrower than an RFC 9110 token:
// names are printed into nginx.conf, where "$", quotes and "#" have
// meaning.
func headerName(field, name string, seen map[string]bool) (string, *ruleError) {
	n, err := model.ParseHeaderName(name)
	if err != nil {
		return "", ruleUnsupported("%s %q: %v", field, model.Truncate(name), err)
	}
	k := strings.ToLower(n)
	if seen[k] {
		return "", ruleUnsupported("%s %q: one header name may have one action only", field, model.Truncate(name))
	}
	seen[k] = true
	return n, nil
}

// headerValue checks a header value (ParseHeaderValue: no control
// characters, no "$", quotes, "\" or braces, at most 1024 bytes).
func headerValue(field, name, value string) (model.Template, *ruleError) {
	v, err := model.ParseHeaderValue(value)
	if err != nil {
		return nil, ruleUnsupported("%s %q: %v", field, model.Truncate(name), err)
	}
	if v == "" {
		return model.Template{}, nil
	}
	return model.Template{{Literal: string(v)}}, nil
}

// header checks a header a filter writes: its name (once per filter)
// and value.
func filterHeader(field string, h gwv1.HTTPHeader, seen map[string]bool) (string, model.Template, *ruleError) {
	name, err := headerName(field, string(h.Name), seen)
	if err != nil {
		return "", nil, err
	}
	v, err := headerValue(field, name, h.Value)
	return name, v, err
}

// requestHeaders checks RequestHeaderModifier: its edits, one per name,
// the sets, then the adds, then the removals, in the order written.
func requestHeaders(field string, in *gwv1.HTTPHeaderFilter) (model.RequestHeaders, *ruleError) {
	if len(in.Set) > 16 || len(in.Add) > 16 || len(in.Remove) > 16 {
		return nil, ruleUnsupported("%s: at most 16 headers each to set, add and remove", field)
	}
	var out model.RequestHeaders
	seen := map[string]bool{}
	for _, list := range []struct {
		name    string
		headers []gwv1.HTTPHeader
		action  model.HeaderAction
	}{{"set", in.Set, model.HeaderSet}, {"add", in.Add, model.HeaderAdd}} {
		for i, h := range list.headers {
			name, err := headerName(fmt.Sprintf("%s.%s[%d]", field, list.name, i), string(h.Name), seen)
			if err != nil {
				return nil, err
			}
			v, perr := model.ParseHeaderValue(h.Value)
			if perr != nil {
				return nil, ruleUnsupported("%s.%s[%d] %q: %v", field, list.name, i, model.Truncate(name), perr)
			}
			out = append(out, model.HeaderEdit{Name: name, Action: list.action, Value: v})
		}
	}
	for i, n := range in.Remove {
		name, err := headerName(fmt.Sprintf("%s.remove[%d]", field, i), n, seen)
		if err != nil {
			return nil, err
		}
		out = append(out, model.HeaderEdit{Name: name, Action: model.HeaderRemove})
	}
	return out, nil
}

// responseHeaders translates ResponseHeaderModifier: set hides the
// backend's header and adds the value; add adds the value beside the
// backend's (a header line of its own, which RFC 9110 reads as the
// comma-joined list); remove hides the backend's header. Added headers go
// out on every status (add_header ... always).
func responseHeaders(field string, in *gwv1.HTTPHeaderFilter, pol *routePolicy) *ruleError {
	if len(in.Set) > 16 || len(in.Add) > 16 || len(in.Remove) > 16 {
		return ruleUnsupported("%s: at most 16 headers each to set, add and remove", field)
	}
	var sn model.Snippet
	seen := map[string]bool{}
	for _, list := range []struct {
		name    string
		headers []gwv1.HTTPHeader
		hide    bool
	}{{"set", in.Set, true}, {"add", in.Add, false}} {
		for i, h := range list.headers {
			name, v, err := filterHeader(fmt.Sprintf("%s.%s[%d]", field, list.name, i), h, seen)
			if err != nil {
				return err
			}
			if list.hide {
				sn.ProxyHideHeaders = append(sn.ProxyHideHeaders, name)
			}
			sn.AddHeaders = append(sn.AddHeaders, model.TemplateHeader{Name: name, Value: v, Always: true})
		}
	}
	for i, n := range in.Remove {
		name, err := headerName(fmt.Sprintf("%s.remove[%d]", field, i), n, seen)
		if err != nil {
			return err
		}
		sn.ProxyHideHeaders = append(sn.ProxyHideHeaders, name)
	}
	joinSnippet(pol, &sn)
	return nil
}

func joinSnippet(pol *routePolicy, sn *model.Snippet) {
	p := pol.get()
	p.Snippet = model.Join(p.Snippet, sn)
}

// Redirect is RequestRedirect: the redirect URL's parts, which Model
// completes with what the listener knows.
type Redirect struct {
	// Scheme is "http", "https" or "" (the request's).
	Scheme string
	// Hostname is a DNS name, or "" (the request's host).
	Hostname string
	// Port is 1 to 65535, or 0 (see Model).
	Port int
	// FullPath, when set, replaces the path; otherwise the path is the
	// request's. The request's query is kept either way.
	FullPath string
	// PrefixWith, when ReplacePrefix, replaces the PathPrefix the request
	// matched ("/" removes it).
	PrefixWith    string
	ReplacePrefix bool
	// Code is 301, 302, 303, 307 or 308.
	Code int
}

// redirectCodes are RequestRedirect's status codes.
var redirectCodes = []int{301, 302, 303, 307, 308}

func requestRedirect(field string, in *gwv1.HTTPRequestRedirectFilter, matches []Match) (*Redirect, *ruleError) {
	out := &Redirect{Code: 302}
	if in.StatusCode != nil {
		out.Code = *in.StatusCode
		if !slices.Contains(redirectCodes, out.Code) {
			return nil, ruleUnsupported("%s.statusCode %d: want 301, 302, 303, 307 or 308", field, out.Code)
		}
	}
	if in.Scheme != nil {
		switch s := *in.Scheme; s {
		case "http", "https":
			out.Scheme = s
		default:
			return nil, ruleUnsupported("%s.scheme %q: want http or https", field, model.Truncate(s))
		}
	}
	if in.Hostname != nil {
		h := string(*in.Hostname)
		if err := model.ValidateHost(h); err != nil || strings.HasPrefix(h, "*") {
			return nil, ruleUnsupported("%s.hostname %q: want a DNS name", field, model.Truncate(h))
		}
		out.Hostname = h
	}
	if in.Port != nil {
		out.Port = int(*in.Port)
		if out.Port < 1 || out.Port > 65535 {
			return nil, ruleUnsupported("%s.port %d: want 1 to 65535", field, out.Port)
		}
	}
	if p := in.Path; p != nil {
		switch p.Type {
		case gwv1.FullPathHTTPPathModifier:
			if p.ReplaceFullPath == nil {
				return nil, ruleUnsupported("%s.path.replaceFullPath is required", field)
			}
			if err := model.ValidatePath(*p.ReplaceFullPath); err != nil {
				return nil, ruleUnsupported("%s.path.replaceFullPath: %v", field, err)
			}
			out.FullPath = *p.ReplaceFullPath
		case gwv1.PrefixMatchHTTPPathModifier:
			if p.ReplacePrefixMatch == nil {
				return nil, ruleUnsupported("%s.path.replacePrefixMatch is required", field)
			}
			// Each match's own prefix is replaced, so several PathPrefix
			// matches are fine; any other path type has no prefix.
			for _, m := range matches {
				if m.Path.Type != model.Prefix {
					return nil, &ruleError{reason: routeReasonUnsupportedValue,
						msg: field + ".path: ReplacePrefixMatch needs PathPrefix matches"}
				}
			}
			if err := model.ValidatePath(*p.ReplacePrefixMatch); err != nil {
				return nil, ruleUnsupported("%s.path.replacePrefixMatch: %v", field, err)
			}
			out.PrefixWith, out.ReplacePrefix = *p.ReplacePrefixMatch, true
		default:
			return nil, ruleUnsupported("%s.path.type %q: want ReplaceFullPath or ReplacePrefixMatch", field, model.Truncate(string(p.Type)))
		}
	}
	return out, nil
}

// Model is the redirect as the model's, for a listener on port of the
// given scheme: the port is the one set, else the scheme's well-known
// port when the scheme is set, else the listener's; it is left out of the
// URL when it is the well-known port of the URL's scheme. match is the
// path the request matched, whose prefix ReplacePrefix replaces.
func (r *Redirect) Model(listenerPort int, listenerHTTPS bool, match model.Match) *model.Redirect {
	var t model.Template
	https := listenerHTTPS
	if r.Scheme != "" {
		t = append(t, model.TemplatePart{Literal: r.Scheme + "://"})
		https = r.Scheme == "https"
	} else {
		t = append(t, model.TemplatePart{Variable: "scheme"}, model.TemplatePart{Literal: "://"})
	}
	if r.Hostname != "" {
		t = append(t, model.TemplatePart{Literal: r.Hostname})
	} else {
		t = append(t, model.TemplatePart{Variable: "host"})
	}
	port := r.Port
	if port == 0 {
		switch {
		case r.Scheme == "https":
			port = 443
		case r.Scheme == "http":
			port = 80
		default:
			port = listenerPort
		}
	}
	if !(https && port == 443 || !https && port == 80) {
		t = append(t, model.TemplatePart{Literal: ":" + strconv.Itoa(port)})
	}
	switch {
	case r.ReplacePrefix:
		return &model.Redirect{Code: r.Code, Template: t, Prefix: &model.RedirectPrefix{Path: match.Path, With: r.PrefixWith}}
	case r.FullPath != "":
		t = append(t, model.TemplatePart{Literal: r.FullPath}, model.TemplatePart{Variable: "is_args"}, model.TemplatePart{Variable: "args"})
	default:
		t = append(t, model.TemplatePart{Variable: "request_uri"})
	}
	return &model.Redirect{Code: r.Code, Template: t}
}

// urlRewrite translates URLRewrite: hostname replaces the Host header
// sent upstream; ReplaceFullPath replaces the path (the query is kept);
// ReplacePrefixMatch replaces the matched prefix, keeping the rest of
// the path (model.Rewrite's Prefix).
func urlRewrite(field string, in *gwv1.HTTPURLRewriteFilter, matches []Match, pol *routePolicy) *ruleError {
	if in.Hostname != nil {
		h := string(*in.Hostname)
		if err := model.ValidateHost(h); err != nil || strings.HasPrefix(h, "*") {
			return ruleUnsupported("%s.hostname %q: want a DNS name", field, model.Truncate(h))
		}
		v := model.HeaderValue(h)
		pol.get().UpstreamHost = &v
	}
	p := in.Path
	if p == nil {
		return nil
	}
	switch p.Type {
	case gwv1.FullPathHTTPPathModifier:
		if p.ReplaceFullPath == nil {
			return ruleUnsupported("%s.path.replaceFullPath is required", field)
		}
		if err := model.ValidatePath(*p.ReplaceFullPath); err != nil {
			return ruleUnsupported("%s.path.replaceFullPath: %v", field, err)
		}
		pol.get().Rewrite = &model.Rewrite{Target: *p.ReplaceFullPath}
	case gwv1.PrefixMatchHTTPPathModifier:
		if p.ReplacePrefixMatch == nil {
			return ruleUnsupported("%s.path.replacePrefixMatch is required", field)
		}
		if len(matches) != 1 || matches[0].Path.Type != model.Prefix {
			return &ruleError{reason: routeReasonUnsupportedValue, msg: field + ".path: ReplacePrefixMatch needs exactly one PathPrefix match"}
		}
		r := strings.TrimSuffix(*p.ReplacePrefixMatch, "/")
		if err := model.ValidatePath(r + "/"); err != nil {
			return ruleUnsupported("%s.path.replacePrefixMatch: %v", field, err)
		}
		if matches[0].Path.Path == "/" {
			// The model's prefix rewrite appends the rest of the path
			// after the location's prefix, which after the root prefix
			// lacks its "/": the target gives it back ("/bar" becomes
			// "/xyz/bar", "/" becomes "/xyz/", as "/foo/" does with
			// the prefix "/foo"; "/" or "" leaves the path as it is).
			pol.get().Rewrite = &model.Rewrite{Target: r + "/", Prefix: true}
			return nil
		}
		if r == "" {
			pol.get().Rewrite = &model.Rewrite{Target: "/", Prefix: true, Strip: true}
			return nil
		}
		if err := model.ValidatePath(r); err != nil {
			return ruleUnsupported("%s.path.replacePrefixMatch: %v", field, err)
		}
		pol.get().Rewrite = &model.Rewrite{Target: r, Prefix: true}
	default:
		return ruleUnsupported("%s.path.type %q: want ReplaceFullPath or ReplacePrefixMatch", field, model.Truncate(string(p.Type)))
	}
	return nil
}

// requestMirror translates one RequestMirror. A backend that cannot be
// used drops the mirror only (the spec), with its ResolvedRefs Problem.
func (t *routeTranslator) requestMirror(field string, in *gwv1.HTTPRequestMirrorFilter) (*Mirror, *ruleError) {
	percent := 100
	switch {
	case in.Percent != nil && in.Fraction != nil:
		return nil, ruleUnsupported("%s: percent and fraction do not go together", field)
	case in.Percent != nil:
		percent = int(*in.Percent)
	case in.Fraction != nil:
		den := int32(100)
		if in.Fraction.Denominator != nil {
			den = *in.Fraction.Denominator
		}
		num := in.Fraction.Numerator
		if den < 1 || num < 0 || num > den || (num*100)%den != 0 {
			return nil, ruleUnsupported("%s.fraction %d/%d: want a whole percentage", field, num, den)
		}
		percent = int(num * 100 / den)
	}
	if percent < 0 || percent > 100 {
		return nil, ruleUnsupported("%s.percent %d: want 0 to 100", field, percent)
	}
	b, ok := t.backend(field+".backendRef", in.BackendRef)
	if !ok {
		// The Problem backend added speaks of a backendRef's share.
		last := &t.problems[len(t.problems)-1]
		last.Message = strings.TrimSuffix(last.Message, "; its share answers 500") + "; the mirror is left out (requests are not copied there)"
		return nil, nil
	}
	if t.env.BackendTLS != nil {
		if p := t.env.BackendTLS(b); p != nil {
			// Copies go out in cleartext: a Service that asks for TLS
			// gets none rather than the requests unencrypted.
			t.problems = append(t.problems, model.Problem{Object: t.ref, Reason: model.ReasonUnsupported,
				Message: fmt.Sprintf("%s.backendRef: Service %s/%s port %d is to be spoken to with TLS as %s says, and mirrors speak cleartext; "+
					"the mirror is left out (requests are not copied there)", field, b.Namespace, b.Service, b.Port, p.Ref)})
			return nil, nil
		}
	}
	return &Mirror{Backend: b, Percent: percent}, nil
}

// Model is the model's mirror: the backend by key, the body too.
func (m Mirror) Model() model.Mirror {
	return model.Mirror{Backend: m.Backend.Key(), RequestBody: true, Percent: m.Percent}
}

// Bounds of a CORS filter, as the API's.
const (
	maxCORSItems = 64
	// maxCORSMaxAge is a day: browsers cap it lower anyway.
	maxCORSMaxAge = 365 * 24 * 3600 // as the cors-max-age annotation
)

// cors translates the CORS filter into the model's CORS policy.
func corsFilter(field string, in *gwv1.HTTPCORSFilter) (*model.CORS, *ruleError) {
	out := &model.CORS{Credentials: in.AllowCredentials != nil && *in.AllowCredentials}
	if len(in.AllowOrigins) > maxCORSItems || len(in.AllowMethods) > maxCORSItems ||
		len(in.AllowHeaders) > maxCORSItems || len(in.ExposeHeaders) > maxCORSItems {
		return nil, ruleUnsupported("%s: at most %d origins, methods and headers each", field, maxCORSItems)
	}
	for i, o := range in.AllowOrigins {
		if o == "*" {
			out.AllowAnyOrigin = true
			continue
		}
		v, err := model.ParseCORSOrigin(string(o))
		if err != nil {
			return nil, ruleUnsupported("%s.allowOrigins[%d]: %v", field, i, err)
		}
		out.Origins = append(out.Origins, v)
	}
	if out.AllowAnyOrigin {
		out.Origins = nil
	}
	// Gateway API's wildcard origins match any number of labels, and a
	// preflight from an origin not allowed never reaches the backend
	// (where ingress-nginx's match one label and pass such preflights
	// on; the flags are set only where they change something).
	out.AnyDepth = slices.ContainsFunc(out.Origins, func(o string) bool { return strings.Contains(o, "://*.") })
	out.AnswerPreflights = len(out.Origins) > 0
	for i, m := range in.AllowMethods {
		if m == "*" {
			// Any method: "*", or with credentials the one asked.
			out.Methods = []string{"*"}
			break
		}
		if !httpMethods[string(m)] {
			return nil, ruleUnsupported("%s.allowMethods[%d] %q: not an HTTP method", field, i, model.Truncate(string(m)))
		}
		out.Methods = append(out.Methods, string(m))
	}
	var err *ruleError
	if out.Headers, err = corsHeaders(field+".allowHeaders", in.AllowHeaders); err != nil {
		return nil, err
	}
	if out.ExposeHeaders, err = corsHeaders(field+".exposeHeaders", in.ExposeHeaders); err != nil {
		return nil, err
	}
	age := int(in.MaxAge)
	if age == 0 {
		age = 5 // the API's default
	}
	if age < 1 || age > maxCORSMaxAge {
		return nil, ruleUnsupported("%s.maxAge %d: want 1 to %d seconds", field, age, maxCORSMaxAge)
	}
	out.MaxAge = time.Duration(age) * time.Second
	if out.Credentials {
		// Browsers refuse "*" with credentials: the spec wants the
		// request's own origin, method and headers echoed instead.
		out.Echo = out.AllowAnyOrigin || slices.Contains(out.Methods, "*") || slices.Contains(out.Headers, "*")
		if slices.Contains(out.ExposeHeaders, "*") {
			// The response's header names cannot be echoed before the
			// backend answers.
			return nil, ruleUnsupported("%s: exposeHeaders * with allowCredentials is not supported by Causeway", field)
		}
	}
	return out, nil
}

// corsHeaders checks a list of header names, or "*" alone.
func corsHeaders(field string, names []gwv1.HTTPHeaderName) ([]string, *ruleError) {
	var out []string
	for i, n := range names {
		if n == "*" {
			if len(names) > 1 {
				return nil, ruleUnsupported("%s: * stands alone", field)
			}
			return []string{"*"}, nil
		}
		if _, err := model.ParseHeaderName(string(n)); err != nil {
			return nil, ruleUnsupported("%s[%d]: %v", field, i, err)
		}
		out = append(out, string(n))
	}
	return out, nil
}
