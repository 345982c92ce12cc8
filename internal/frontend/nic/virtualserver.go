// Package nic is the front-end of NGINX Ingress Controller's custom
// resources (k8s.nginx.org/v1): it checks a VirtualServer and translates
// it into the model's terms. What crosses objects (the host's owner,
// Services, Secrets) is left to the builder.
//
// Every field is either translated, or reported: a field Causeway does
// not implement yet is an Unsupported Problem naming it and is left out;
// a field that needs NGINX Plus in NGINX Ingress Controller is reported
// the same way. A VirtualServer that NGINX Ingress Controller would mark
// Invalid (a bad host, duplicate upstream names, a route with no or
// several of action, splits, matches and route) is rejected as a whole.
package nic

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/certmanager"
	"github.com/causeway/causeway/internal/externaldns"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/snippet"
)

// VirtualServer is one VirtualServer in the model's terms.
type VirtualServer struct {
	Ref       model.ObjectRef
	Namespace string
	Host      string
	// TLS is nil without spec.tls.
	TLS *TLS
	// Upstreams by name.
	Upstreams map[string]*Upstream
	// Routes in the order written, which is nginx's order for regex paths.
	Routes []Route
	// Policies are spec.policies: "namespace/name" of Policies applied to
	// every route (a route's own Policy of the same kind replaces one).
	Policies []string
	// ServerSnippet is spec.server-snippets, HTTPSnippet
	// spec.http-snippets; nil when not set.
	ServerSnippet, HTTPSnippet *Snippet
	// Gunzip is spec.gunzip.
	Gunzip bool
	// ExternalDNS says that spec.externalDNS validly asks for a
	// DNSEndpoint (package externaldns writes it).
	ExternalDNS bool
	// HeaderInherit is spec.add-header-inherit.
	HeaderInherit model.HeaderInherit
	// Listener is spec.listener; nil serves the controller's ports.
	Listener *Listener
}

// TLS is spec.tls.
type TLS struct {
	// Secret is the name of a kubernetes.io/tls Secret in the namespace;
	// "" serves the default certificate.
	Secret string
	// Redirect, when set, sends plain-HTTP requests to HTTPS.
	Redirect *model.HTTPSRedirect
	// CertManager says that spec.tls.cert-manager asks cert-manager for
	// Secret's certificate, validly (package certmanager writes it).
	CertManager bool
}

// Route is one spec.routes entry that is served.
type Route struct {
	Match  model.Match
	Action Action
	// Policies are the route's own, "namespace/name"; on a delegating
	// route, those of the subroutes without their own.
	Policies []string
	// Delegate, when set, is the VirtualServerRoute "namespace/name"
	// whose subroutes serve this path; Action is then empty.
	Delegate string
	// Selector, when set, is routeSelector: every VirtualServerRoute of
	// the host whose labels it selects serves this path; Action is then
	// empty.
	Selector labels.Selector
	// ErrorPages replace the route's responses of some statuses; on a
	// delegating route, those of the subroutes without their own. Not nil
	// when errorPages is set, even to an empty list (which, as in NGINX
	// Ingress Controller, keeps a subroute from taking its route's).
	ErrorPages []model.ResponsePage
	// Choice, when set, picks the upstream per request (the route's
	// splits and matches); Action is then the one whose proxy settings
	// apply.
	Choice *Choice
	// Snippet is location-snippets; on a delegating route, that of the
	// subroutes without their own. nil when not set.
	Snippet *Snippet
	// HeaderInherit is add-header-inherit.
	HeaderInherit model.HeaderInherit
}

// Action is what a route does: exactly one of Upstream, Redirect and
// Return is set.
type Action struct {
	// Upstream is the name of the upstream requests are passed to.
	Upstream string
	Redirect *model.Redirect
	Return   *model.Return
	// Headers are added to a Return's response.
	Headers []model.Header
	// Policy, when set, is a proxy action's own settings: its
	// rewritePath, requestHeaders and responseHeaders.
	Policy *model.Policy
}

// Ref names a VirtualServer.
func Ref(vs *nicv1.VirtualServer) model.ObjectRef {
	return model.ObjectRef{Kind: "VirtualServer", Namespace: vs.Namespace, Name: vs.Name, UID: string(vs.UID)}
}

// translator collects the Problems of one VirtualServer.
type translator struct {
	ref      model.ObjectRef
	problems []model.Problem
	// defaults are the ConfigMap's proxy settings every upstream starts
	// from (model.Defaults.UpstreamProxy).
	defaults model.Policy
	// path is the route being translated (a rewritePath depends on it).
	path model.Match
	// replicas divides a scaled rateLimit (TranslatePolicy).
	replicas int
}

