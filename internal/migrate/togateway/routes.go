package togateway

import (
	"cmp"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/model"
)

// routeKey names the route of an Ingress's host; defaultBackend marks
// the route of spec.defaultBackend.
type routeKey struct {
	namespace, ingress, host string
	defaultBackend           bool
}

// route is one HTTPRoute or GRPCRoute being written.
type route struct {
	w    *ingressWork
	http *gwv1.HTTPRoute
	grpc *gwv1.GRPCRoute
	// redirect asks for the ssl-redirect twin on the HTTP listener.
	redirect bool
	appRoot  bool
}

// pathKey is a host and a path as written: what a canary names.
type pathKey struct{ host, path string }

// ruleRef is one rule of an HTTPRoute.
type ruleRef struct {
	r *route
	i int
}

// The listener names. A host's HTTPS listener is httpsListener(host).
const httpListener = "http"

func httpsListener(host string) string {
	return "https-" + strings.ReplaceAll(host, "*", "wildcard")
}

// routesOf writes the routes of a main (not canary) Ingress.
func (c *converter) routesOf(w *ingressWork) {
	p := c.policy(w)
	for i, r := range w.tr.Rules {
		if !r.HTTP {
			w.find(ruleNoHTTP, fmt.Sprintf("spec.rules[%d]", i), r.Host, "")
			continue
		}
		rt := c.route(w, r.Host, false, p)
		if r.Host == "" {
			w.find(ruleHostless, fmt.Sprintf("spec.rules[%d].host", i), "", "")
		}
		for j, path := range r.Paths {
			c.addPath(w, rt, p, r.Host, fmt.Sprintf("spec.rules[%d].http.paths[%d]", i, j), path,
				w.ing.Spec.Rules[i].HTTP.Paths[j].PathType)
		}
		if p.appRoot != "" && !rt.appRoot && rt.http != nil {
			rt.appRoot = true
			rt.http.Spec.Rules = append(rt.http.Spec.Rules, gwv1.HTTPRouteRule{
				Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: ptr(gwv1.PathMatchExact), Value: ptr("/")}}},
				Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{
					Path:       &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr(p.appRoot)},
					StatusCode: ptr(302),
				}}},
			})
		}
	}
	if d := w.ing.Spec.DefaultBackend; d != nil {
		rt := c.route(w, "", true, p)
		w.find(ruleDefaultBackend, "spec.defaultBackend", "", "")
		c.addPath(w, rt, p, "", "spec.defaultBackend", ingress.Path{Backend: d}, nil)
	}
}

// route returns the route of an Ingress's host, made on first use.
func (c *converter) route(w *ingressWork, host string, defaultBackend bool, p *policy) *route {
	k := routeKey{w.ing.Namespace, w.ing.Name, host, defaultBackend}
	if rt := c.routes[k]; rt != nil {
		return rt
	}
	suffix := strings.ReplaceAll(host, "*", "wildcard")
	switch {
	case defaultBackend:
		suffix = "default-backend"
	case host == "":
		suffix = "any-host"
	}
	meta := metav1.ObjectMeta{Namespace: w.ing.Namespace, Name: c.routeName(w.ing.Namespace, w.ing.Name, suffix)}
	var hostnames []gwv1.Hostname
	if host != "" {
		hostnames = []gwv1.Hostname{gwv1.Hostname(host)}
	}

	// Where it attaches: a host with TLS to its HTTPS listener, and to the
	// HTTP one unless ssl-redirect sends HTTP to a redirecting twin.
	rt := &route{w: w}
	listeners := []string{httpListener}
	if tl := c.tlsListener(host); tl != "" && !defaultBackend {
		listeners = []string{tl}
		if tl != httpsListener(host) {
			w.find(ruleTLSWildcardHost, "spec.tls", host, "host "+host+" attaches to listener "+tl)
		}
		c.hostWide(w, host)
		input, r := c.key("ssl-redirect"), ruleSSLRedirect
		if p.forceSSL {
			input, r = c.key("force-ssl-redirect"), ruleForceSSLRedirect
		}
		if _, set := w.ing.Annotations[input]; !set {
			input = "spec.tls"
		}
		switch {
		case p.forceSSL || p.sslRedirect:
			if p.grpc {
				w.find(r, input, w.ing.Annotations[input], "host "+host+": a GRPCRoute cannot redirect; it attaches to the HTTPS listener only")
			} else {
				rt.redirect = true
				w.find(r, input, w.ing.Annotations[input], "host "+host+": HTTP answered by "+meta.Name+"-redirect")
				c.trailingSlash(w, host)
			}
			if p.forceSSL {
				w.findKey(c, ruleSSLRedirect, "ssl-redirect", "host "+host+": force-ssl-redirect decides")
			}
		default:
			listeners = append(listeners, httpListener)
			w.find(r, input, w.ing.Annotations[input], "host "+host+": ssl-redirect is off, the route attaches to HTTP and HTTPS")
		}
	} else if !defaultBackend {
		if p.forceSSL {
			w.findKey(c, ruleForceSSLNoTLS, "force-ssl-redirect", "host "+cmp.Or(host, "(any)"))
		}
		w.findKey(c, ruleNoEffect, "ssl-redirect", "host "+cmp.Or(host, "(any)")+" has no TLS")
	}
	var parents []gwv1.ParentReference
	for _, l := range listeners {
		parents = append(parents, c.parentRef(w.ing.Namespace, l))
	}
	spec := gwv1.CommonRouteSpec{ParentRefs: parents}
	if p.grpc {
		rt.grpc = &gwv1.GRPCRoute{TypeMeta: metav1.TypeMeta{APIVersion: gwv1.GroupVersion.String(), Kind: "GRPCRoute"}, ObjectMeta: meta,
			Spec: gwv1.GRPCRouteSpec{CommonRouteSpec: spec, Hostnames: hostnames}}
	} else {
		rt.http = &gwv1.HTTPRoute{TypeMeta: metav1.TypeMeta{APIVersion: gwv1.GroupVersion.String(), Kind: "HTTPRoute"}, ObjectMeta: meta,
			Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: spec, Hostnames: hostnames}}
	}
	c.routes[k] = rt
	return rt
}

