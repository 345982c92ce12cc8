package build

import (
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Regex hosts. ingress-nginx turns every path of a host into a
// case-insensitive regular expression as soon as one Ingress of the host
// sets use-regex (or a rewrite-target that rewrites), whatever the other
// Ingresses of the host say: their Exact and Prefix paths become
// "^path" regexes too, and nginx tries them in order, longest path first.
// Causeway does the same, so that migrated Ingresses route as before.

// toRegex converts the locations of a host that has any regex location.
// A path that is not a valid regular expression (a Prefix "/a(" from an
// Ingress without use-regex) is left out with a Problem; two locations
// that become the same regex keep the older claim.
func (b *ingressProcessor) toRegex(srv *model.Server) {
	if !slices.ContainsFunc(srv.Locations, func(l *model.Location) bool { return l.Match.Type == model.Regex }) {
		return
	}
	srv.Regex = true
	seen := map[string]*model.Location{}
	out := srv.Locations[:0]
	for _, l := range srv.Locations {
		if l.Match.Type != model.Regex {
			path := b.written[l]
			if path == "" {
				path = l.Match.Path
			}
			if _, err := model.ParseRegex(path); err != nil {
				b.problem(l.Source, model.ReasonInvalid, false,
					"host %q is in regex mode (another Ingress sets use-regex), and path %q is not a valid regular expression: %v; left out",
					displayHost(srv.Host), path, err)
				continue
			}
			c := *l
			c.Match = model.Match{Type: model.Regex, Path: path}
			l = &c
		}
		if prev, dup := seen[l.Match.Path]; dup {
			if prev.Source != l.Source {
				b.problem(l.Source, model.ReasonCollision, false, "host %q path %q (as a regular expression) is already served by %s, %s",
					displayHost(srv.Host), l.Match.Path, prev.Source, b.whyFirst(prev.Source, l.Source))
			}
			continue
		}
		seen[l.Match.Path] = l
		out = append(out, l)
	}
	srv.Locations = out
}

// sortRegex orders regex locations as ingress-nginx does: longest path
// first, then by path in reverse byte order. nginx takes the first regex
// that matches.
func sortRegex(locs []*model.Location) {
	slices.SortStableFunc(locs, func(a, b *model.Location) int {
		if la, lb := len(a.Match.Path), len(b.Match.Path); la != lb {
			return lb - la
		}
		return strings.Compare(b.Match.Path, a.Match.Path)
	})
}