func (t *translator) unsupported(field, why string) {
	t.problems = append(t.problems, model.Problem{Object: t.ref, Reason: model.ReasonUnsupported,
		Message: fmt.Sprintf("%s: %s; ignored", field, why)})
}

// notYet reports a field Causeway does not implement yet.
func (t *translator) notYet(field string) { t.unsupported(field, "not supported by Causeway yet") }

// addHeaderInherit reads add-header-inherit (nginx 1.29.3's
// add_header_inherit): on, off or merge; "" is Causeway's default, which
// is merge.
func (t *translator) addHeaderInherit(field, v string) model.HeaderInherit {
	switch m := model.HeaderInherit(v); m {
	case "", model.HeaderInheritMerge, model.HeaderInheritOn, model.HeaderInheritOff:
		return m
	}
	t.dropped(fmt.Sprintf("%s %q: want on, off or merge; ignored", field, model.Truncate(v)))
	return ""
}

// plus reports a field that needs NGINX Plus in NGINX Ingress Controller.
func (t *translator) plus(field string) {
	t.unsupported(field, "needs NGINX Plus in NGINX Ingress Controller and is not supported by Causeway")
}

// TranslateVirtualServer checks a VirtualServer, whose upstreams start
// from the ConfigMap's defaults (nil for none). An error rejects it as a
// whole (NGINX Ingress Controller's Invalid); Problems report what is left
// out.
func TranslateVirtualServer(vs *nicv1.VirtualServer, defaults *model.Defaults) (*VirtualServer, []model.Problem, error) {
	t := &translator{ref: Ref(vs), defaults: defaults.UpstreamProxy()}
	out := &VirtualServer{Ref: t.ref, Namespace: vs.Namespace, Host: vs.Spec.Host, Upstreams: map[string]*Upstream{}}
	s := &vs.Spec
	if s.Host == "" {
		return nil, nil, errors.New("spec.host is required")
	}
	if err := model.ValidateHost(s.Host); err != nil {
		return nil, nil, fmt.Errorf("spec.host: %w", err)
	}
	out.ExternalDNS = t.spec(s)
	out.HeaderInherit = t.addHeaderInherit("spec.add-header-inherit", s.AddHeaderInherit)
	out.Gunzip = s.Gunzip
	out.ServerSnippet = t.readSnippet("spec.server-snippets", s.ServerSnippets, snippet.Server)
	out.HTTPSnippet = t.readSnippet("spec.http-snippets", s.HTTPSnippets, snippet.HTTP)
	out.Listener = t.listener(s.Listener)
	var err error
	if out.Policies, err = policyRefs("spec.policies", vs.Namespace, s.Policies); err != nil {
		return nil, nil, err
	}
	if s.TLS != nil {
		out.TLS = t.tls(s.TLS)
	}
	if out.Upstreams, err = t.upstreams(s.Upstreams); err != nil {
		return nil, nil, err
	}
	if out.Routes, err = t.routes("spec.routes", s.Routes, out.Upstreams); err != nil {
		return nil, nil, err
	}
	return out, t.problems, nil
}

// upstreams translates spec.upstreams; names must be unique.
func (t *translator) upstreams(in []nicv1.Upstream) (map[string]*Upstream, error) {
	out := map[string]*Upstream{}
	for i := range in {
		u, err := t.upstream(i, &in[i])
		if err != nil {
			return nil, err
		}
		if _, dup := out[u.Name]; dup {
			return nil, fmt.Errorf("spec.upstreams[%d].name %q is used by another upstream", i, u.Name)
		}
		out[u.Name] = u
	}
	return out, nil
}

// routes translates routes (or a VirtualServerRoute's subroutes, checked
// against their parent by subroutes); paths must be unique.
func (t *translator) routes(field string, in []nicv1.Route, upstreams map[string]*Upstream) ([]Route, error) {
	var out []Route
	paths := map[string]bool{}
	for i := range in {
		r, served, err := t.route(field, i, &in[i], upstreams)
		if err != nil {
			return nil, err
		}
		if paths[in[i].Path] {
			return nil, fmt.Errorf("%s[%d].path %q is used by another route", field, i, model.Truncate(in[i].Path))
		}
		paths[in[i].Path] = true
		if served {
			out = append(out, r)
		}
	}
	if err := sameModifier(field, in, t.ref.Namespace); err != nil {
		return nil, err
	}
	return out, nil
}

// VirtualServerRoute is a VirtualServerRoute's subroutes, in the model's
// terms, for the VirtualServer route that delegates to it.
type VirtualServerRoute struct {
	Ref       model.ObjectRef
	Namespace string
	Upstreams map[string]*Upstream
	Routes    []Route
}

