package render

import (
	"fmt"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// selectChoice makes a dynamic-mode location whose proxy has a choice
// (a VirtualServer route's splits and matches) name the choice instead of
// its backend: the balancer applies the matches and weights from the
// pushed state (see balancer.ChoiceOf), so they never appear here and
// changing them needs no reload. The location gets the Lua hooks any
// target's method needs. Without the Lua balancer Proxy.Backend serves
// every request; the controller reports that.
func selectChoice(lv *locationView, p *model.Proxy, backends map[string]*model.Backend, lua bool) error {
	if p.Choice == nil || !lua {
		return nil
	}
	for _, key := range p.Choice.Backends() {
		var target locationView
		if err := selectBackend(&target, key, backends, true); err != nil {
			return err
		}
		lv.HeaderFilter = lv.HeaderFilter || target.HeaderFilter
		lv.LogHook = lv.LogHook || target.LogHook
		sharePool(lv, &target)
	}
	return nameKey(lv, model.ChoiceKey(p.Choice))
}

// answersOnly plans a location whose choice picks only answers: in
// dynamic mode it names the choice and proxies to the balancer, which
// finds no backend to pick (503) should the access hook not have handed
// the request to an answer; without the Lua balancer nothing can choose,
// so it answers 503 (the controller reports that).
func (sp *serverPlan) answersOnly(lv *locationView, l *model.Location) error {
	p := l.Action.Proxy
	if !sp.rc.lua {
		lv.Return = 503
		return sp.planPolicy(lv, l)
	}
	lv.Pass, lv.PassURL = "proxy_pass", "http://"+balancer.UpstreamName
	if err := nameKey(lv, model.ChoiceKey(p.Choice)); err != nil {
		return err
	}
	return sp.planPolicy(lv, l)
}

// A choice may pick an answer (a redirect or a return) instead of a
// backend. A balancer can only pick a peer, so such a location also gets
// the balancer's access hook (causeway.balancer.access): it runs at the
// end of the access phase, after the location's checks (deny, basic,
// digest and API key authentication, auth_request; the rate limits came
// before), picks once, and hands an answer to its named location
// (balancer.AnswerLocation), which answers without checking again; a
// backend it picked is kept for the balancer. The answers are in the
// configuration, so changing them reloads; their weights and matches are
// pushed state, so changing those does not. nginx's "satisfy any" skips
// the rest of the access phase, the hook included, once one check passes:
// the two are refused together.

// choiceAnswers adds the named locations of the answers of l's choice
// (once per server: a route can give several locations) and turns on
// lv's access hook.
func (sp *serverPlan) choiceAnswers(lv *locationView, l *model.Location) error {
	p := l.Action.Proxy
	if p == nil || p.Choice == nil || !p.Choice.HasAnswers() || !sp.rc.lua {
		return nil
	}
	if lv.Policy == nil {
		lv.Policy = &policyView{}
	}
	if lv.Policy.SatisfyAny {
		return fmt.Errorf("location %q: a choice that may answer cannot be checked with satisfy any, "+
			"which would skip its access hook", l.Match.Path)
	}
	lv.Policy.ChoiceHook = true
	key := model.ChoiceKey(p.Choice)
	if err := balancer.ValidateKey(key); err != nil {
		return err
	}
	for i, a := range p.Choice.Answers {
		name := balancer.AnswerLocation(key, i+1)
		if sp.choiceNamed[name] {
			continue
		}
		answer := *lv
		answer.Modifier, answer.Path, answer.Answer = "", "", ""
		answer.Pass, answer.PassURL, answer.HeaderFilter = "", "", false
		switch {
		case a.Return != nil:
			if err := planReturn(&answer, a.Return); err != nil {
				return err
			}
		case a.Redirect != nil:
			if err := planRedirect(&answer, a.Redirect); err != nil {
				return err
			}
		default:
			return fmt.Errorf("location %q: answer %d is neither a redirect nor a return", l.Match.Path, i)
		}
		// The checks ran in the location before the hook handed over.
		answer.Policy = withoutChecks(lv.Policy)
		answer.Policy.APIKey, answer.Policy.ChoiceHook = nil, false
		// A return's own headers, not the proxied route's response
		// headers, as NGINX Ingress Controller does.
		var err error
		if answer.Policy.ResponseHeaders, err = sp.responseHeaders(answer.Policy, l.Policy, a.Headers); err != nil {
			return err
		}
		if sp.choiceNamed == nil {
			sp.choiceNamed = map[string]bool{}
		}
		sp.choiceNamed[name] = true
		sp.v.Answers = append(sp.v.Answers, answerView{Name: name, Loc: answer})
	}
	return nil
}
