package render

import "github.com/causeway/causeway/internal/model"

// This file renders add-header-inherit (model.HeaderInherit, nginx
// 1.29.3's add_header_inherit) on any nginx: a location repeats the
// response headers it inherits, or leaves them out, itself. The levels are
// the http level's headers (the ConfigMap's add-headers and HSTS, and the
// headers of the http-snippets and the ConfigMap's server-snippet, which
// Causeway repeats in every location) and the server's own (a
// VirtualServer's server-snippets); a location's own are its response
// headers, CORS, external authentication's cookie and its snippets'.

// headerScope says which inherited response headers a location repeats.
type headerScope struct{ http, server bool }

// noInheritHeader is the add_header line with an empty value, which sends
// nothing, that keeps a location without headers of its own from
// inheriting the http level's when its scope excludes them.
var noInheritHeader = headerLine{Name: `"Causeway-No-Inherit"`, Value: `""`}

// headerScope is the scope of a location under pol in this server: the
// server's mode decides whether the server level keeps the http level's
// headers (off: never; on: only when the server has none of its own), the
// location's whether it keeps the server level's (off: never; on: only
// when it has none of its own).
func (sp *serverPlan) headerScope(pol *model.Policy) headerScope {
	s := headerScope{http: true, server: true}
	if p := sp.srv.Policy; p != nil {
		switch p.HeaderInherit {
		case model.HeaderInheritOff:
			s.http = false
		case model.HeaderInheritOn:
			s.http = p.Snippet == nil || len(p.Snippet.AddHeaders) == 0
		}
	}
	if pol == nil {
		return s
	}
	switch pol.HeaderInherit {
	case model.HeaderInheritOff:
		return headerScope{}
	case model.HeaderInheritOn:
		if ownsHeaders(pol, sp.rc.m.Config.LocationSnippet) {
			return headerScope{}
		}
	}
	return s
}

// ownsHeaders reports whether a location under pol adds response headers
// of its own.
func ownsHeaders(pol *model.Policy, configSnippet *model.Snippet) bool {
	own := model.Join(configSnippet, pol.Snippet)
	return len(pol.ResponseHeaders) > 0 || pol.CORS != nil || pol.ExternalAuth != nil || own != nil && len(own.AddHeaders) > 0
}

// headerSnippets are sp.snippets(pol) without the add_header directives
// the location's scope leaves out.
func (sp *serverPlan) headerSnippets(pol *model.Policy) (server, own *model.Snippet) {
	server, own = sp.snippets(pol)
	scope := sp.headerScope(pol)
	if scope.http && scope.server {
		return server, own
	}
	c := &sp.rc.m.Config
	var srvOwn *model.Snippet
	if sp.srv.Policy != nil {
		srvOwn = sp.srv.Policy.Snippet
	}
	return model.Join(withoutAddHeaders(c.ServerSnippet, !scope.http), withoutAddHeaders(srvOwn, !scope.server)), own
}

// withoutAddHeaders is s without its add_header directives when drop is
// set.
func withoutAddHeaders(s *model.Snippet, drop bool) *model.Snippet {
	if s == nil || !drop || len(s.AddHeaders) == 0 {
		return s
	}
	cp := *s
	cp.AddHeaders = nil
	return &cp
}

// inherited are the http level's headers that a location of scope
// repeats after its own add_header lines (adds: it has some; own: the
// names it sets), or, when its scope leaves them out and it has none,
// the line that stops nginx inheriting them.
func (sp *serverPlan) inherited(scope headerScope, own []model.Header, adds bool) []headerLine {
	switch {
	case scope.http && adds:
		return sp.rc.inheritedHeaders(own)
	case scope.http:
		return nil // nginx inherits them
	case !adds && len(sp.rc.inheritedHeaders(nil)) > 0:
		return []headerLine{noInheritHeader}
	}
	return nil
}
