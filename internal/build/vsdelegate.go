package build

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/labels"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

// This file serves the VirtualServer routes that delegate their path to
// VirtualServerRoutes: the one a route names, or every one its
// routeSelector selects. A VirtualServerRoute serves one route (a regex
// VirtualServerRoute: the regex routes that name it, one subroute each),
// and a subroute never takes a path the VirtualServer already serves.

// delegated is a VirtualServerRoute as the regex routes naming it found
// it: translated, or why it cannot serve them.
type delegated struct {
	t   *nic.VirtualServerRoute
	why string
}

// delegate serves a delegating route r of a VirtualServer whose routes
// are routes. A named VirtualServerRoute that is missing, foreign or
// invalid makes the path answer 404 (as in NGINX Ingress Controller),
// with a Problem on the VirtualServer.
func (b *virtualServerProcessor) delegate(srv *model.Server, outer []string, vsRef model.ObjectRef, r nic.Route, host string, routes []nic.Route) {
	if r.Selector != nil {
		b.delegateSelected(srv, outer, vsRef, r, host, routes)
		return
	}
	var t *nic.VirtualServerRoute
	var why string
	if r.Match.Type == model.Regex {
		t, why = b.regexDelegate(r, host, routes)
	} else {
		t, why = b.namedDelegate(r, host, r.Match)
	}
	var subs []nic.Route
	if why == "" {
		subs = servedHere(t, r)
		why = conflict(srv, routes, subs)
	}
	if why != "" {
		b.problem(vsRef, model.ReasonInvalid, false, "route %s: VirtualServerRoute %s %s; the route answers 404", r.Match.Path, r.Delegate, why)
		b.answer404(srv, vsRef, r.Match, routes)
		return
	}
	if b.vsrUsed[r.Delegate] == "" {
		b.vsrUsed[r.Delegate] = host + r.Match.Path
	}
	b.serveDelegated(srv, outer, vsRef, r, t, subs, host)
}

// namedDelegate checks the VirtualServerRoute a route names for the
// paths delegated to it.
func (b *virtualServerProcessor) namedDelegate(r nic.Route, host string, paths ...model.Match) (*nic.VirtualServerRoute, string) {
	vsr := b.vsrsIn[r.Delegate]
	switch {
	case vsr == nil:
		return nil, "does not exist"
	case !nic.VirtualServerRouteClass.IsOurs(b.classes, vsr):
		return nil, "is of another ingressClassName (" + vsr.Spec.IngressClass + ")"
	case b.vsrUsed[r.Delegate] != "":
		return nil, "is already used by the route " + b.vsrUsed[r.Delegate]
	}
	t, problems, err := nic.TranslateVirtualServerRoute(vsr, host, &b.model.Config.Defaults, paths...)
	b.problems = append(b.problems, problems...)
	if err != nil {
		b.problem(nic.VSRRef(vsr), model.ReasonInvalid, true, "%v", err)
		return nil, "is invalid"
	}
	b.created[t.Ref] = vsr.CreationTimestamp
	return t, ""
}

// regexDelegate checks, once, the VirtualServerRoute that regex routes
// name against all their paths, as NGINX Ingress Controller does.
func (b *virtualServerProcessor) regexDelegate(r nic.Route, host string, routes []nic.Route) (*nic.VirtualServerRoute, string) {
	key := host + " " + r.Delegate
	if d := b.vsrRegex[key]; d != nil {
		return d.t, d.why
	}
	var paths []model.Match
	for _, o := range routes {
		if o.Delegate == r.Delegate && o.Match.Type == model.Regex {
			paths = append(paths, o.Match)
		}
	}
	t, why := b.namedDelegate(r, host, paths...)
	if b.vsrRegex == nil {
		b.vsrRegex = map[string]*delegated{}
	}
	b.vsrRegex[key] = &delegated{t: t, why: why}
	return t, why
}

