package togateway

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/configmap"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// policy is what an Ingress's annotations make of every rule it writes.
type policy struct {
	grpc bool
	// reqSet and respSet are the RequestHeaderModifier and
	// ResponseHeaderModifier headers to set.
	reqSet, respSet []gwv1.HTTPHeader
	cors            *gwv1.HTTPCORSFilter
	// hostname is upstream-vhost.
	hostname *gwv1.PreciseHostname
	// redirect replaces the backends (permanent-redirect ...).
	redirect *gwv1.HTTPRequestRedirectFilter
	timeouts *gwv1.HTTPRouteTimeouts
	appRoot  string
	// sslRedirect and forceSSL are the Ingress's ssl-redirect and
	// force-ssl-redirect, the ConfigMap's where it sets none.
	sslRedirect, forceSSL bool
}

// policy reads the Ingress's annotations that apply to all its rules,
// reporting each.
func (c *converter) policy(w *ingressWork) *policy {
	a := &w.tr.Annotations
	p := &policy{grpc: a.Location.Protocol.GRPC()}
	p.sslRedirect = c.cfg.SSLRedirect
	if a.Server.SSLRedirect != nil {
		p.sslRedirect = *a.Server.SSLRedirect
	}
	p.forceSSL = c.cfg.Defaults.ForceSSLRedirect
	if a.Server.ForceSSLRedirect != nil {
		p.forceSSL = *a.Server.ForceSSLRedirect
	}

	// The backend protocol.
	switch proto := a.Location.Protocol; {
	case !w.has(c, "backend-protocol"):
	case proto.GRPC():
		w.findKey(c, ruleBackendGRPC, "backend-protocol", "written as a GRPCRoute")
		if proto.TLS() {
			w.findKey(c, ruleBackendTLS, "backend-protocol", "")
		}
	case proto.TLS():
		w.findKey(c, ruleBackendTLS, "backend-protocol", "")
	case strings.EqualFold(strings.TrimSpace(w.ing.Annotations[c.key("backend-protocol")]), "HTTP"):
		w.findKey(c, ruleBackendHTTP, "backend-protocol", "")
	default:
		c.invalid(w, "backend-protocol")
	}
	for _, k := range sortedKeys(w.ann) {
		if strings.HasPrefix(w.ann[k].name, "proxy-ssl-") && !w.handled[k] {
			w.find(ruleBackendTLS, k, w.ing.Annotations[k], "")
		}
	}

	c.useRegex(w)
	c.redirect(w, p)
	c.headers(w, p)
	c.timeouts(w, p)
	c.cors(w, p)
	c.affinity(w, p)
	if a.Server.AppRoot != nil && c.httpOnly(w, p, "app-root") {
		p.appRoot = *a.Server.AppRoot
		w.findKey(c, ruleAppRoot, "app-root", "")
	}
	if w.has(c, "app-root") && a.Server.AppRoot == nil {
		c.invalid(w, "app-root")
	}
	if w.has(c, "force-ssl-redirect") && !p.forceSSL {
		w.findKey(c, ruleNoEffect, "force-ssl-redirect", "")
	}
	return p
}

// httpOnly reports whether the annotation name may apply: on a GRPC
// Ingress it reports a grpc-filter finding instead.
func (c *converter) httpOnly(w *ingressWork, p *policy, name string) bool {
	if p.grpc {
		w.findKey(c, ruleGRPCFilter, name, "")
		return false
	}
	return true
}

// invalid reports an annotation Causeway does not apply as written.
func (c *converter) invalid(w *ingressWork, name string) {
	w.findKey(c, ruleInvalid, name, "Causeway does not apply this value; run causeway migrate check")
}

func (c *converter) useRegex(w *ingressWork) {
	v, ok := w.ing.Annotations[c.key("use-regex")]
	if !ok {
		return
	}
	switch b, err := model.ParseBool(v); {
	case err != nil:
		c.invalid(w, "use-regex")
	case !b:
		w.findKey(c, ruleNoEffect, "use-regex", "")
	case w.tr.Annotations.Location.Rewrite != nil:
		w.findKey(c, ruleUseRegex, "use-regex", "implied by rewrite-target, whose findings say what each path becomes")
	}
	// Otherwise reported per path (routes.go).
}

