package balancer

import (
	"errors"
	"fmt"

	"github.com/causeway/causeway/internal/model"
)

// Choice is a location's choice among several backends (model.Choice):
// the first match whose conditions all hold picks among its targets by
// weight, else the default targets do.
type Choice struct {
	Matches []ChoiceMatch `json:"matches,omitempty"`
	Targets []Target      `json:"targets"`
}

// ChoiceMatch is one match of a Choice.
type ChoiceMatch struct {
	Conditions []Condition `json:"conditions"`
	Targets    []Target    `json:"targets"`
}

// Condition compares one request attribute, ignoring ASCII case: kind is
// header, cookie, argument or variable.
type Condition struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Value  string `json:"value"`
	Negate bool   `json:"negate,omitempty"`
}

// Target is a backend key and its weight out of model.ChoiceWeightTotal.
type Target struct {
	Backend string `json:"backend"`
	Weight  int    `json:"weight"`
}

// ChoiceOf is the payload of a location's choice.
func ChoiceOf(c *model.Choice) Backend {
	out := &Choice{Targets: targets(c.Default)}
	for _, m := range c.Matches {
		cm := ChoiceMatch{Targets: targets(m.Targets)}
		for _, cond := range m.Conditions {
			cm.Conditions = append(cm.Conditions, Condition{Kind: string(cond.Kind), Name: cond.Name, Value: cond.Value, Negate: cond.Negate})
		}
		out.Matches = append(out.Matches, cm)
	}
	return Backend{Key: model.ChoiceKey(c), Endpoints: []Endpoint{}, Choice: out}
}

func targets(ts []model.Target) []Target {
	out := make([]Target, len(ts))
	for i, t := range ts {
		out[i] = Target{Backend: t.Backend, Weight: t.Weight}
	}
	return out
}

// model is the choice as the model states it.
func (c *Choice) model() *model.Choice {
	out := &model.Choice{Default: modelTargets(c.Targets)}
	for _, m := range c.Matches {
		mm := model.ChoiceMatch{Targets: modelTargets(m.Targets)}
		for _, cond := range m.Conditions {
			mm.Conditions = append(mm.Conditions, model.Condition{Kind: model.ConditionKind(cond.Kind), Name: cond.Name, Value: cond.Value, Negate: cond.Negate})
		}
		out.Matches = append(out.Matches, mm)
	}
	return out
}

func modelTargets(ts []Target) []model.Target {
	out := make([]model.Target, len(ts))
	for i, t := range ts {
		out[i] = model.Target{Backend: t.Backend, Weight: t.Weight}
	}
	return out
}

func (c *Choice) validate(key string) error {
	check := func(ts []Target) error {
		for _, t := range ts {
			if err := ValidateKey(t.Backend); err != nil {
				return fmt.Errorf("choice: %w", err)
			}
			if t.Backend == key {
				return errors.New("choice: a choice cannot name itself")
			}
		}
		return nil
	}
	for _, m := range c.Matches {
		if err := check(m.Targets); err != nil {
			return err
		}
	}
	if err := check(c.Targets); err != nil {
		return err
	}
	if err := c.model().Validate(); err != nil {
		return fmt.Errorf("choice: %w", err)
	}
	return nil
}
