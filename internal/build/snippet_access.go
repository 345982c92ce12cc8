package build

import (
	"slices"

	"github.com/causeway/causeway/internal/model"
)

// Snippets' allow and deny directives (model.Snippet.Access) become the
// address lists of the locations they apply to, joined with the lists
// there already (model.And: a client gets in only when every list lets
// it), so render prints them as any address list and the rules that
// keep answers behind the checks see them.

// withSnippetAccess adds a location snippet's address lists to the
// policy of the locations it is on.
func withSnippetAccess(p *model.Policy) {
	if p != nil && p.Snippet != nil && p.Snippet.Access != nil {
		p.Access = model.And(p.Access, p.Snippet.Access)
	}
}

// restrictServer adds acc, the address lists of a snippet that applies
// to the whole of srv (what names it), to every location of srv and its
// default. A location whose own snippet could answer (a return below 400,
// a redirect) would answer ahead of the lists: it answers 503 instead,
// with a Problem on its object. Closed locations stay closed.
func (b *builder) restrictServer(srv *model.Server, acc *model.AccessList, what string) {
	if acc == nil {
		return
	}
	restrict := func(l *model.Location) *model.Location {
		if l == nil || l.Action.Return != nil && l.Action.Return.Status == 503 {
			return l
		}
		cp := *l // locations may be shared between servers (rules without a host)
		if cp.Policy != nil && cp.Policy.Snippet.Serves() {
			b.problem(l.Source, model.ReasonInvalidAnnotation, false, "host %q path %q: its snippet answers ahead of the allow and deny lines of %s, "+
				"which it would bypass; the path answers 503", displayHost(srv.Host), l.Match.Path, what)
			return &model.Location{Match: l.Match, Source: l.Source, Action: model.ReturnStatus(503)}
		}
		p := ownPolicy(&cp)
		p.Access = model.And(p.Access, acc)
		return &cp
	}
	for i, l := range srv.Locations {
		srv.Locations[i] = restrict(l)
	}
	srv.Default = restrict(srv.Default)
}

// globalSnippetAccess adds the address lists of the snippets that apply
// to every host (the ConfigMap's http-snippet, server-snippet and
// location-snippet, and VirtualServers' http-snippets) to every server.
func (b *builder) globalSnippetAccess() {
	c := &b.model.Config
	var acc *model.AccessList
	for _, s := range []*model.Snippet{c.HTTPSnippet, c.ServerSnippet, c.LocationSnippet} {
		if s != nil {
			acc = model.And(acc, s.Access)
		}
	}
	for _, h := range b.httpSnippets {
		acc = model.And(acc, h.Snippet.Access)
	}
	var closed []model.ClosedLocation
	if cm := b.configMaps[b.opts.ConfigMap]; cm != nil {
		for _, l := range c.ClosedLocations {
			l.Source = configMapObject(cm)
			closed = append(closed, l)
		}
	}
	for _, srv := range b.model.Servers {
		b.restrictServer(srv, acc, "the ConfigMap's or a VirtualServer's http-snippet")
		closeSnippetLocations(srv, closed)
	}
}

// closeSnippetLocations adds the deny-only locations of a refused server
// snippet to srv, once each, whoever else's they are: closing more is
// what a refused refusal asks.
func closeSnippetLocations(srv *model.Server, locs []model.ClosedLocation) {
	for _, l := range locs {
		if !slices.ContainsFunc(srv.Closed, func(c model.ClosedLocation) bool { return c.Modifier == l.Modifier && c.Path == l.Path }) {
			srv.Closed = append(srv.Closed, l)
		}
	}
}