// redirect reads permanent-redirect and temporal-redirect.
func (c *converter) redirect(w *ingressWork, p *policy) {
	a := &w.tr.Annotations
	for _, name := range []string{"permanent-redirect", "temporal-redirect"} {
		if !w.has(c, name) {
			continue
		}
		r := rulePermanentRedirect
		if name == "temporal-redirect" {
			r = ruleTemporalRedirect
		}
		v := w.ing.Annotations[c.key(name)]
		switch {
		case a.Redirect == nil && strings.Contains(v, "$"):
			w.findKey(c, ruleRedirectTemplate, name, "")
		case a.Redirect == nil:
			c.invalid(w, name)
		case a.Redirect.URL != strings.TrimSpace(v):
			w.findKey(c, ruleNoEffect, name, "another redirect annotation wins, as in Causeway")
		case !c.httpOnly(w, p, name):
		default:
			f, msg := redirectFilter(a.Redirect)
			p.redirect = f
			w.findKey(c, r, name, msg)
			w.findKey(c, r, name+"-code", "")
		}
	}
	for _, name := range []string{"permanent-redirect-code", "temporal-redirect-code"} {
		if k := c.key(name); w.has(c, name) && !w.handled[k] {
			w.findKey(c, ruleNoEffect, name, "no redirect of its kind applies")
		}
	}
}

// redirectFilter is the RequestRedirect of a redirect URL, and what it
// cannot say.
func redirectFilter(r *model.Redirect) (*gwv1.HTTPRequestRedirectFilter, string) {
	u, err := url.Parse(r.URL)
	if err != nil {
		// ParseRedirectURL accepted it; url.Parse does too.
		panic(err)
	}
	path := cmp.Or(u.EscapedPath(), "/")
	f := &gwv1.HTTPRequestRedirectFilter{
		Scheme:     ptr(u.Scheme),
		Hostname:   ptr(gwv1.PreciseHostname(u.Hostname())),
		Path:       &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: &path},
		StatusCode: ptr(r.Code),
	}
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		f.Port = ptr(gwv1.PortNumber(n))
	}
	var lost []string
	if u.RawQuery != "" {
		lost = append(lost, "the query ?"+u.RawQuery)
	}
	if u.Fragment != "" {
		lost = append(lost, "the fragment #"+u.Fragment)
	}
	if len(lost) > 0 {
		return f, strings.Join(lost, " and ") + " of the URL cannot be expressed and is dropped"
	}
	return f, ""
}

// headers reads x-forwarded-prefix, upstream-vhost, custom-headers and
// the ConfigMap's proxy-set-headers.
func (c *converter) headers(w *ingressWork, p *policy) {
	a := &w.tr.Annotations
	if v := a.Location.XForwardedPrefix; v != nil {
		if c.httpOnly(w, p, "x-forwarded-prefix") {
			p.reqSet = append(p.reqSet, gwv1.HTTPHeader{Name: "X-Forwarded-Prefix", Value: string(*v)})
			w.findKey(c, ruleXForwardedPrefix, "x-forwarded-prefix", "")
		}
	} else if w.has(c, "x-forwarded-prefix") {
		c.invalid(w, "x-forwarded-prefix")
	}
	if h := a.Location.UpstreamHost; h != nil {
		if c.httpOnly(w, p, "upstream-vhost") {
			host, port, hasPort := strings.Cut(string(*h), ":")
			p.hostname = ptr(gwv1.PreciseHostname(host))
			if hasPort {
				w.findKey(c, ruleUpstreamVhostPort, "upstream-vhost", "the port :"+port+" cannot be expressed and is dropped")
			} else {
				w.findKey(c, ruleUpstreamVhost, "upstream-vhost", "")
			}
		}
	} else if w.has(c, "upstream-vhost") {
		c.invalid(w, "upstream-vhost")
	}
	if n := a.CustomHeaders; n != nil {
		k := c.key("custom-headers")
		set, fs := c.configMapHeaders(n.Namespace, n.Name, k, ruleCustomHeaders)
		for _, h := range set {
			if !slices.ContainsFunc(c.cfg.AllowedResponseHeaders, func(a string) bool { return strings.EqualFold(a, string(h.Name)) }) {
				fs = append(fs, Finding{Rule: ruleCustomHeadersNotAllowed.ID, Input: k, Value: n.Namespace + "/" + n.Name, Outcome: ruleCustomHeadersNotAllowed.Outcome,
					Message: "header " + string(h.Name) + " is not in the ConfigMap's global-allowed-response-headers: ingress-nginx does not set it"})
				continue
			}
			p.respSet = append(p.respSet, h)
		}
		for _, f := range fs {
			w.find(ruleByID(f.Rule), f.Input, f.Value, f.Message)
		}
	} else if w.has(c, "custom-headers") {
		c.invalid(w, "custom-headers")
	}
	if n := c.cfg.ProxySetHeadersFrom; n != nil {
		// Reported once, on the ConfigMap (controllerFindings).
		set, _ := c.configMapHeaders(n.Namespace, n.Name, "proxy-set-headers", ruleProxySetHeaders)
		p.reqSet = append(p.reqSet, set...)
	}
}