// parentRef names a listener of the Gateway from a route in namespace.
func (c *converter) parentRef(namespace, listener string) gwv1.ParentReference {
	ref := gwv1.ParentReference{Name: gwv1.ObjectName(c.opts.GatewayName), SectionName: ptr(gwv1.SectionName(listener))}
	if namespace != c.opts.GatewayNamespace {
		ref.Namespace = ptr(gwv1.Namespace(c.opts.GatewayNamespace))
	}
	return ref
}

// backendRef is the backendRef of an Ingress backend; ok is false (and
// the finding written) when it has none.
func backendRef(w *ingressWork, field string, b *networkingv1.IngressBackend) (gwv1.BackendRef, bool) {
	// Translate refused resource backends.
	if b.Service.Port.Name != "" {
		w.find(ruleNamedPort, field, b.Service.Name+":"+b.Service.Port.Name, "the path is not converted")
		return gwv1.BackendRef{}, false
	}
	return gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{
		Name: gwv1.ObjectName(b.Service.Name), Port: ptr(gwv1.PortNumber(b.Service.Port.Number)),
	}}, true
}

// addPath writes the rule of one path.
func (c *converter) addPath(w *ingressWork, rt *route, p *policy, host, field string, path ingress.Path, pt *networkingv1.PathType) {
	ref, ok := backendRef(w, field, path.Backend)
	if !ok {
		return
	}
	if rt.grpc != nil {
		c.addGRPCPath(w, rt, p, field, path, ref)
		return
	}
	rule := gwv1.HTTPRouteRule{Timeouts: p.timeouts.DeepCopy()}
	var rewrite *gwv1.HTTPPathModifier
	if path.Written != "" { // spec.defaultBackend has no path: no match
		var m gwv1.HTTPPathMatch
		var left bool
		m, rewrite, left = c.pathMatch(w, host, field, path, pt)
		if left {
			return
		}
		rule.Matches = []gwv1.HTTPRouteMatch{{Path: &m}}
		if older := c.pathOwner(w, host, path.Written, m); older != nil {
			w.find(rulePathShadowed, field, path.Written, "host "+cmp.Or(host, "(any)")+": the path is the older Ingress "+
				older.ing.Namespace+"/"+older.ing.Name+"'s; this one's is not written")
			return
		}
	}
	rule.Filters = p.httpFilters(rewrite)
	if p.redirect == nil {
		rule.BackendRefs = []gwv1.HTTPBackendRef{{BackendRef: ref}}
	}
	rt.http.Spec.Rules = append(rt.http.Spec.Rules, rule)
	if path.Written != "" {
		k := pathKey{host, path.Written}
		c.index[k] = append(c.index[k], ruleRef{rt, len(rt.http.Spec.Rules) - 1})
	}
}

