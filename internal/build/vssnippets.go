package build

import (
	"fmt"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

// This file applies the snippet fields of VirtualServers and
// VirtualServerRoutes (spec.http-snippets, spec.server-snippets,
// location-snippets) with the rules of the ConfigMap's http-snippet and
// the annotations server-snippet and configuration-snippet (snippets.go): the same grammar and allowlist (package snippet), the
// same switch (the ConfigMap's allow-snippet-annotations), refused without
// the headers-more module for more_*, and refused when they could answer
// ahead of an access check. A refused snippet is left out, unless its
// words deny (snippet.Denies): then what it applies to answers 503.

// vsSnippet says whether a snippet field applies, with a Problem on its
// object when it does not (once: subroutes share the location-snippets
// they inherit). guarded says that what it applies to has access checks
// an answering snippet would run ahead of; served and closed say what
// becomes of it without the snippet.
func (b *builder) vsSnippet(s *nic.Snippet, guarded bool, served, closed string) bool {
	outcome := served
	if s.Denies {
		outcome = "it refuses requests (deny, auth, limits, if or a return of 400 or more), so " + closed + " rather than being served without it"
	}
	var reason, msg string
	switch {
	case !b.model.Config.AllowSnippetAnnotations:
		reason, msg = model.ReasonUnsupported, fmt.Sprintf("%s is refused: %s; %s", s.Field, snippetsOff, outcome)
	case s.Err != nil:
		reason, msg = model.ReasonInvalid, fmt.Sprintf("%s: %v; the whole snippet is refused and %s", s.Field, s.Err, outcome)
	case s.Snippet.UsesHeadersMore() && !b.opts.HeadersMoreAvailable:
		reason, msg = model.ReasonInvalid, fmt.Sprintf("%s %s; the whole snippet is refused and %s", s.Field, needsHeadersMore, outcome)
	case guarded && s.Snippet.Answers():
		reason, msg = model.ReasonInvalid, fmt.Sprintf("%s %s; the whole snippet is refused and %s", s.Field, answersAhead, outcome)
	default:
		return true
	}
	if key := "snippet/" + s.Object.Key() + "/" + msg; !b.reported[key] {
		b.reported[key] = true
		b.problem(s.Object, reason, false, "%s", msg)
	}
	return false
}

// ownPolicy gives loc a Policy of its own to change, a copy of the one it
// may share with other locations, and returns it.
func ownPolicy(loc *model.Location) *model.Policy {
	p := &model.Policy{}
	if loc.Policy != nil {
		cp := *loc.Policy
		p = &cp
	}
	loc.Policy = p
	return p
}

// routeSnippet applies a route's location-snippets to its location, or
// refuses it: a refused one that denies makes the location answer 503.
func (b *builder) routeSnippet(loc *model.Location, s *nic.Snippet) {
	if s == nil {
		return
	}
	guarded := protectedPolicy(loc.Policy) || len(b.model.Config.BlockCIDRs) > 0
	switch {
	case b.vsSnippet(s, guarded, "the route is served without it", "the route answers 503"):
		p := ownPolicy(loc)
		p.Snippet = s.Snippet
		withSnippetAccess(p)
	case s.Denies:
		*loc = model.Location{Match: loc.Match, Source: loc.Source, Action: model.ReturnStatus(503)}
	}
}

// globalSnippets keeps spec.http-snippets of the VirtualServer serving
// srv for every host (globalSnippetAccess, foldHTTPSnippets), or refuses
// it: a refused one that denies closes the VirtualServer's own routes,
// not every host's.
func (b *virtualServerProcessor) globalSnippets(srv *model.Server) {
	t := b.vsServers[srv.Host]
	if t == nil {
		return
	}
	if s := t.HTTPSnippet; s != nil && s.Snippet != nil && len(s.Snippet.Maps) > 0 {
		b.problem(s.Object, model.ReasonInvalid, false, "%s: map is read only in the ConfigMap's http-snippet; the whole snippet is refused and %s",
			s.Field, "the VirtualServer is served without it")
		return
	}
	if s := t.HTTPSnippet; b.vsHostSnippet(srv, s) {
		b.httpSnippets = append(b.httpSnippets, s)
	}
}

// vsHostSnippet says whether a VirtualServer's snippet field that is not
// a route's applies; a refused one that denies closes every route of
// srv, the VirtualServer's host.
func (b *builder) vsHostSnippet(srv *model.Server, s *nic.Snippet) bool {
	if s == nil {
		return false
	}
	if !b.vsSnippet(s, false, "the VirtualServer is served without it", "every route of the VirtualServer answers 503") {
		if s.Denies {
			closeServer(srv)
		}
		return false
	}
	return true
}

// foldHTTPSnippets applies the ConfigMap's http-snippet, then the
// VirtualServers' http-snippets (by namespace and name, the order of NGINX
// Ingress Controller's files), to every host ahead of the ConfigMap's
// server-snippet. As at nginx's http level they reach every host; unlike
// it, a host's or location's own directive of the same kind adds to them
// rather than replacing them.
func (b *builder) foldHTTPSnippets() {
	c := &b.model.Config
	slices.SortFunc(b.httpSnippets, func(x, y *nic.Snippet) int { return strings.Compare(x.Object.Key(), y.Object.Key()) })
	s := c.HTTPSnippet
	for _, h := range b.httpSnippets {
		s = model.Join(s, h.Snippet)
	}
	c.ServerSnippet, c.HTTPSnippet = model.Join(s, c.ServerSnippet), nil
}

// vsServerSnippet applies spec.server-snippets to the VirtualServer's
// host, or refuses it: a refused one that denies closes every route.
func (b *builder) vsServerSnippet(srv *model.Server, t *nic.VirtualServer) {
	s := t.ServerSnippet
	if !b.vsHostSnippet(srv, s) {
		return
	}
	if sn := b.serverSnippet(srv, s.Snippet, s.Object, s.Field, model.ReasonInvalid); sn != nil {
		srv.Policy = &model.ServerPolicy{Snippet: sn, Source: s.Object}
		b.restrictServer(srv, sn.Access, "the VirtualServer's server-snippets")
	}
}

// inheritSnippet gives the subroutes of a delegating route that have no
// location-snippets of their own the route's, as NGINX Ingress Controller
// does.
func inheritSnippet(routes []nic.Route, s *nic.Snippet) {
	if s == nil {
		return
	}
	for i := range routes {
		if routes[i].Snippet == nil {
			routes[i].Snippet = s
		}
	}
}