// configMapHeaders reads the headers of the ConfigMap namespace/name,
// which input names; the findings say what was converted.
func (c *converter) configMapHeaders(namespace, name, input string, r *Rule) ([]gwv1.HTTPHeader, []Finding) {
	var cm *corev1.ConfigMap
	for _, m := range c.in.ConfigMaps {
		if m.Namespace == namespace && m.Name == name {
			cm = m
		}
	}
	ref := namespace + "/" + name
	if cm == nil {
		return nil, []Finding{{Rule: ruleConfigMapMissing.ID, Input: input, Value: ref, Outcome: ruleConfigMapMissing.Outcome,
			Message: "ConfigMap " + ref + " was not read"}}
	}
	var set []gwv1.HTTPHeader
	fs := []Finding{{Rule: r.ID, Input: input, Value: ref, Outcome: r.Outcome}}
	for _, h := range sortedKeys(cm.Data) {
		v := cm.Data[h]
		if strings.Contains(v, "$") {
			fs = append(fs, Finding{Rule: ruleHeaderVariable.ID, Input: input, Value: ref, Outcome: ruleHeaderVariable.Outcome,
				Message: fmt.Sprintf("header %s: %q is not converted", h, v)})
			continue
		}
		set = append(set, gwv1.HTTPHeader{Name: gwv1.HTTPHeaderName(h), Value: v})
	}
	return set, fs
}

// controllerFindings report the ConfigMap keys the conversion reads.
func (c *converter) controllerFindings() {
	if n := c.cfg.ProxySetHeadersFrom; n != nil {
		_, fs := c.configMapHeaders(n.Namespace, n.Name, "proxy-set-headers", ruleProxySetHeaders)
		c.cmFindings = append(c.cmFindings, fs...)
	}
	for _, k := range []string{"whitelist-source-range", "denylist-source-range", "global-auth-url"} {
		v, set := c.in.Controller.Data[k]
		applied := k == "global-auth-url" && c.cfg.GlobalAuth != nil ||
			k == "whitelist-source-range" && len(c.cfg.DefaultAccess.Allow) > 0 ||
			k == "denylist-source-range" && len(c.cfg.DefaultAccess.Deny) > 0
		if set && applied {
			c.cmFindings = append(c.cmFindings, Finding{Rule: ruleConfigMapSecurity.ID, Input: k, Value: v,
				Outcome: ruleConfigMapSecurity.Outcome, Severity: SecuritySeverity})
		}
	}
	c.notes = append(c.notes, "the other keys of the ConfigMap "+c.in.Controller.Namespace+"/"+c.in.Controller.Name+
		" are the controller's global settings, not the routes': causeway migrate check reports on them")
}

