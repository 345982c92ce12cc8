package controller

import (
	"fmt"
	"sort"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// ReasonCanaryNeedsLua: the canary split is applied by the Lua balancer,
// which plain mode does not run; the main backend serves every request.
const ReasonCanaryNeedsLua = "CanaryNotApplied"

// splitsOf returns the splits the Model's locations name, one per split
// key, sorted: each is pushed as state, so that a change of rule or
// weight reaches nginx without a reload.
func splitsOf(m *model.Model) []balancer.Backend {
	seen := map[string]bool{}
	var out []balancer.Backend
	for _, srv := range m.Servers {
		for _, l := range srv.Locations {
			p := l.Action.Proxy
			var b balancer.Backend
			switch {
			case p != nil && p.Split != nil:
				b = balancer.SplitOf(p.Split)
			default:
				continue
			}
			if !seen[b.Key] {
				seen[b.Key] = true
				out = append(out, b)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// reportPlainCanaries tells each canary Ingress that plain mode cannot
// split its traffic.
func reportPlainCanaries(res *SyncResult) {
	if res == nil || res.Model == nil {
		return
	}
	var refs, answering []model.ObjectRef
	for _, srv := range res.Model.Servers {
		for _, l := range srv.Locations {
			switch p := l.Action.Proxy; {
			case p != nil && p.AnswersOnly():
				answering = append(answering, p.Split.Source)
			case p != nil && p.Split != nil:
				refs = append(refs, p.Split.Source)
			}
		}
	}
	for _, ref := range model.SortRefs(refs) {
		res.Problems = append(res.Problems, model.Problem{Object: ref, Reason: ReasonCanaryNeedsLua,
			Message: "canary releases, splits and matches need the Lua balancer (dynamic mode); the main backend serves every request"})
	}
	for _, ref := range model.SortRefs(answering) {
		res.Problems = append(res.Problems, model.Problem{Object: ref, Reason: ReasonCanaryNeedsLua,
			Message: "splits and matches need the Lua balancer (dynamic mode); a route whose every action is a redirect or return answers 503"})
	}
}

// reportSplit adds a problem for a split left out of the pushed state, on
// its canary Ingress and the main Ingress: the locations naming it answer
// 503 until it is pushed.
func reportSplit(res *SyncResult, key, reason, msg string) {
	seen := map[model.ObjectRef]bool{}
	for _, srv := range res.Model.Servers {
		for _, l := range srv.Locations {
			p := l.Action.Proxy
			var src model.ObjectRef
			what := "the canary split"
			switch {
			case p != nil && p.Split != nil && p.Split.Key() == key:
				src = p.Split.Source
			default:
				continue
			}
			if p.Split.Primary == "" {
				what = "the route's splits and matches"
			}
			for _, ref := range []model.ObjectRef{src, l.Source} {
				if !seen[ref] {
					seen[ref] = true
					res.Problems = append(res.Problems, model.Problem{Object: ref, Reason: reason,
						Message: fmt.Sprintf("%s %s is left out of the endpoint state, so its paths answer 503: %s", what, key, msg)})
				}
			}
		}
	}
}