// servedHere are the subroutes that serve route r: for a regex route,
// the one of its path; else all.
func servedHere(t *nic.VirtualServerRoute, r nic.Route) []nic.Route {
	if r.Match.Type != model.Regex {
		return slices.Clone(t.Routes)
	}
	var out []nic.Route
	for _, s := range t.Routes {
		if s.Match == r.Match {
			out = append(out, s)
		}
	}
	return out
}

// conflict says why subroutes cannot be served: one has the path of a
// location the server has already, or of a route of the VirtualServer
// that does not delegate.
func conflict(srv *model.Server, routes []nic.Route, subs []nic.Route) string {
	for _, s := range subs {
		if taken(srv, routes, s.Match) {
			return fmt.Sprintf("has a subroute of path %s, which the VirtualServer already serves", displayMatch(s.Match))
		}
	}
	return ""
}

func taken(srv *model.Server, routes []nic.Route, m model.Match) bool {
	for _, l := range srv.Locations {
		if l.Match == m {
			return true
		}
	}
	for _, r := range routes {
		if r.Delegate == "" && r.Selector == nil && r.Match == m {
			return true
		}
	}
	return false
}

func displayMatch(m model.Match) string {
	switch m.Type {
	case model.Exact:
		return "=" + m.Path
	case model.Regex:
		return "~*^" + m.Path
	}
	return m.Path
}

// answer404 makes a delegating route's path answer 404, unless something
// else serves that path.
func (b *builder) answer404(srv *model.Server, vsRef model.ObjectRef, m model.Match, routes []nic.Route) {
	if !taken(srv, routes, m) {
		srv.Locations = append(srv.Locations, &model.Location{Match: m, Source: vsRef, Action: model.ReturnStatus(404)})
	}
}

// serveDelegated adds the locations of a VirtualServerRoute's subroutes.
func (b *virtualServerProcessor) serveDelegated(srv *model.Server, outer []string, vsRef model.ObjectRef, r nic.Route, t *nic.VirtualServerRoute, subs []nic.Route, host string) {
	inheritSnippet(subs, r.Snippet)
	b.inheritRoutePolicies(vsRef, r, t, subs)
	if !slices.Contains(srv.Sources, t.Ref) {
		srv.Sources = append(srv.Sources, t.Ref)
	}
	b.routeLocations(srv, outer, t.Ref, t.Namespace, t.Upstreams, subs, host)
}

// delegateSelected serves a routeSelector route with every
// VirtualServerRoute of ours of the host whose labels it selects, in the
// order of namespace/name, each checked for the route's path. One that is
// invalid for it, already used or whose subroutes take a path already
// served is left out, with a Problem; when none is left, the path answers
// 404.
func (b *virtualServerProcessor) delegateSelected(srv *model.Server, outer []string, vsRef model.ObjectRef, r nic.Route, host string, routes []nic.Route) {
	served := 0
	for _, vsr := range b.selected(r, host) {
		key := vsr.Namespace + "/" + vsr.Name
		ref := nic.VSRRef(vsr)
		if used := b.vsrUsed[key]; used != "" {
			b.problem(vsRef, model.ReasonInvalid, false, "route %s: VirtualServerRoute %s that routeSelector selects is already used by the route %s; left out",
				r.Match.Path, key, used)
			continue
		}
		t, problems, err := nic.TranslateVirtualServerRoute(vsr, host, &b.model.Config.Defaults, r.Match)
		b.problems = append(b.problems, problems...)
		if err != nil {
			// Invalid for this route; another route may select it.
			b.problem(ref, model.ReasonInvalid, false, "invalid for the route %s of VirtualServer %s (routeSelector): %v",
				r.Match.Path, vsRef.Namespace+"/"+vsRef.Name, err)
			b.problem(vsRef, model.ReasonInvalid, false, "route %s: VirtualServerRoute %s that routeSelector selects is invalid; left out", r.Match.Path, key)
			continue
		}
		subs := servedHere(t, r)
		if why := conflict(srv, routes, subs); why != "" {
			b.problem(vsRef, model.ReasonInvalid, false, "route %s: VirtualServerRoute %s that routeSelector selects %s; left out", r.Match.Path, key, why)
			continue
		}
		b.created[t.Ref] = vsr.CreationTimestamp
		b.vsrUsed[key] = host + r.Match.Path
		b.serveDelegated(srv, outer, vsRef, r, t, subs, host)
		served++
	}
	if served == 0 {
		b.problem(vsRef, model.ReasonInvalid, false, "route %s: no VirtualServerRoute of host %q that routeSelector selects (%s) is served; the route answers 404",
			r.Match.Path, displayHost(host), selectorString(r.Selector))
		b.answer404(srv, vsRef, r.Match, routes)
	}
}

