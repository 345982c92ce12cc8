package render

import (
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// selectSplit makes a dynamic-mode location whose proxy has a split
// name the split instead of its backend: the balancer applies the rules
// and weights from the pushed state (see balancer.SplitOf), so they never
// appear here and changing them needs no reload. The location gets the
// Lua hooks any target's method needs. Without the Lua balancer
// Proxy.Backend serves every request; the controller reports that.
func selectSplit(lv *locationView, p *model.Proxy, backends map[string]*model.Backend, lua bool) error {
	if p.Split == nil || !lua {
		return nil
	}
	for _, key := range p.Split.Backends() {
		var target locationView
		if err := selectBackend(&target, key, backends, true); err != nil {
			return err
		}
		lv.HeaderFilter = lv.HeaderFilter || target.HeaderFilter
		lv.LogHook = lv.LogHook || target.LogHook
		sharePool(lv, &target)
	}
	return nameKey(lv, p.Split.Key())
}

// sharePool makes a location whose backends keep idle connections
// differently (their own keepalive, or the ConfigMap's) keep its
// connections in the shared pool: a location proxies to one upstream.
// The controller reports it.
func sharePool(lv, target *locationView) {
	if target.PassURL != lv.PassURL {
		lv.PassURL = "http://" + balancer.UpstreamName
	}
}

// nameKey makes the location select key (a split or a choice) in the
// balancer.
func nameKey(lv *locationView, key string) error {
	if err := balancer.ValidateKey(key); err != nil {
		return err
	}
	q, err := Quote(key)
	if err != nil {
		return err
	}
	lv.Backend, lv.SelectKey = key, q
	return nil
}

// planCanaryMetrics gives a counted split location a second series, for
// the requests its canary serves: the location's labels with ingress-nginx's
// canary label, the canary's upstream name. The balancer's log hook (which
// knows the split's choice) picks the series, so the location gets it.
func (sp *serverPlan) planCanaryMetrics(lv *locationView, l *model.Location, own seriesSource) error {
	p := l.Action.Proxy
	if p == nil || p.Split == nil || p.Split.Primary == "" || !sp.rc.lua {
		return nil
	}
	src := own // the location's labels, with the canary's
	src.canary = true
	key := sp.rc.seriesKey(src)
	q, err := Quote(key)
	if err != nil {
		return err
	}
	lv.LogVars = append(lv.LogVars, logVar{Name: balancer.CanaryMetricsVariable, Value: q})
	lv.LogHook = true
	sp.rc.planned[key] = src
	return nil
}

// canaryLabel is the canary label of the series of the requests a split
// sends to canary: the canary's upstream name, ingress-nginx's
// "namespace-service-port".
func canaryLabel(rc *renderCtx, canary string) string {
	if b := rc.backends[canary]; b != nil {
		return b.Namespace + "-" + b.Service + "-" + b.Port
	}
	return strings.ReplaceAll(canary, "/", "-")
}

// answersOnly plans a location whose split picks only answers: in
// dynamic mode it names the split and proxies to the balancer, which
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
	if err := nameKey(lv, p.Split.Key()); err != nil {
		return err
	}
	return sp.planPolicy(lv, l)
}

// A split may pick an answer (a redirect or a return) instead of a
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

// splitAnswers adds the named locations of the answers of l's split
// (once per server: a route can give several locations) and turns on
// lv's access hook.
func (sp *serverPlan) splitAnswers(lv *locationView, l *model.Location) error {
	p := l.Action.Proxy
	if p == nil || p.Split == nil || !p.Split.HasAnswers() || !sp.rc.lua {
		return nil
	}
	if lv.Policy == nil {
		lv.Policy = &policyView{}
	}
	if lv.Policy.SatisfyAny {
		return fmt.Errorf("location %q: a split that may answer cannot be checked with satisfy any, "+
			"which would skip its access hook", l.Match.Path)
	}
	lv.Policy.ChoiceHook = true
	key := p.Split.Key()
	if err := balancer.ValidateKey(key); err != nil {
		return err
	}
	for i, a := range p.Split.Answers {
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
