package balancer

import (
	"errors"
	"fmt"

	"github.com/causeway/causeway/internal/model"
)

// Split is a location's split (model.Split): the first rule whose
// conditions all hold picks among its targets by weight, else the
// default targets do.
type Split struct {
	Rules   []Rule   `json:"rules,omitempty"`
	Targets []Target `json:"targets"`
	// Answers is how many answers (model.Split.Answers) the location
	// has: target answer n is given by its named location
	// AnswerLocation(key, n). What they answer is in the nginx
	// configuration only.
	Answers int `json:"answers,omitempty"`
	// Primary is a canary's primary backend (model.Split.Primary).
	Primary string `json:"primary,omitempty"`
	// Affinity is model.Split.DefaultAffinity: for Targets.
	Affinity bool `json:"affinity,omitempty"`
	// Headers are model.Split.Headers: the request header edits of the
	// targets whose Headers name one (split_headers.go).
	Headers [][]HeaderEdit `json:"headers,omitempty"`
}

// Rule is one rule of a Split.
type Rule struct {
	Conditions []Condition `json:"conditions"`
	Targets    []Target    `json:"targets"`
	// Affinity is model.SplitRule.Affinity.
	Affinity bool `json:"affinity,omitempty"`
}

// Condition compares one request attribute (model.Condition): kind is
// header, cookie, argument or variable; match is exact, caseless or
// regex.
type Condition struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Match  string `json:"match"`
	Value  string `json:"value"`
	Negate bool   `json:"negate,omitempty"`
}

// Target is a backend key, or an answer (1 to Split.Answers), and its
// weight.
type Target struct {
	Backend string `json:"backend,omitempty"`
	Answer  int    `json:"answer,omitempty"`
	Weight  int    `json:"weight"`
	// Headers is model.Target.Headers: 1 to len(Split.Headers), 0 for
	// none.
	Headers int `json:"headers,omitempty"`
}

// AnswerLocation is the named location that gives answer n (1-based) of
// the split key: the access hook (causeway.balancer.access) goes there.
// key passed ValidateKey, whose characters need no quoting in nginx.
func AnswerLocation(key string, n int) string {
	return fmt.Sprintf("@causeway-choice-%s-%d", key, n)
}

// SplitOf is the payload of a location's split.
func SplitOf(s *model.Split) Backend {
	out := &Split{Targets: targets(s.Default), Answers: len(s.Answers), Primary: s.Primary, Affinity: s.DefaultAffinity,
		Headers: headerSets(s.Headers)}
	for _, r := range s.Rules {
		pr := Rule{Targets: targets(r.Targets), Affinity: r.Affinity}
		for _, c := range r.Conditions {
			pr.Conditions = append(pr.Conditions, Condition{Kind: string(c.Kind), Name: c.Name, Match: string(c.Match), Value: c.Value, Negate: c.Negate})
		}
		out.Rules = append(out.Rules, pr)
	}
	return Backend{Key: s.Key(), Endpoints: []Endpoint{}, Split: out}
}

func targets(ts []model.Target) []Target {
	out := make([]Target, len(ts))
	for i, t := range ts {
		out[i] = Target{Backend: t.Backend, Answer: t.Answer, Weight: t.Weight, Headers: t.Headers}
	}
	return out
}

// model is the split as the model states it.
func (s *Split) model() *model.Split {
	out := &model.Split{Default: modelTargets(s.Targets), Primary: s.Primary, DefaultAffinity: s.Affinity,
		Headers: modelHeaderSets(s.Headers)}
	// The payload has only the answers' number; what they answer is in
	// the nginx configuration.
	for range s.Answers {
		out.Answers = append(out.Answers, model.Answer{Return: &model.Return{}})
	}
	for _, r := range s.Rules {
		mr := model.SplitRule{Targets: modelTargets(r.Targets), Affinity: r.Affinity}
		for _, c := range r.Conditions {
			mr.Conditions = append(mr.Conditions, model.Condition{Kind: model.ConditionKind(c.Kind), Name: c.Name,
				Match: model.MatchKind(c.Match), Value: c.Value, Negate: c.Negate})
		}
		out.Rules = append(out.Rules, mr)
	}
	return out
}

func modelTargets(ts []Target) []model.Target {
	out := make([]model.Target, len(ts))
	for i, t := range ts {
		out[i] = model.Target{Backend: t.Backend, Answer: t.Answer, Weight: t.Weight, Headers: t.Headers}
	}
	return out
}

func (s *Split) validate(key string) error {
	check := func(ts []Target) error {
		for _, t := range ts {
			if t.Answer != 0 && t.Backend == "" {
				continue // model.Split.Validate checks its range
			}
			if err := ValidateKey(t.Backend); err != nil {
				return fmt.Errorf("split: %w", err)
			}
			if t.Backend == key {
				return errors.New("split: a split cannot name itself")
			}
		}
		return nil
	}
	for _, r := range s.Rules {
		if err := check(r.Targets); err != nil {
			return err
		}
	}
	if err := check(s.Targets); err != nil {
		return err
	}
	if s.Answers < 0 {
		return errors.New("split: a negative number of answers")
	}
	if s.Primary != "" {
		if err := ValidateKey(s.Primary); err != nil {
			return fmt.Errorf("split: primary: %w", err)
		}
	}
	if err := s.model().Validate(); err != nil {
		return fmt.Errorf("split: %w", err)
	}
	return nil
}