// timeouts reads the proxy-*-timeout annotations.
func (c *converter) timeouts(w *ingressWork, p *policy) {
	names := []string{"proxy-connect-timeout", "proxy-send-timeout", "proxy-read-timeout"}
	if !slices.ContainsFunc(names, func(n string) bool { return w.has(c, n) }) {
		return
	}
	t := w.tr.Annotations.Location.Timeouts
	if p.grpc {
		for _, n := range names {
			w.findKey(c, ruleGRPCFilter, n, "")
		}
		return
	}
	// A zero is the ConfigMap's value (or ingress-nginx's default).
	t.Connect = cmp.Or(t.Connect, c.cfg.ProxyConnectTimeout)
	t.Send = cmp.Or(t.Send, c.cfg.ProxySendTimeout)
	t.Read = cmp.Or(t.Read, c.cfg.ProxyReadTimeout)
	sum := t.Connect + t.Send + t.Read
	d := duration(sum)
	p.timeouts = &gwv1.HTTPRouteTimeouts{BackendRequest: &d}
	for _, n := range names {
		w.findKey(c, ruleTimeouts, n, fmt.Sprintf("backendRequest %s = connect %s + send %s + read %s", d, t.Connect, t.Send, t.Read))
	}
}

// duration is d as a Gateway API Duration: whole seconds, else
// milliseconds.
func duration(d time.Duration) gwv1.Duration {
	if d%time.Second == 0 {
		return gwv1.Duration(strconv.FormatInt(int64(d/time.Second), 10) + "s")
	}
	return gwv1.Duration(strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms")
}

// cors reads enable-cors and the cors-* annotations.
func (c *converter) cors(w *ingressWork, p *policy) {
	var keys []string
	for _, k := range sortedKeys(w.ann) {
		if n := w.ann[k].name; w.ann[k].family == "ingress-nginx" && (n == "enable-cors" || strings.HasPrefix(n, "cors-")) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	cors := w.tr.Annotations.Location.CORS
	for _, k := range keys {
		switch {
		case cors == nil:
			w.find(ruleNoEffect, k, w.ing.Annotations[k], "without enable-cors: true")
		case p.grpc:
			w.find(ruleGRPCFilter, k, w.ing.Annotations[k], "")
		default:
			w.find(ruleCORS, k, w.ing.Annotations[k], "")
		}
	}
	if cors == nil || p.grpc {
		return
	}
	f := &gwv1.HTTPCORSFilter{MaxAge: int32(cors.MaxAge / time.Second)}
	if cors.AllowAnyOrigin || len(cors.Origins) == 0 {
		f.AllowOrigins = []gwv1.CORSOrigin{"*"}
	}
	for _, o := range cors.Origins {
		f.AllowOrigins = append(f.AllowOrigins, gwv1.CORSOrigin(o))
	}
	if !slices.Contains(f.AllowOrigins, "*") {
		w.find(ruleCORSListed, c.key("cors-allow-origin"), w.ing.Annotations[c.key("cors-allow-origin")], "")
	}
	for _, m := range cors.Methods {
		f.AllowMethods = append(f.AllowMethods, gwv1.HTTPMethodWithWildcard(m))
	}
	for _, h := range cors.Headers {
		f.AllowHeaders = append(f.AllowHeaders, gwv1.HTTPHeaderName(h))
	}
	for _, h := range cors.ExposeHeaders {
		f.ExposeHeaders = append(f.ExposeHeaders, gwv1.HTTPHeaderName(h))
	}
	switch {
	case cors.Credentials && slices.Contains(f.AllowOrigins, "*"):
		w.find(ruleCORSAnyCredentials, c.key("cors-allow-credentials"), w.ing.Annotations[c.key("cors-allow-credentials")], "")
	case cors.Credentials:
		f.AllowCredentials = ptr(true)
	}
	p.cors = f
}

// affinity reads affinity: cookie and its session-cookie-* annotations.
func (c *converter) affinity(w *ingressWork, p *policy) {
	b := w.tr.Annotations.Balance
	if b == nil || b.Sticky == nil {
		return
	}
	// ingress-nginx's affinity is the Service's: the Service's
	// annotations give the same stickiness to every route of the
	// Service, where a rule's sessionPersistence would be the rule's
	// own cookie (another name, another path).
	s := b.Sticky
	msg := fmt.Sprintf("annotate the Service with causeway.io/load-balance: sticky, causeway.io/sticky-cookie: %s", s.Name)
	if s.MaxAge > 0 {
		msg += fmt.Sprintf(", causeway.io/sticky-max-age: %q", strconv.Itoa(s.MaxAge))
	}
	for _, n := range []string{"affinity", "session-cookie-name", "session-cookie-max-age", "session-cookie-expires"} {
		w.findKey(c, ruleAffinity, n, msg)
	}
	for _, n := range []string{"affinity-mode", "session-cookie-path", "session-cookie-samesite", "session-cookie-secure", "session-cookie-change-on-failure"} {
		w.findKey(c, ruleAffinityDetail, n, "")
	}
}

// httpFilters are the filters of one HTTPRoute rule; rewrite is the
// rule's path rewrite, nil for none.
func (p *policy) httpFilters(rewrite *gwv1.HTTPPathModifier) []gwv1.HTTPRouteFilter {
	if p.redirect != nil {
		return []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: p.redirect.DeepCopy()}}
	}
	var out []gwv1.HTTPRouteFilter
	if len(p.reqSet) > 0 {
		out = append(out, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestHeaderModifier,
			RequestHeaderModifier: &gwv1.HTTPHeaderFilter{Set: slices.Clone(p.reqSet)}})
	}
	if rewrite != nil || p.hostname != nil {
		f := &gwv1.HTTPURLRewriteFilter{Path: rewrite}
		if p.hostname != nil {
			f.Hostname = ptr(*p.hostname)
		}
		out = append(out, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: f})
	}
	if len(p.respSet) > 0 {
		out = append(out, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterResponseHeaderModifier,
			ResponseHeaderModifier: &gwv1.HTTPHeaderFilter{Set: slices.Clone(p.respSet)}})
	}
	if p.cors != nil {
		out = append(out, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterCORS, CORS: p.cors.DeepCopy()})
	}
	return out
}

