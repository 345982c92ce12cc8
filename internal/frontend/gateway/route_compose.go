package gateway

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Entry is one match of one rule of one route.
type Entry struct {
	Route *RouteRules
	Rule  *Rule
	Match *Match
}

// ComparePrecedence orders two matches by the spec's precedence: the
// route's hostname first (RouteRules.Rank), then (HTTPRouteRule.Matches)
// an Exact path, then the longest prefix, then a
// method match, then the most header matches, then the most query
// parameter matches; on a tie across routes the oldest route, then
// "namespace/name"; within a route the first rule, then the first match.
// Regular expression paths, whose precedence the spec leaves to the
// implementation, come after Exact and Prefix paths, longest first. It
// returns a negative number when a goes first.
func ComparePrecedence(a, b Entry) int {
	rank := func(t model.PathType) int {
		switch t {
		case model.Exact:
			return 0
		case model.Prefix:
			return 1
		}
		return 2
	}
	am, bm := a.Match, b.Match
	if c := cmp.Compare(a.Route.Rank, b.Route.Rank); c != 0 {
		return c
	}
	if c := cmp.Compare(rank(am.Path.Type), rank(bm.Path.Type)); c != 0 {
		return c
	}
	if c := cmp.Compare(len(bm.Path.Path), len(am.Path.Path)); c != 0 {
		return c
	}
	if am.Method != bm.Method {
		if am.Method {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(bm.Headers, am.Headers); c != 0 {
		return c
	}
	if c := cmp.Compare(bm.Queries, am.Queries); c != 0 {
		return c
	}
	if a.Route != b.Route {
		if c := a.Route.Created.Compare(b.Route.Created); c != 0 {
			return c
		}
		return strings.Compare(a.Route.Ref.Namespace+"/"+a.Route.Ref.Name, b.Route.Ref.Namespace+"/"+b.Route.Ref.Name)
	}
	if c := cmp.Compare(a.Rule.Index, b.Rule.Index); c != 0 {
		return c
	}
	return cmp.Compare(matchIndex(a), matchIndex(b))
}

func matchIndex(e Entry) int {
	for i := range e.Rule.Matches {
		if &e.Rule.Matches[i] == e.Match {
			return i
		}
	}
	return 0
}

// PathEntries are the matches that may serve the requests of one
// location, in precedence order.
type PathEntries struct {
	Path    model.Match
	Entries []Entry
}

// covers reports whether the requests of location path l may be those of
// match path m: the same path, or (m a prefix) a path below m. nginx
// sends a request to the location of its most specific path; the
// entries of shorter prefixes that also match it follow, so a request
// whose conditions fail there falls back as the spec says.
func covers(m, l model.Match) bool {
	if m == l {
		return true
	}
	if m.Type != model.Prefix || l.Type == model.Regex {
		return false
	}
	return m.Path == "/" || l.Path == m.Path || strings.HasPrefix(l.Path, m.Path+"/")
}

// Compose gathers the matches of routes (those attached to one listener
// and host) into locations: one per distinct path, each with every
// match that may serve its requests in precedence order.
func Compose(routes []*RouteRules) []PathEntries {
	var all []Entry
	paths := map[model.Match]bool{}
	var order []model.Match
	for _, r := range routes {
		for i := range r.Rules {
			rule := &r.Rules[i]
			for j := range rule.Matches {
				m := &rule.Matches[j]
				all = append(all, Entry{Route: r, Rule: rule, Match: m})
				if !paths[m.Path] {
					paths[m.Path] = true
					order = append(order, m.Path)
				}
			}
		}
	}
	slices.SortStableFunc(all, ComparePrecedence)
	slices.SortFunc(order, func(a, b model.Match) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(string(a.Type), string(b.Type)))
	})
	var out []PathEntries
	for _, p := range order {
		pe := PathEntries{Path: p}
		for _, e := range all {
			if covers(e.Match.Path, p) {
				pe.Entries = append(pe.Entries, e)
			}
		}
		out = append(out, pe)
	}
	return out
}

// RouteListener is what a location's answers need of the listener that
// serves it.
type RouteListener struct {
	// Owner names the split of each location with Host (model.Split's
	// Source): the Gateway.
	Owner model.ObjectRef
	// Name is the listener's (sectionName), Host the host served.
	Name, Host string
	// Port is the listener's port as clients see it; HTTPS its protocol.
	Port  int
	HTTPS bool
	// BackendClientCert is the key of the model.ProxySecret holding the
	// Gateway's client certificate for backends (Gateway.BackendClientCert),
	// presented where a location speaks TLS to its backends; "" for none.
	BackendClientCert string
}