// pathMatch is the path match of one path of host, and its rewrite;
// left is true when the path is left out (its finding written).
func (c *converter) pathMatch(w *ingressWork, host, field string, path ingress.Path, pt *networkingv1.PathType) (_ gwv1.HTTPPathMatch, _ *gwv1.HTTPPathModifier, left bool) {
	m := path.Match
	if m.Type != model.Regex && c.regexHosts[host] {
		if _, err := model.ParseRegex(path.Written); err != nil {
			w.find(ruleInvalid, field, path.Written, "the host is in regex mode (another Ingress sets use-regex) and the path is not a valid regular expression: "+err.Error()+"; left out, as Causeway does")
			return gwv1.HTTPPathMatch{}, nil, true
		}
		v := wholePath(path.Written)
		w.find(ruleRegexHost, field, path.Written, "host "+cmp.Or(host, "(any)")+": matched as "+v)
		return gwv1.HTTPPathMatch{Type: ptr(gwv1.PathMatchRegularExpression), Value: &v}, nil, false
	}
	switch m.Type {
	case model.Exact:
		w.find(rulePathExact, field, m.Path, "")
		return gwv1.HTTPPathMatch{Type: ptr(gwv1.PathMatchExact), Value: ptr(m.Path)}, nil, false
	case model.Prefix:
		r := rulePathPrefix
		if pt == nil || *pt == networkingv1.PathTypeImplementationSpecific {
			r = rulePathImplementationSpecific
		}
		w.find(r, field, path.Written, "")
		return gwv1.HTTPPathMatch{Type: ptr(gwv1.PathMatchPathPrefix), Value: ptr(m.Path)}, nil, false
	}
	regex := gwv1.HTTPPathMatch{Type: ptr(gwv1.PathMatchRegularExpression), Value: ptr(wholePath(m.Path))}
	rw := w.tr.Annotations.Location.Rewrite
	key := c.key("rewrite-target")
	if rw == nil {
		w.find(ruleUseRegex, c.key("use-regex"), w.ing.Annotations[c.key("use-regex")], field+": "+m.Path+" becomes "+*regex.Value)
		return regex, nil, false
	}
	target := w.ing.Annotations[key]
	if !strings.Contains(rw.Target, "$") {
		w.find(ruleRewriteFull, key, target, field+": "+m.Path+" becomes "+*regex.Value)
		return regex, &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr(rw.Target)}, false
	}
	if prefix, replace, exact, ok := prefixShape(m.Path, rw.Target); ok {
		r := ruleRewritePrefix
		if exact {
			r = ruleRewriteStrip
		}
		w.find(r, key, target, fmt.Sprintf("%s: %s becomes PathPrefix %s, ReplacePrefixMatch %s", field, m.Path, prefix, replace))
		return gwv1.HTTPPathMatch{Type: ptr(gwv1.PathMatchPathPrefix), Value: ptr(prefix)},
			&gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr(replace)}, false
	}
	w.find(ruleRewriteCaptures, key, target, field+": "+m.Path+" is matched as "+*regex.Value+" and not rewritten")
	return regex, nil, false
}

// wholePath turns an ingress-nginx path regex, matched from the start of
// the path, into one matching the whole path, as Gateway API's are.
func wholePath(re string) string {
	if strings.HasSuffix(re, "$") && !strings.HasSuffix(re, `\$`) || strings.HasSuffix(re, "(.*)") {
		return re
	}
	if strings.Contains(re, "|") {
		return "(" + strings.TrimPrefix(re, "^") + ").*"
	}
	return re + ".*"
}

