package model

import (
	"regexp"
	"strings"
)

// Matches reports whether the location matches a request path, following the
// Kubernetes Ingress rules: Exact compares the whole path case-sensitively;
// Prefix compares element-wise on "/", ignoring a trailing slash on either.
func (l *Location) Matches(path string) bool {
	m := l.Match
	switch m.Type {
	case Regex:
		re, err := regexp.Compile("(?i)^(?:" + m.Path + ")")
		return err == nil && re.MatchString(path)
	case Exact:
		return path == m.Path
	case StringPrefix:
		return strings.HasPrefix(path, m.Path)
	case Prefix:
		if m.Path == "/" {
			return strings.HasPrefix(path, "/")
		}
		return path == m.Path || strings.HasPrefix(path, m.Path+"/")
	}
	return false
}

// Match returns the location a request path is routed to: the longest
// matching path wins, and Exact beats Prefix on a tie. It returns nil when
// nothing matches. The renderer's nginx locations must agree with this
// function; integration tests compare the two.
//
// On a regex server (Server.Regex) the first location in order whose
// regular expression matches wins, as nginx tries regex locations.
func (s *Server) Match(path string) *Location {
	if s.Regex {
		for _, l := range s.Locations {
			if l.Matches(path) {
				return l
			}
		}
		return nil
	}
	if s.native() {
		return s.matchNative(path)
	}
	var best *Location
	for _, l := range s.Locations {
		if !l.Matches(path) {
			continue
		}
		lm, bm := l.Match, Match{}
		if best != nil {
			bm = best.Match
		}
		if best == nil || len(lm.Path) > len(bm.Path) ||
			(len(lm.Path) == len(bm.Path) && lm.Type == Exact && bm.Type != Exact) {
			best = l
		}
	}
	return best
}

// native reports whether the server's locations follow nginx's own order
// (a server of StringPrefix locations, from a VirtualServer) rather than
// the Ingress rules.
func (s *Server) native() bool {
	for _, l := range s.Locations {
		if l.Match.Type == StringPrefix {
			return true
		}
	}
	return false
}

// matchNative is nginx's location order: an Exact match; else the first
// Regex location in order that matches; else the longest StringPrefix.
func (s *Server) matchNative(path string) *Location {
	var best *Location
	for _, l := range s.Locations {
		if l.Match.Type == Exact && l.Matches(path) {
			return l
		}
	}
	for _, l := range s.Locations {
		if l.Match.Type == Regex && l.Matches(path) {
			return l
		}
	}
	for _, l := range s.Locations {
		if l.Match.Type == StringPrefix && l.Matches(path) && (best == nil || len(l.Match.Path) > len(best.Match.Path)) {
			best = l
		}
	}
	return best
}

// HostMatches reports whether a request host matches a server host: exact
// names compare equal (case-insensitively); "*.foo.com" matches exactly one
// extra DNS label; the catch-all matches everything.
func HostMatches(serverHost, host string) bool {
	host = strings.ToLower(host)
	switch {
	case serverHost == "":
		return true
	case strings.HasPrefix(serverHost, "*."):
		suffix := serverHost[1:] // ".foo.com"
		label, ok := strings.CutSuffix(host, suffix)
		return ok && label != "" && !strings.Contains(label, ".")
	default:
		return serverHost == host
	}
}