// VSRRef names a VirtualServerRoute.
func VSRRef(vsr *nicv1.VirtualServerRoute) model.ObjectRef {
	return model.ObjectRef{Kind: "VirtualServerRoute", Namespace: vsr.Namespace, Name: vsr.Name, UID: string(vsr.UID)}
}

// TranslateVirtualServerRoute checks a VirtualServerRoute for the
// VirtualServer routes of host and paths that delegate to it (see
// subroutes; none checks it on its own), whose upstreams start from the
// ConfigMap's defaults (nil for none). An error makes it invalid for them.
func TranslateVirtualServerRoute(vsr *nicv1.VirtualServerRoute, host string, defaults *model.Defaults, parents ...model.Match) (*VirtualServerRoute, []model.Problem, error) {
	t := &translator{ref: VSRRef(vsr), defaults: defaults.UpstreamProxy()}
	if vsr.Spec.Host != host {
		return nil, nil, fmt.Errorf("spec.host %q is not the host %q of the VirtualServer that delegates to it", model.Truncate(vsr.Spec.Host), host)
	}
	out := &VirtualServerRoute{Ref: t.ref, Namespace: vsr.Namespace}
	var err error
	if out.Upstreams, err = t.upstreams(vsr.Spec.Upstreams); err != nil {
		return nil, nil, err
	}
	if out.Routes, err = t.subroutes(vsr.Spec.Subroutes, out.Upstreams, parents); err != nil {
		return nil, nil, err
	}
	return out, t.problems, nil
}

// spec reports the server-wide fields that are not translated, and
// whether spec.externalDNS validly asks for a DNSEndpoint.
func (t *translator) spec(s *nicv1.VirtualServerSpec) (externalDNS bool) {
	if s.Dos != "" {
		t.plus("spec.dos")
	}
	if s.ExternalDNS.Enable {
		if err := externaldns.Check(&s.ExternalDNS); err != nil {
			// As in NIC, the VirtualServer is served; no DNSEndpoint is
			// written.
			t.dropped(fmt.Sprintf("spec.externalDNS: %v; no DNSEndpoint is written", err))
		} else {
			externalDNS = true
		}
	}
	return externalDNS
}

func (t *translator) tls(in *nicv1.TLS) *TLS {
	out := &TLS{Secret: in.Secret}
	if in.CertManager != nil {
		switch _, err := certmanager.Parse(in.CertManager); {
		case err != nil:
			// As in NIC, the VirtualServer is served; no Certificate is
			// requested.
			t.dropped(fmt.Sprintf("spec.tls.cert-manager: %v; no Certificate is requested", err))
		case in.Secret == "":
			t.dropped("spec.tls.cert-manager needs spec.tls.secret, the Secret the Certificate issues; no Certificate is requested")
		default:
			out.CertManager = true
		}
	}
	if r := in.Redirect; r != nil && r.Enable {
		out.Redirect = t.tlsRedirect(r)
	}
	return out
}

// tlsRedirect reads spec.tls.redirect with NGINX Ingress Controller's
// defaults: 301, based on the scheme.
func (t *translator) tlsRedirect(r *nicv1.TLSRedirect) *model.HTTPSRedirect {
	out := &model.HTTPSRedirect{Code: 301, BasedOn: model.RedirectOnScheme}
	if r.Code != nil {
		if slices.Contains(model.RedirectCodes, *r.Code) {
			out.Code = *r.Code
		} else {
			t.dropped(fmt.Sprintf("spec.tls.redirect.code %d: want 301, 302, 307 or 308; 301 is used", *r.Code))
		}
	}
	switch b := model.RedirectBasis(r.BasedOn); b {
	case "", model.RedirectOnScheme:
	case model.RedirectOnForwardedProto:
		out.BasedOn = b
	default:
		t.dropped(fmt.Sprintf("spec.tls.redirect.basedOn %q: want scheme or x-forwarded-proto; scheme is used", model.Truncate(r.BasedOn)))
	}
	return out
}

