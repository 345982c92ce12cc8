package nic

import (
	"fmt"
	"reflect"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// Choice is a route's splits and matches in upstream names: the first
// match whose conditions all hold chooses among its targets by weight,
// else Default does. The Lua balancer applies it from pushed state, so a
// change of values, order or weights needs no reload.
type Choice struct {
	Matches []ChoiceMatch
	Default []Weighted
}

// ChoiceMatch is one entry of a route's matches.
type ChoiceMatch struct {
	Conditions []model.Condition
	Targets    []Weighted
}

// Weighted is an upstream, or an answer, and its weight out of 100.
type Weighted struct {
	Upstream string
	// Answer, when set instead of Upstream, is a redirect or return
	// action (a return with its headers).
	Answer *Action
	Weight int
}

// weighted is a's target: its upstream, or a as an answer.
func weighted(a Action, w int) Weighted {
	if a.Upstream == "" {
		return Weighted{Answer: &a, Weight: w}
	}
	return Weighted{Upstream: a.Upstream, Weight: w}
}

// nicNameRe is NGINX Ingress Controller's grammar of cookie and argument
// names in conditions.
var nicNameRe = regexp.MustCompile(`^[_A-Za-z0-9]+$`)

// choice translates a route's splits and matches (NGINX Ingress
// Controller's rules: a match has conditions and exactly one of action
// and splits; a condition exactly one of header, cookie, argument and
// variable). It returns the action whose proxy settings apply (the
// first that proxies to an upstream; none when every action answers a
// redirect or return) and the choice.
func (t *translator) choice(field string, r *nicv1.Route, upstreams map[string]*Upstream) (Action, *Choice, bool, error) {
	out := &Choice{}
	var actions []Action
	var ok bool
	var err error
	if r.Action != nil {
		var a Action
		if a, ok, err = t.action(field+".action", r.Action, upstreams); err != nil || !ok {
			return Action{}, nil, false, err
		}
		actions = []Action{a}
		out.Default = []Weighted{weighted(a, 100)}
	} else if out.Default, actions, ok, err = t.splits(field+".splits", r.Splits, upstreams); err != nil || !ok {
		return Action{}, nil, false, err
	}
	for i, m := range r.Matches {
		mf := fmt.Sprintf("%s.matches[%d]", field, i)
		if len(m.Conditions) == 0 {
			return Action{}, nil, false, fmt.Errorf("%s must have at least one condition", mf)
		}
		if (m.Action == nil) == (len(m.Splits) == 0) {
			return Action{}, nil, false, fmt.Errorf("%s must have exactly one of action and splits", mf)
		}
		cm := ChoiceMatch{}
		for j, c := range m.Conditions {
			cond, ok, err := t.condition(fmt.Sprintf("%s.conditions[%d]", mf, j), c)
			if err != nil || !ok {
				return Action{}, nil, false, err
			}
			cm.Conditions = append(cm.Conditions, cond)
		}
		if m.Action != nil {
			a, ok, err := t.action(mf+".action", m.Action, upstreams)
			if err != nil || !ok {
				return Action{}, nil, false, err
			}
			actions = append(actions, a)
			cm.Targets = []Weighted{weighted(a, 100)}
		} else {
			var as []Action
			if cm.Targets, as, ok, err = t.splits(mf+".splits", m.Splits, upstreams); err != nil || !ok {
				return Action{}, nil, false, err
			}
			actions = append(actions, as...)
		}
		out.Matches = append(out.Matches, cm)
	}
	var proxies []Action
	for _, a := range actions {
		if a.Upstream != "" {
			proxies = append(proxies, a)
		}
	}
	if len(proxies) == 0 {
		// Every action answers by itself: nothing is proxied.
		return Action{}, out, true, nil
	}
	for _, a := range proxies[1:] {
		if !reflect.DeepEqual(a.Policy, proxies[0].Policy) {
			t.notYet(field + ": the rewritePath, requestHeaders and responseHeaders of the route's first action passing to an upstream apply to " +
				"every upstream it chooses; another action's differ and are not used")
			break
		}
	}
	return proxies[0], out, true, nil
}

// condition translates one condition. An error is NGINX Ingress
// Controller's Invalid; a value or name it accepts that Causeway's
// stricter grammar does not leaves the route out, reported.
func (t *translator) condition(field string, c nicv1.Condition) (model.Condition, bool, error) {
	n := 0
	var kind model.ConditionKind
	var name string
	for _, s := range []struct {
		kind model.ConditionKind
		v    string
	}{{model.ConditionHeader, c.Header}, {model.ConditionCookie, c.Cookie}, {model.ConditionArgument, c.Argument}, {model.ConditionVariable, c.Variable}} {
		if s.v != "" {
			n++
			kind, name = s.kind, s.v
		}
	}
	if n != 1 {
		return model.Condition{}, false, fmt.Errorf("%s must have exactly one of header, cookie, argument and variable", field)
	}
	nicValid := true
	switch kind {
	case model.ConditionHeader:
		nicValid = len(validation.IsHTTPHeaderName(name)) == 0
	case model.ConditionCookie, model.ConditionArgument:
		nicValid = nicNameRe.MatchString(name)
	}
	parsed, err := model.ParseConditionName(kind, name)
	if !nicValid || (err != nil && kind == model.ConditionVariable) {
		if err == nil {
			err = fmt.Errorf("not a valid %s name", kind)
		}
		return model.Condition{}, false, fmt.Errorf("%s.%s %q: %v", field, kind, model.Truncate(name), err)
	}
	if err != nil {
		t.notYet(fmt.Sprintf("%s.%s %q (%v); the route is left out", field, kind, model.Truncate(name), err))
		return model.Condition{}, false, nil
	}
	value, negate, err := model.ParseMatchValue(c.Value)
	if err != nil {
		t.notYet(fmt.Sprintf("%s.value %q (%v); the route is left out", field, model.Truncate(c.Value), err))
		return model.Condition{}, false, nil
	}
	return model.Condition{Kind: kind, Name: parsed, Match: model.MatchCaseless, Value: value, Negate: negate}, true, nil
}

// splits checks NGINX Ingress Controller's rules (at least two, weights
// 0 to 100 summing to 100, each a valid action) and returns the weighted
// upstreams with their actions.
func (t *translator) splits(field string, in []nicv1.Split, upstreams map[string]*Upstream) ([]Weighted, []Action, bool, error) {
	if len(in) < 2 {
		return nil, nil, false, fmt.Errorf("%s must have at least 2 splits", field)
	}
	if len(in) > model.MaxSplitTargets {
		t.notYet(fmt.Sprintf("%s: more than %d splits; the route is left out", field, model.MaxSplitTargets))
		return nil, nil, false, nil
	}
	sum := 0
	var out []Weighted
	var actions []Action
	for i, s := range in {
		if s.Weight < 0 || s.Weight > 100 {
			return nil, nil, false, fmt.Errorf("%s[%d].weight %d: want 0 to 100", field, i, s.Weight)
		}
		sum += s.Weight
		if s.Action == nil {
			return nil, nil, false, fmt.Errorf("%s[%d].action is required", field, i)
		}
		a, ok, err := t.action(fmt.Sprintf("%s[%d].action", field, i), s.Action, upstreams)
		if err != nil || !ok {
			return nil, nil, false, err
		}
		out = append(out, weighted(a, s.Weight))
		actions = append(actions, a)
	}
	if sum != 100 {
		return nil, nil, false, fmt.Errorf("%s: the weights sum to %d, want 100", field, sum)
	}
	return out, actions, true, nil
}
