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
	// Answers is how many answers (model.Choice.Answers) the location
	// has: target answer n is given by its named location
	// AnswerLocation(key, n). What they answer is in the nginx
	// configuration only.
	Answers int `json:"answers,omitempty"`
}

// ChoiceMatch is one match of a Choice.
type ChoiceMatch struct {
	Conditions []ChoiceCondition `json:"conditions"`
	Targets    []Target          `json:"targets"`
}

// ChoiceCondition compares one request attribute, ignoring ASCII case:
// kind is header, cookie, argument or variable.
type ChoiceCondition struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Value  string `json:"value"`
	Negate bool   `json:"negate,omitempty"`
}

// AnswerLocation is the named location that gives answer n (1-based) of
// the choice key: the access hook (causeway.balancer.access) goes there.
// key passed ValidateKey, whose characters need no quoting in nginx.
func AnswerLocation(key string, n int) string {
	return fmt.Sprintf("@causeway-choice-%s-%d", key, n)
}

// ChoiceOf is the payload of a location's choice.
func ChoiceOf(c *model.Choice) Backend {
	out := &Choice{Targets: targets(c.Default), Answers: len(c.Answers)}
	for _, m := range c.Matches {
		cm := ChoiceMatch{Targets: targets(m.Targets)}
		for _, cond := range m.Conditions {
			cm.Conditions = append(cm.Conditions, ChoiceCondition{Kind: string(cond.Kind), Name: cond.Name, Value: cond.Value, Negate: cond.Negate})
		}
		out.Matches = append(out.Matches, cm)
	}
	return Backend{Key: model.ChoiceKey(c), Endpoints: []Endpoint{}, Choice: out}
}

// model is the choice as the model states it.
func (c *Choice) model() *model.Choice {
	out := &model.Choice{Default: modelTargets(c.Targets)}
	// The payload has only the answers' number; what they answer is in
	// the nginx configuration.
	for range c.Answers {
		out.Answers = append(out.Answers, model.ChoiceAnswer{Return: &model.Return{}})
	}
	for _, m := range c.Matches {
		mm := model.ChoiceMatch{Targets: modelTargets(m.Targets)}
		for _, cond := range m.Conditions {
			mm.Conditions = append(mm.Conditions, model.Condition{Kind: model.ConditionKind(cond.Kind), Name: cond.Name, Match: model.MatchCaseless, Value: cond.Value, Negate: cond.Negate})
		}
		out.Matches = append(out.Matches, mm)
	}
	return out
}

func (c *Choice) validate(key string) error {
	check := func(ts []Target) error {
		for _, t := range ts {
			if t.Answer != 0 && t.Backend == "" {
				continue // model.Choice.Validate checks its range
			}
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
	if c.Answers < 0 {
		return errors.New("choice: a negative number of answers")
	}
	if err := c.model().Validate(); err != nil {
		return fmt.Errorf("choice: %w", err)
	}
	return nil
}