// regexMeta are the bytes that make a path a regular expression.
const regexMeta = `.^$*+?()[]{}|\`

// prefixShape recognises the rewrites Gateway API can express: a
// literal prefix P followed by "(/|$)(.*)" with a target "T/$2", or by
// "/(.*)" with "T/$1", where T is a literal path without "$". They become
// PathPrefix P with ReplacePrefixMatch T ("/" when T is empty); exact is
// true for the first with T empty, which Gateway API does identically.
func prefixShape(re, target string) (prefix, replace string, exact, ok bool) {
	for _, s := range []struct{ suffix, group string }{{"(/|$)(.*)", "$2"}, {"/(.*)", "$1"}} {
		p, found := strings.CutSuffix(strings.TrimPrefix(re, "^"), s.suffix)
		if !found || !strings.HasPrefix(p, "/") || strings.ContainsAny(p, regexMeta) || p == "/" {
			continue
		}
		t, found := strings.CutSuffix(target, s.group)
		if !found || !strings.HasPrefix(t, "/") || !strings.HasSuffix(t, "/") || strings.Contains(t, "$") {
			continue
		}
		replace = cmp.Or(strings.TrimSuffix(t, "/"), "/")
		return strings.TrimSuffix(p, "/"), replace, s.group == "$2" && replace == "/", true
	}
	return "", "", false, false
}

// gRPC names, as GRPCMethodMatch's validation reads them.
var (
	grpcService = regexp.MustCompile(`^[A-Za-z_][A-Za-z_0-9]*(\.[A-Za-z_][A-Za-z_0-9]*)*$`)
	grpcMethod  = regexp.MustCompile(`^[A-Za-z_][A-Za-z_0-9]*$`)
)

// addGRPCPath writes the GRPCRoute rule of one path: "/" (any method),
// "/pkg.Service" and "/pkg.Service/" (a service), or "/pkg.Service/Method"
// (Exact: a method).
func (c *converter) addGRPCPath(w *ingressWork, rt *route, p *policy, field string, path ingress.Path, ref gwv1.BackendRef) {
	rule := gwv1.GRPCRouteRule{Filters: p.grpcFilters(), BackendRefs: []gwv1.GRPCBackendRef{{BackendRef: ref}}}
	m := path.Match
	service, method, _ := strings.Cut(strings.TrimPrefix(m.Path, "/"), "/")
	switch {
	case path.Written == "" || m.Type == model.Prefix && m.Path == "/":
	case m.Type == model.Prefix && method == "" && grpcService.MatchString(service):
		rule.Matches = []gwv1.GRPCRouteMatch{{Method: &gwv1.GRPCMethodMatch{Type: ptr(gwv1.GRPCMethodMatchExact), Service: ptr(service)}}}
	case m.Type == model.Exact && grpcService.MatchString(service) && grpcMethod.MatchString(method):
		rule.Matches = []gwv1.GRPCRouteMatch{{Method: &gwv1.GRPCMethodMatch{Type: ptr(gwv1.GRPCMethodMatchExact), Service: ptr(service), Method: ptr(method)}}}
	default:
		w.find(ruleGRPCPath, field, path.Written, "")
		return
	}
	rt.grpc.Spec.Rules = append(rt.grpc.Spec.Rules, rule)
}

// trailingSlash reports how a host's HTTPS redirect treats a trailing
// slash: ingress-nginx drops one unless preserve-trailing-slash.
func (c *converter) trailingSlash(w *ingressWork, host string) {
	preserve := c.cfg.Defaults.PreserveTrailingSlash
	if v := w.tr.Annotations.Server.PreserveTrailingSlash; v != nil {
		preserve = *v
	}
	k := c.key("preserve-trailing-slash")
	input, value := k, w.ing.Annotations[k]
	if _, set := w.ing.Annotations[k]; !set {
		input, value = "spec.tls", ""
	}
	if preserve {
		w.find(ruleSSLRedirect, input, value, "host "+host+": the redirect keeps a trailing slash, as ingress-nginx's with preserve-trailing-slash")
		return
	}
	w.find(ruleRedirectSlash, input, value, "host "+host+": http://"+host+"/a/ redirects to https://"+host+"/a/, where ingress-nginx sent https://"+host+"/a")
}

// pathOwner is the older Ingress (converted before w, as ingress-nginx
// orders them) whose route already has a rule of host with the same path
// match, or nil.
func (c *converter) pathOwner(w *ingressWork, host, written string, m gwv1.HTTPPathMatch) *ingressWork {
	for _, ref := range c.index[pathKey{host, written}] {
		if ref.r.w == w || ref.r.http == nil {
			continue
		}
		for _, om := range ref.r.http.Spec.Rules[ref.i].Matches {
			if om.Path != nil && reflect.DeepEqual(*om.Path, m) {
				return ref.r.w
			}
		}
	}
	return nil
}

// hostWide reports the redirect settings of an Ingress on a host other
// Ingresses share: ingress-nginx applies them per path, as the routes
// do, where Causeway serving the Ingresses applies each to the whole host.
func (c *converter) hostWide(w *ingressWork, host string) {
	if c.hostIngresses[host] < 2 {
		return
	}
	for _, name := range []string{"ssl-redirect", "force-ssl-redirect", "preserve-trailing-slash"} {
		w.findKey(c, ruleRedirectHostWide, name, "host "+host+": "+strconv.Itoa(c.hostIngresses[host])+" Ingresses share it")
	}
}
