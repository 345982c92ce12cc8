package model

import "strings"

// Matches reports whether the location matches a request path, following the
// Kubernetes Ingress rules: Exact compares the whole path case-sensitively;
// Prefix compares element-wise on "/", ignoring a trailing slash on either.
func (l *Location) Matches(path string) bool {
	switch l.Type {
	case Exact:
		return path == l.Path
	case Prefix:
		if l.Path == "/" {
			return strings.HasPrefix(path, "/")
		}
		return path == l.Path || strings.HasPrefix(path, l.Path+"/")
	}
	return false
}

// Match returns the location a request path is routed to: the longest
// matching path wins, and Exact beats Prefix on a tie. It returns nil when
// nothing matches. The renderer's nginx locations must agree with this
// function; integration tests compare the two.
func (s *Server) Match(path string) *Location {
	var best *Location
	for _, l := range s.Locations {
		if !l.Matches(path) {
			continue
		}
		if best == nil || len(l.Path) > len(best.Path) ||
			(len(l.Path) == len(best.Path) && l.Type == Exact && best.Type != Exact) {
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