// route translates one route; served is false when the route is left out
// with a Problem.
func (t *translator) route(list string, i int, r *nicv1.Route, upstreams map[string]*Upstream) (Route, bool, error) {
	field := fmt.Sprintf("%s[%d]", list, i)
	kinds := 0
	delegates := r.Route != "" || r.RouteSelector != nil
	for _, set := range []bool{r.Action != nil, len(r.Splits) > 0, r.Route != "", r.RouteSelector != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return Route{}, false, fmt.Errorf("%s (path %q) must have exactly one of action, splits, route and routeSelector", field, model.Truncate(r.Path))
	}
	if len(r.Matches) > 0 && delegates {
		return Route{}, false, fmt.Errorf("%s (path %q): matches go with an action or splits, not a route or routeSelector", field, model.Truncate(r.Path))
	}
	m, err := parseRoutePath(r.Path)
	if err != nil {
		return Route{}, false, fmt.Errorf("%s.path: %w", field, err)
	}
	t.path = m
	field += " (path " + r.Path + ")"
	if anchored(r.Path) {
		t.unsupported(field, "a regular expression is matched from the start of the path in Causeway, as if it began with ^; "+
			"NGINX Ingress Controller matches it anywhere in the path. Write ^ to say so")
	}
	if m.Type == "" {
		t.notYet(field + ": case-sensitive regular expressions (~); use ~* or a prefix; the route is left out")
		return Route{}, false, nil
	}
	if delegates {
		if r.AddHeaderInherit != "" {
			t.unsupported(field+".add-header-inherit", "the subroutes' own add-header-inherit applies to their locations")
		}
		return t.delegation(field, r, m)
	}
	inherit := t.addHeaderInherit(field+".add-header-inherit", r.AddHeaderInherit)
	if r.Dos != "" {
		t.plus(field + ".dos")
	}
	var a Action
	var choice *Choice
	var ok bool
	if len(r.Matches) > 0 || len(r.Splits) > 0 {
		a, choice, ok, err = t.choice(field, r, upstreams)
	} else {
		a, ok, err = t.action(field+".action", r.Action, upstreams)
	}
	if err != nil || !ok {
		return Route{}, false, err
	}
	policies, err := policyRefs(field+".policies", t.ref.Namespace, r.Policies)
	if err != nil {
		return Route{}, false, err
	}
	pages, err := t.errorPages(field, r.ErrorPages)
	if err != nil {
		return Route{}, false, err
	}
	return Route{Match: m, Action: a, Policies: policies, Choice: choice, ErrorPages: pages, HeaderInherit: inherit,
		Snippet: t.readSnippet(field+".location-snippets", r.LocationSnippets, snippet.Location)}, true, nil
}

// policyRefs reads Policy references: the namespace defaults to the
// VirtualServer's.
func policyRefs(field, namespace string, refs []nicv1.PolicyReference) ([]string, error) {
	var out []string
	for i, r := range refs {
		ns := r.Namespace
		if ns == "" {
			ns = namespace
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, fmt.Errorf("%s[%d].namespace %q: %s", field, i, model.Truncate(ns), strings.Join(errs, "; "))
		}
		if errs := validation.IsDNS1123Subdomain(r.Name); len(errs) > 0 {
			return nil, fmt.Errorf("%s[%d].name %q: %s", field, i, model.Truncate(r.Name), strings.Join(errs, "; "))
		}
		out = append(out, ns+"/"+r.Name)
	}
	return out, nil
}

// anchored reports whether a case-insensitive regex path lacks the "^"
// that Causeway adds: its meaning differs from NGINX Ingress Controller's
// for paths where it would match after the start.
func anchored(p string) bool {
	re, ok := strings.CutPrefix(p, "~*")
	return ok && !strings.HasPrefix(strings.TrimSpace(re), "^")
}

// parseRoutePath reads a route's path as NGINX Ingress Controller does: a
// prefix "/path" (nginx's string prefix), an exact "=/path", or a regular
// expression "~*regex" (case-insensitive) or "~regex" (case-sensitive,
// returned with an empty type: not supported yet). The model's regexes
// start with "/" and match from the start of the path: "^/..." is taken
// as written; "/..." without "^" is anchored too (see anchored).
func parseRoutePath(p string) (model.Match, error) {
	switch {
	case strings.HasPrefix(p, "~*"):
		re := strings.TrimPrefix(strings.TrimSpace(p[2:]), "^")
		if _, err := model.ParseRegex(re); err != nil {
			return model.Match{}, err
		}
		return model.Match{Type: model.Regex, Path: re}, nil
	case strings.HasPrefix(p, "~"):
		re := strings.TrimSpace(p[1:])
		if _, err := model.ParseRegex(re); err != nil {
			return model.Match{}, err
		}
		return model.Match{}, nil
	case strings.HasPrefix(p, "="):
		path := strings.TrimSpace(p[1:])
		if err := model.ValidatePath(path); err != nil {
			return model.Match{}, err
		}
		return model.Match{Type: model.Exact, Path: path}, nil
	default:
		if err := model.ValidatePath(p); err != nil {
			return model.Match{}, err
		}
		return model.Match{Type: model.StringPrefix, Path: p}, nil
	}
}