// grpcFilters are the filters of one GRPCRoute rule.
func (p *policy) grpcFilters() []gwv1.GRPCRouteFilter {
	var out []gwv1.GRPCRouteFilter
	if len(p.reqSet) > 0 {
		out = append(out, gwv1.GRPCRouteFilter{Type: gwv1.GRPCRouteFilterRequestHeaderModifier,
			RequestHeaderModifier: &gwv1.HTTPHeaderFilter{Set: slices.Clone(p.reqSet)}})
	}
	if len(p.respSet) > 0 {
		out = append(out, gwv1.GRPCRouteFilter{Type: gwv1.GRPCRouteFilterResponseHeaderModifier,
			ResponseHeaderModifier: &gwv1.HTTPHeaderFilter{Set: slices.Clone(p.respSet)}})
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// ruleByID finds a rule of the table.
func ruleByID(id string) *Rule {
	for _, r := range table {
		if r.ID == id {
			return r
		}
	}
	panic("togateway: no rule " + id)
}

// HeaderConfigMaps are the ConfigMaps ("namespace/name") in's
// custom-headers annotations and its controller ConfigMap's
// proxy-set-headers name, that in.ConfigMaps lacks: what a reader of the
// cluster should get before converting.
func HeaderConfigMaps(in Input, prefix string) []string {
	prefix = cmp.Or(prefix, annotations.DefaultPrefix)
	have := map[string]bool{}
	for _, cm := range in.ConfigMaps {
		have[cm.Namespace+"/"+cm.Name] = true
	}
	want := map[string]bool{}
	for _, ing := range in.Ingresses {
		if v := strings.TrimSpace(ing.Annotations[prefix+"/custom-headers"]); v != "" {
			if !strings.Contains(v, "/") {
				v = ing.Namespace + "/" + v
			}
			want[v] = true
		}
	}
	if in.Controller != nil {
		if cfg, _ := configmap.Parse(in.Controller); cfg.ProxySetHeadersFrom != nil {
			want[cfg.ProxySetHeadersFrom.String()] = true
		}
	}
	var out []string
	for _, n := range sortedKeys(want) {
		if !have[n] {
			out = append(out, n)
		}
	}
	return out
}
