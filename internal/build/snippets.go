package build

import (
	"slices"

	"github.com/causeway/causeway/internal/frontend/configmap"
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/snippet"
)

// Why the build refuses a snippet it could read, for the annotations and
// the snippet fields of VirtualServers and VirtualServerRoutes alike.
const (
	snippetsOff      = "the ConfigMap's allow-snippet-annotations is false (the default)"
	needsHeadersMore = "uses more_set_headers or more_clear_headers, and nginx's headers-more module (Debian's libnginx-mod-http-headers-more-filter) is not installed"
	answersAhead     = "answers requests (return or a redirecting rewrite) ahead of the authentication, address lists or limits of these paths, which it would bypass"
)

// snippets applies an Ingress's snippet annotations, or refuses them: all
// of them while the ConfigMap's allow-snippet-annotations is false, and
// each one that needs the missing headers-more module or that could
// answer ahead of the path's access control. A refused snippet is left
// out whole; the Ingress is served without it.
func (b *builder) snippets(t *ingress.Translation) {
	s := &t.Annotations.Snippets
	if len(s.Keys) == 0 && t.Annotations.ModSecurity == nil {
		return
	}
	a := &t.Annotations
	b.problems = append(b.problems, a.GateSnippets(t.Ref, b.model.Config.AllowSnippetAnnotations)...)
	refuse := func(name, why string) {
		key := b.opts.AnnotationsPrefix + "/" + name
		denies := slices.Contains(a.Snippets.Denying, key)
		if denies {
			a.FailClosed = append(a.FailClosed, key)
		}
		b.problem(t.Ref, model.ReasonInvalidAnnotation, false, "annotation %s %s; the whole snippet is refused and %s", key, why, annotations.RefusedSnippet(denies))
	}
	for _, sn := range []struct {
		name string
		dst  **model.Snippet
	}{{"configuration-snippet", &a.Location.Snippet}, {"server-snippet", &a.Server.Snippet}} {
		if (*sn.dst).UsesHeadersMore() && !b.opts.HeadersMoreAvailable {
			refuse(sn.name, needsHeadersMore)
			*sn.dst = nil
		}
	}
	// The ConfigMap's global-auth-url is added to the paths later (see
	// globalAuth); any path of the Ingress may get it.
	globalAuth := b.model.Config.GlobalAuth != nil && !a.NoGlobalAuth
	if loc := a.Location.Snippet; loc.Answers() && (protectedPolicy(&a.Location) || globalAuth || len(b.model.Config.BlockCIDRs) > 0) {
		refuse("configuration-snippet", answersAhead)
		a.Location.Snippet = nil
	}
}

// protectedPolicy reports whether a policy checks requests in nginx's
// access phases (basic auth, external auth, address lists, limits), which a snippet's
// return would run ahead of.
func protectedPolicy(p *model.Policy) bool {
	return p != nil && (p.BasicAuth != nil || p.ExternalAuth != nil || p.Access != nil || p.Limits != nil)
}

// serverSnippet returns the snippet a host keeps: none when it answers
// requests while a path of the host is protected or closed (503), since
// the server's rewrite phase runs before every location's checks. what
// names the snippet (the annotation, or a VirtualServer's field) and
// reason is the Problem's.
func (b *builder) serverSnippet(srv *model.Server, s *model.Snippet, owner model.ObjectRef, what, reason string) *model.Snippet {
	if !s.Answers() {
		return s
	}
	protected := len(b.model.Config.BlockCIDRs) > 0
	for _, l := range append(srv.Locations[:len(srv.Locations):len(srv.Locations)], srv.Default) {
		if l != nil && (protectedPolicy(l.Policy) || l.Action.Return != nil && l.Action.Return.Status == 503) {
			protected = true
		}
	}
	if protected {
		b.problem(owner, reason, false, "%s answers requests (return or a redirecting rewrite) for host %q ahead of "+
			"the authentication, address lists, limits or closed paths of the host, which it would bypass; the whole snippet is refused", what, srv.Host)
		return nil
	}
	return s
}

// configSnippets applies the ConfigMap's http-snippet, server-snippet and
// location-snippet, or refuses each with a Problem on the ConfigMap:
// without allow-snippet-annotations, without the headers-more module for
// more_*, and always when it could answer a request, since it would run
// ahead of every path's access checks.
func (b *builder) configSnippets() {
	c := &b.model.Config
	cm := b.configMaps[b.opts.ConfigMap]
	if cm == nil {
		c.HTTPSnippet, c.ServerSnippet, c.LocationSnippet = nil, nil, nil
		return
	}
	ref := configMapObject(cm)
	// gone are the variables of the http-snippet's maps once it is
	// refused: no other snippet may read them.
	var gone []string
	for _, s := range []struct {
		key string
		dst **model.Snippet
	}{{"http-snippet", &c.HTTPSnippet}, {"server-snippet", &c.ServerSnippet}, {"location-snippet", &c.LocationSnippet}} {
		var why string
		switch sn := *s.dst; {
		case sn == nil:
			continue
		case sn.Reads(gone) != "":
			why = "it reads $" + sn.Reads(gone) + ", which the refused http-snippet's map defines"
		case !c.AllowSnippetAnnotations:
			why = "allow-snippet-annotations is false (the default)"
		case sn.UsesHeadersMore() && !b.opts.HeadersMoreAvailable:
			why = "it uses more_set_headers or more_clear_headers, and nginx's headers-more module is not installed"
		case sn.Answers():
			why = "it answers requests (return or a redirecting rewrite), which would run ahead of the access checks of every path"
		default:
			continue
		}
		if snippet.Denies(cm.Data[s.key]) {
			// Meant to refuse requests: serving every path without it
			// would let those requests in.
			c.FailClosed = append(c.FailClosed, s.key)
			b.problem(ref, model.ReasonInvalidConfig, false, "key %q is refused: %s; it refuses requests, so every path of every Ingress "+
				"and every route of every VirtualServer answers 503 rather than being served without it", s.key, why)
		} else {
			b.problem(ref, model.ReasonInvalidConfig, false, "key %q is refused: %s; nothing of it is applied", s.key, why)
		}
		if s.key == "http-snippet" {
			for _, m := range (*s.dst).Maps {
				gone = append(gone, m.Variable)
			}
		}
		*s.dst = nil
	}
	// Nor may an Ingress's (Ingresses are read after this).
	c.Defaults.SnippetVariables = slices.DeleteFunc(c.Defaults.SnippetVariables, func(v string) bool { return slices.Contains(gone, v) })
}

// configSnippetKeys are the ConfigMap's snippets, which apply to
// VirtualServers as to Ingresses.
var configSnippetKeys = []string{"server-snippet", "location-snippet"}

// configClosesRoutes reports whether a refused ConfigMap key closes
// VirtualServer and VirtualServerRoute routes, as it closes every Ingress
// path: a snippet that denies, or a block list (both apply at nginx's http
// or server level, to every route). The ConfigMap's other fail-closed keys
// (global-auth-url, whitelist-source-range ...) are left to the Ingresses
// they apply to.
func (b *builder) configClosesRoutes() bool {
	return slices.ContainsFunc(b.model.Config.FailClosed, func(k string) bool {
		return slices.Contains(configSnippetKeys, k) || slices.Contains(configmap.HTTPLevelKeys, k)
	})
}