// selected are the VirtualServerRoutes of ours of host whose labels the
// route's routeSelector selects, in any namespace (as in NGINX Ingress
// Controller), ordered by namespace/name.
// The VirtualServerRoutes are indexed by host once per build, so that
// many selector routes over many VirtualServerRoutes cost what their own
// host holds, not every VirtualServerRoute each.
func (b *virtualServerProcessor) selected(r nic.Route, host string) []*nicv1.VirtualServerRoute {
	if b.vsrsByHost == nil {
		b.vsrsByHost = map[string][]*nicv1.VirtualServerRoute{}
		for _, key := range slices.Sorted(maps.Keys(b.vsrsIn)) {
			vsr := b.vsrsIn[key]
			b.vsrsByHost[vsr.Spec.Host] = append(b.vsrsByHost[vsr.Spec.Host], vsr)
		}
	}
	var out []*nicv1.VirtualServerRoute
	for _, vsr := range b.vsrsByHost[host] {
		if r.Selects(vsr.Labels) &&
			nic.VirtualServerRouteClass.IsOurs(b.classes, vsr) {
			out = append(out, vsr)
		}
	}
	return out
}

// selectorString is a routeSelector as a label selector, "k=v,k2 in (a,b)".
func selectorString(sel labels.Selector) string { return sel.String() }

// inheritRoutePolicies gives the policies and errorPages of a delegating
// route r to the subroutes that have none of their own, as NGINX Ingress
// Controller does: all of the route's Policies go to a subroute without
// policies (each replacing the VirtualServer's of its kind), none to one
// with some; errorPages likewise. A route's Policy that is missing or
// invalid is also a Problem on the VirtualServer (the subroutes taking it
// answer 500), and a field no subroute takes is one too.
func (b *virtualServerProcessor) inheritRoutePolicies(vsRef model.ObjectRef, r nic.Route, t *nic.VirtualServerRoute, subs []nic.Route) {
	var policies, pages int
	for i := range subs {
		if len(r.Policies) > 0 && len(subs[i].Policies) == 0 {
			subs[i].Policies = r.Policies
			policies++
		}
		if r.ErrorPages != nil && subs[i].ErrorPages == nil {
			subs[i].ErrorPages = r.ErrorPages
			pages++
		}
	}
	vsr := t.Ref.Namespace + "/" + t.Ref.Name
	for _, f := range []struct {
		name  string
		set   bool
		taken int
	}{{"policies", len(r.Policies) > 0, policies}, {"errorPages", r.ErrorPages != nil, pages}} {
		if f.set && f.taken == 0 {
			b.problem(vsRef, model.ReasonUnsupported, false,
				"route %s: %s are not used by VirtualServerRoute %s: each of its subroutes has its own", r.Match.Path, f.name, vsr)
		}
	}
	if policies == 0 {
		return
	}
	for _, key := range r.Policies {
		if _, why := b.nicPolicy(key); why != "" {
			b.problem(vsRef, model.ReasonInvalid, false,
				"route %s: Policy %s %s; the subroutes of VirtualServerRoute %s that take the route's policies answer 500", r.Match.Path, key, why, vsr)
		}
	}
}