// Location is the model location of pe on listener l. Its policy is the
// first entry's rule's: an entry of a rule whose filters differ is left
// out with a PartiallyInvalid Problem on its route, as the model applies
// one policy to a location. The entries are the rules of the location's
// split, in order, up to the first without conditions, which is its
// default; without one, the default answers 404 (the spec: no match).
func (pe PathEntries) Location(l RouteListener) (*model.Location, []model.Problem) {
	var problems []model.Problem
	drop := func(e Entry, why string) {
		problems = append(problems, model.Problem{Object: e.Route.Ref, Reason: routeReasonUnsupportedValue,
			Condition: routeCondition(routeCondPartiallyInvalid, routeReasonUnsupportedValue),
			Message:   fmt.Sprintf("spec.rules[%d] on %s%s: %s; the match is left out there", e.Rule.Index, l.Host, pe.Path.Path, why)})
	}
	if len(pe.Entries) == 0 {
		return nil, nil
	}
	first := pe.Entries[0]
	loc := &model.Location{Match: pe.Path, Policy: first.Rule.Policy, Source: first.Route.Ref}
	split := &model.Split{Source: l.Owner, Route: l.Name + " " + l.Host + " " + string(pe.Path.Type) + " " + pe.Path.Path}
	answers := map[string]int{}
	answer := func(a model.Answer) int {
		k := fmt.Sprintf("%#v %#v", a.Return, a.Redirect)
		if a.Redirect != nil {
			k = fmt.Sprintf("redirect %d %s %v", a.Redirect.Code, a.Redirect.Template.String(), a.Redirect.Prefix)
		}
		if i, ok := answers[k]; ok {
			return i
		}
		split.Answers = append(split.Answers, a)
		answers[k] = len(split.Answers) - 1
		return answers[k]
	}
	var lt locationTLS
	headers := splitHeaders{split: split}
	targets := func(e Entry) []model.Target {
		r := e.Rule
		if r.Redirect != nil {
			return []model.Target{model.AnswerTarget(answer(model.Answer{Redirect: r.Redirect.Model(l.Port, l.HTTPS, e.Match.Path)}), 1)}
		}
		var ts []model.Target
		for _, t := range r.Targets {
			if t.Backend != nil {
				if why := lt.admit(t); why != "" {
					problems = append(problems, model.Problem{Object: e.Route.Ref, Reason: model.ReasonInvalid,
						Message: fmt.Sprintf("spec.rules[%d] on %s%s: %s", r.Index, l.Host, pe.Path.Path, why)})
					if t.Weight > 0 {
						ts = append(ts, model.AnswerTarget(answer(model.Answer{Return: &model.Return{Status: failClosedStatus}}), t.Weight))
					}
					continue
				}
				ts = append(ts, model.Target{Backend: t.Backend.Key(), Weight: t.Weight, Headers: headers.index(t.Headers)})
			} else if t.Weight > 0 {
				ts = append(ts, model.AnswerTarget(answer(model.Answer{Return: &model.Return{Status: t.Status}}), t.Weight))
			}
		}
		return ts
	}
	hasDefault := false
	for _, e := range pe.Entries {
		if e.Rule.Redirect == nil && !reflect.DeepEqual(e.Rule.Policy, loc.Policy) ||
			!reflect.DeepEqual(e.Rule.Mirrors, first.Rule.Mirrors) {
			drop(e, "its filters, timeouts or retry differ from those of "+first.Route.Ref.String()+
				fmt.Sprintf(" spec.rules[%d], which the location applies", first.Rule.Index))
			continue
		}
		if len(e.Match.Conditions) == 0 {
			split.Default, split.DefaultAffinity = targets(e), e.Rule.Session != nil
			hasDefault = true
			break
		}
		if len(split.Rules) == model.MaxSplitRules {
			drop(e, fmt.Sprintf("more than %d matches with conditions share the path", model.MaxSplitRules))
			continue
		}
		split.Rules = append(split.Rules, model.SplitRule{Conditions: e.Match.Conditions, Targets: targets(e), Affinity: e.Rule.Session != nil})
	}
	if !hasDefault {
		split.Default = []model.Target{model.AnswerTarget(answer(model.Answer{Return: &model.Return{Status: 404}}), 1)}
	}
	if err := split.Validate(); err != nil {
		// Not expected: every part passed its grammar. Fail closed.
		problems = append(problems, model.Problem{Object: first.Route.Ref, Reason: model.ReasonInvalid,
			Message: fmt.Sprintf("%s%s: %v; the location answers 500", l.Host, pe.Path.Path, err)})
		loc.Action = model.ReturnStatus(500)
		return loc, problems
	}
	loc.Action = splitAction(split)
	loc.Policy = lt.policy(loc.Policy)
	if l.BackendClientCert != "" && lt.tls != nil {
		// lt.policy made the location's own copy.
		loc.Policy.UpstreamTLS.Secret = l.BackendClientCert
	}
	return loc, problems
}

// action is the location's action for split: the plain action when the
// split has no rule and one target, else a proxy through the split (its
// first backend's settings; none when every target answers).
func splitAction(s *model.Split) model.Action {
	if len(s.Rules) == 0 && len(s.Default) == 1 && len(s.Headers) == 0 {
		t := s.Default[0]
		if t.Answer == 0 {
			return model.ProxyTo(t.Backend)
		}
		a := s.Answers[t.Answer-1]
		if a.Redirect != nil {
			return model.Action{Redirect: a.Redirect}
		}
		return model.Action{Return: a.Return}
	}
	backend := ""
	if bs := s.Backends(); len(bs) > 0 {
		backend = bs[0]
	}
	return model.Action{Proxy: &model.Proxy{Backend: backend, Split: s}}
}
