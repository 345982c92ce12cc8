package build

import (
	"fmt"
	"reflect"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// This file adds NGINX Ingress Controller's VirtualServers. A
// VirtualServer owns its host: one host belongs to one VirtualServer or
// to Ingresses, whichever ranks first (ranksFirst: the older, then the
// greater namespace/name), and the others get a Collision Problem for it. A VirtualServer's
// server keeps nginx's own location order (routes as written, string
// prefixes, regexes tried in order) and takes no paths from Ingress rules
// without a host.

// ourVirtualServers are those of our classes; a VirtualServer naming no
// class is ours.
func ourVirtualServers(classes *class.Filter, vss []*nicv1.VirtualServer) []*nicv1.VirtualServer {
	var out []*nicv1.VirtualServer
	for _, vs := range vss {
		if nic.VirtualServerClass.IsOurs(classes, vs) {
			out = append(out, vs)
		}
	}
	return out
}

func (b *virtualServerProcessor) addVirtualServer(vs *nicv1.VirtualServer) {
	ref := nic.Ref(vs)
	t, ok := intake(b.builder, ref, vs, func() (*nic.VirtualServer, []model.Problem, error) {
		return nic.TranslateVirtualServer(vs, &b.model.Config.Defaults)
	})
	if !ok {
		return
	}
	if !b.claimHost(ref, t.Host) {
		return
	}
	srv := b.server(t.Host)
	srv.Sources = append(srv.Sources, ref)
	b.vsListeners(srv, t)
	b.vsServers[t.Host] = t
	if t.TLS != nil {
		key := ""
		if t.TLS.Secret != "" {
			key = b.tlsSecret(ref, t.Namespace, t.TLS.Secret)
		}
		srv.TLS = &model.ServerTLS{Secret: key}
		b.tlsOwner[t.Host] = ref
	}
	b.routeLocations(srv, t.Policies, ref, t.Namespace, t.Upstreams, t.Routes, t.Host)
}

// routeLocations adds the locations of routes (a VirtualServer's, or a
// VirtualServerRoute's subroutes) of owner to srv. outer are the
// VirtualServer's Policies, which every route applies unless it has its
// own of the same kind.
func (b *virtualServerProcessor) routeLocations(srv *model.Server, outer []string, owner model.ObjectRef, ns string,
	upstreams map[string]*nic.Upstream, routes []nic.Route, host string) {
	backends := b.vsBackends(owner, ns, upstreams)
	for _, r := range routes {
		if r.Delegate != "" || r.Selector != nil {
			b.delegate(srv, outer, owner, r, host, routes)
			continue
		}
		loc := &model.Location{Match: r.Match, Source: owner}
		pols, ok := b.routePolicies(owner, outer, r)
		if !ok {
			// NGINX Ingress Controller answers 500 where a referenced
			// Policy is missing or invalid; never serve the route open.
			loc.Action = model.ReturnStatus(500)
			srv.Locations = append(srv.Locations, loc)
			continue
		}
		switch a := r.Action; {
		case r.Choice != nil && a.Upstream == "":
			// Every action of the route's choice answers by itself: the
			// location proxies to nothing.
			loc.Action = model.Action{Proxy: &model.Proxy{Split: b.routeChoice(owner, r, upstreams, backends)}}
		case r.Choice == nil && a.Redirect != nil:
			loc.Action = model.Action{Redirect: a.Redirect}
		case r.Choice == nil && a.Return != nil:
			loc.Action = model.Action{Return: a.Return}
			if len(a.Headers) > 0 {
				loc.Policy = &model.Policy{ResponseHeaders: a.Headers}
			}
		case backends[a.Upstream] == "", !b.choiceResolves(r.Choice, backends):
			loc.Action = model.ReturnStatus(503)
		default:
			loc.Action = model.ProxyTo(backends[a.Upstream])
			if r.Choice != nil {
				loc.Action.Proxy.Split = b.routeChoice(owner, r, upstreams, backends)
			}
			if p := upstreams[a.Upstream].Policy; p != nil {
				pol := *p
				loc.Policy = &pol
			}
			if p := a.Policy; p != nil {
				// The proxy action's own: rewritePath and headers.
				if loc.Policy == nil {
					loc.Policy = &model.Policy{}
				}
				loc.Policy.Rewrite, loc.Policy.Snippet, loc.Policy.NoRequestHeaders = p.Rewrite, p.Snippet, p.NoRequestHeaders
				loc.Policy.ProxyPassHeaders, loc.Policy.ProxyIgnoreHeaders = p.ProxyPassHeaders, p.ProxyIgnoreHeaders
			}
		}
		if pols != nil {
			b.applyRoutePolicy(owner, loc, pols)
		}
		if len(r.ErrorPages) > 0 {
			if loc.Policy == nil {
				loc.Policy = &model.Policy{}
			}
			loc.Policy.ResponsePages = r.ErrorPages
		}
		b.routeSnippet(loc, r.Snippet)
		if r.HeaderInherit != "" {
			ownPolicy(loc).HeaderInherit = r.HeaderInherit
		}
		if b.configClosesRoutes() {
			// A ConfigMap snippet that denies was refused (the Problem is
			// on the ConfigMap): never serve the route without it.
			*loc = model.Location{Match: loc.Match, Source: loc.Source, Action: model.ReturnStatus(503)}
		}
		srv.Locations = append(srv.Locations, loc)
		b.signinLocation(srv, owner, loc)
	}
}

// choiceResolves reports whether every upstream a route's choice names
// has a backend (a missing Service makes the route answer 503).
func (b *builder) choiceResolves(c *nic.Choice, backends map[string]string) bool {
	if c == nil {
		return true
	}
	for _, ws := range append([][]nic.Weighted{c.Default}, matchTargets(c)...) {
		for _, w := range ws {
			if w.Answer == nil && backends[w.Upstream] == "" {
				return false
			}
		}
	}
	return true
}

func matchTargets(c *nic.Choice) [][]nic.Weighted {
	var out [][]nic.Weighted
	for _, m := range c.Matches {
		out = append(out, m.Targets)
	}
	return out
}

// routeChoice is a route's splits and matches as the model's Split (its
// matches are rules, its splits weighted targets), which the Lua balancer
// applies without a reload. The proxy settings of the
// route's first upstream apply to every upstream it chooses; a Problem
// names those whose settings differ.
func (b *builder) routeChoice(owner model.ObjectRef, r nic.Route, upstreams map[string]*nic.Upstream, backends map[string]string) *model.Split {
	c := &model.Split{Source: owner, Route: r.Match.Path}
	targets := func(ws []nic.Weighted) []model.Target {
		out := make([]model.Target, len(ws))
		for i, w := range ws {
			if a := w.Answer; a != nil {
				out[i] = model.AnswerTarget(len(c.Answers), w.Weight)
				c.Answers = append(c.Answers, model.Answer{Redirect: a.Redirect, Return: a.Return, Headers: a.Headers})
				continue
			}
			out[i] = model.Target{Backend: backends[w.Upstream], Weight: w.Weight}
		}
		return out
	}
	c.Default = targets(r.Choice.Default)
	for _, m := range r.Choice.Matches {
		c.Rules = append(c.Rules, model.SplitRule{Conditions: m.Conditions, Targets: targets(m.Targets)})
	}
	primary := r.Action.Upstream // "" when every target answers
	reported := map[string]bool{primary: true}
	for _, ws := range append([][]nic.Weighted{r.Choice.Default}, matchTargets(r.Choice)...) {
		for _, w := range ws {
			if w.Answer != nil || reported[w.Upstream] {
				continue
			}
			reported[w.Upstream] = true
			if !reflect.DeepEqual(upstreams[primary].Policy, upstreams[w.Upstream].Policy) {
				b.problem(owner, model.ReasonUnsupported, false,
					"route %s: the proxy settings of upstream %q apply to every upstream the route chooses; those of %q are not used",
					r.Match.Path, primary, w.Upstream)
			}
			if p, o := b.backends[backends[primary]], b.backends[backends[w.Upstream]]; p != nil && o != nil && p.Keepalive != o.Keepalive {
				b.problem(owner, model.ReasonUnsupported, false,
					"route %s: upstreams %q and %q keep idle connections differently (keepalive); the route's connections "+
						"are kept in the ConfigMap's pool (upstream-keepalive-connections)",
					r.Match.Path, primary, w.Upstream)
			}
		}
	}
	return c
}

// virtualServerPolicy sets what a VirtualServer says about its host's
// HTTPS redirect, in place of the ConfigMap's ssl-redirect.
func (b *virtualServerProcessor) virtualServerPolicy(srv *model.Server) bool {
	t := b.vsServers[srv.Host]
	if t == nil {
		return false
	}
	if srv.SSLRedirect = t.TLS != nil && t.TLS.Redirect != nil; srv.SSLRedirect {
		r := *t.TLS.Redirect
		srv.HTTPSRedirect = &r
	}
	b.vsClientTLS(srv, t)
	b.vsServerSnippet(srv, t)
	b.vsHSTS(srv, t)
	b.vsGunzip(srv, t)
	b.vsHeaderInherit(srv, t)
	if t.TLS != nil && t.TLS.CertManager && !b.opts.CertManager {
		b.problem(t.Ref, model.ReasonUnsupported, false,
			"spec.tls.cert-manager: the cert-manager integration is off (--enable-cert-manager); no Certificate is requested")
	}
	switch {
	case t.ExternalDNS && !b.opts.ExternalDNS:
		b.problem(t.Ref, model.ReasonUnsupported, false,
			"spec.externalDNS: the external-dns integration is off (--enable-external-dns); no DNSEndpoint is written")
	case t.ExternalDNS && b.opts.NoPublishedAddress:
		b.problem(t.Ref, model.ReasonUnsupported, false,
			"spec.externalDNS: the controller publishes no address (--publish-service or --publish-address), "+
				"so a DNSEndpoint would have no record; none is written")
	}
	return true
}

// routePolicies resolves the Policies a route applies: the
// VirtualServer's, each replaced by a route's own of the same kind. It
// returns false (with a Problem on the VirtualServer) when a referenced
// Policy is missing, of another class or invalid; nil when none applies.
func (b *virtualServerProcessor) routePolicies(ref model.ObjectRef, outer []string, r nic.Route) (*model.Policy, bool) {
	byKind := map[string]*nic.Policy{}
	own := map[string]bool{}
	for i, refs := range [][]string{outer, r.Policies} {
		for _, key := range refs {
			p, why := b.nicPolicy(key)
			if why != "" {
				b.problem(ref, model.ReasonInvalid, false, "route %s: Policy %s %s; the route answers 500", r.Match.Path, key, why)
				return nil, false
			}
			byKind[p.Kind] = p
			own[p.Kind] = i == 1
		}
	}
	if len(byKind) == 0 {
		return nil, true
	}
	out := &model.Policy{}
	for kind, p := range byKind {
		if err := b.routePolicy(ref, p, out, own[kind]); err != nil {
			b.problem(ref, policyReason(err), false, "route %s: Policy %s: %v; the route answers 500", r.Match.Path, p.Ref.Namespace+"/"+p.Ref.Name, err)
			return nil, false
		}
	}
	return out, true
}

// nicPolicy translates the Policy "namespace/name" once per build, with
// its Problems on the Policy; why says why it cannot be used.
func (b *virtualServerProcessor) nicPolicy(key string) (*nic.Policy, string) {
	if st, ok := b.nicPolicies[key]; ok {
		return st.policy, st.why
	}
	st := &policyState{}
	b.nicPolicies[key] = st
	p := b.policiesIn[key]
	switch {
	case p == nil:
		st.why = "does not exist"
	case !nic.PolicyClass.IsOurs(b.classes, p):
		st.why = "is of another ingressClassName (" + p.Spec.IngressClass + ")"
	default:
		pol, problems, err := nic.TranslatePolicy(p, b.opts.Replicas)
		b.problems = append(b.problems, problems...)
		if err != nil {
			b.problem(nic.PolicyRef(p), model.ReasonInvalid, true, "%v", err)
			st.why = "is invalid: " + err.Error()
		}
		st.policy = pol
	}
	return st.policy, st.why
}

// policyState is a Policy as the build found it.
type policyState struct {
	policy *nic.Policy
	why    string
}

// htpasswdFile validates the htpasswd file of a Secret of type
// nginx.org/htpasswd (key htpasswd) into the model's auth files.
func (b *builder) htpasswdFile(f *model.AuthFile) (string, error) {
	key := f.Key()
	if _, ok := b.authFiles[key]; ok {
		return key, nil
	}
	name := f.Namespace + "/" + f.Name
	s := b.secretsIn[name]
	if s == nil {
		return "", fmt.Errorf("secret %s %w", name, errNotFound)
	}
	raw, ok := s.Data["htpasswd"]
	if !ok {
		return "", fmt.Errorf("secret %s has no key htpasswd", name)
	}
	data, err := model.ParseHtpasswd(raw)
	if err != nil {
		return "", fmt.Errorf("secret %s: %w", name, err)
	}
	f.Data = data
	b.authFiles[key] = f
	return key, nil
}

// virtualServerProcessor adds the VirtualServers of our classes, which
// claim whole hosts, with the VirtualServerRoutes they delegate to and
// the Policies they apply; then it checks those no VirtualServer used.
type virtualServerProcessor struct {
	*builder
	// vsServers are the translated VirtualServers by host.
	vsServers map[string]*nic.VirtualServer
	// signinBases are the sign-in paths of externalAuth Policies
	// (vspolicy_auth.go).
	signinBases map[*model.ExternalAuth]string
	// cacheZones are the zones of cache Policies by name
	// (vspolicy_cache.go).
	cacheZones map[string]*model.CacheZone
	// cacheZonesSize is the sum of their keys zones' sizes.
	cacheZonesSize model.Size
	// policiesIn are the snapshot's Policies by "namespace/name";
	// nicPolicies what the build made of those referenced.
	policiesIn  map[string]*nicv1.Policy
	nicPolicies map[string]*policyState
	// vsrsIn are the snapshot's VirtualServerRoutes by "namespace/name";
	// vsrUsed the host and path of the route each serves (one each).
	vsrsIn  map[string]*nicv1.VirtualServerRoute
	vsrUsed map[string]string
	// vsrsByHost are vsrsIn by spec.host, each ordered by
	// "namespace/name": what routeSelector routes choose from, built on
	// first use (see selected).
	vsrsByHost map[string][]*nicv1.VirtualServerRoute
	// vsrRegex: a VirtualServerRoute that regex routes delegate to, by
	// host and "namespace/name", checked once for all their paths.
	vsrRegex map[string]*delegated
	// httpUsed are the GlobalConfiguration's HTTP listeners a
	// VirtualServer is served on.
	httpUsed map[string]*model.HTTPListener
}

func (b *virtualServerProcessor) objects(snap *source.Snapshot) []object {
	b.vsServers, b.nicPolicies = map[string]*nic.VirtualServer{}, map[string]*policyState{}
	b.policiesIn, b.vsrsIn, b.vsrUsed = map[string]*nicv1.Policy{}, map[string]*nicv1.VirtualServerRoute{}, map[string]string{}
	for _, r := range snap.VirtualServerRoutes {
		b.vsrsIn[r.Namespace+"/"+r.Name] = r
	}
	for _, p := range snap.Policies {
		b.policiesIn[p.Namespace+"/"+p.Name] = p
	}
	var out []object
	for _, vs := range ourVirtualServers(b.classes, snap.VirtualServers) {
		out = append(out, object{meta: vs, add: func() { b.addVirtualServer(vs) }})
	}
	return out
}

func (b *virtualServerProcessor) after(snap *source.Snapshot) { b.reportUnused(snap) }

func (b *virtualServerProcessor) ownsServer(host string) bool { return b.vsServers[host] != nil }

func (b *virtualServerProcessor) serverPolicy(srv *model.Server) { b.virtualServerPolicy(srv) }

func (b *virtualServerProcessor) finishModel() {
	b.model.CacheZones = b.usedCacheZones()
	b.model.HTTPListeners = b.usedHTTPListeners()
}
