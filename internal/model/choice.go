package model

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Choice picks, per request, the backend of a location among several
// (a VirtualServer route's splits and matches): the first match whose
// conditions all hold chooses among its targets by weight, else the
// default targets do. Like a Canary, it is applied by the Lua balancer
// from pushed state, so a change of values, order or weights needs no
// reload; the location only names it (see ChoiceKey). Proxy.Backend is
// the backend whose proxy settings and hooks the location uses, or ""
// when every target is an answer (AnswersOnly).
type Choice struct {
	// Source is the VirtualServer (Route) whose route chooses.
	Source ObjectRef
	// Route is the route's path in Source.
	Route   string
	Matches []ChoiceMatch
	// Default are the targets when no match holds.
	Default []Target
	// Answers are what the targets that answer by themselves (a redirect
	// or a return) answer. Unlike weights, they are in the nginx
	// configuration: a change of them reloads.
	Answers []ChoiceAnswer
}

// ChoiceMatch holds when all its conditions do.
type ChoiceMatch struct {
	Conditions []Condition
	Targets    []Target
}

// ChoiceAnswer is an answer of a choice.
type ChoiceAnswer = Answer

// Bounds of a choice.
const (
	ChoiceWeightTotal   = 100
	MaxChoiceMatches    = 32
	MaxChoiceConditions = 16
	MaxChoiceTargets    = 16
	// MaxChoiceAnswers: every target of every match and the default.
	MaxChoiceAnswers = MaxChoiceTargets * (MaxChoiceMatches + 1)
)

// Validate checks every field of a choice, as the balancer's payload
// requires.
func (c *Choice) Validate() error {
	if len(c.Matches) > MaxChoiceMatches {
		return fmt.Errorf("%d matches: at most %d", len(c.Matches), MaxChoiceMatches)
	}
	for i, m := range c.Matches {
		if len(m.Conditions) == 0 || len(m.Conditions) > MaxChoiceConditions {
			return fmt.Errorf("match %d: want 1 to %d conditions", i, MaxChoiceConditions)
		}
		for j, cond := range m.Conditions {
			if err := cond.Validate(); err != nil {
				return fmt.Errorf("match %d condition %d: %w", i, j, err)
			}
		}
		if err := validateChoiceTargets(m.Targets, len(c.Answers)); err != nil {
			return fmt.Errorf("match %d: %w", i, err)
		}
	}
	if len(c.Answers) > MaxChoiceAnswers {
		return fmt.Errorf("%d answers: at most %d", len(c.Answers), MaxChoiceAnswers)
	}
	for i, a := range c.Answers {
		if (a.Redirect == nil) == (a.Return == nil) {
			return fmt.Errorf("answer %d: want exactly one of a redirect and a return", i)
		}
		if a.Redirect != nil && len(a.Headers) > 0 {
			return fmt.Errorf("answer %d: a redirect has no headers of its own", i)
		}
	}
	return validateChoiceTargets(c.Default, len(c.Answers))
}

// HasAnswers reports whether the choice may pick an answer.
func (c *Choice) HasAnswers() bool { return len(c.Answers) > 0 }

// Backends lists every backend the choice may pick, in order, once each
// (answers are not backends).
func (c *Choice) Backends() []string {
	var out []string
	seen := map[string]bool{}
	add := func(ts []Target) {
		for _, t := range ts {
			if t.Answer == 0 && !seen[t.Backend] {
				seen[t.Backend] = true
				out = append(out, t.Backend)
			}
		}
	}
	for _, m := range c.Matches {
		add(m.Targets)
	}
	add(c.Default)
	return out
}

// ChoiceKey names a location's choice in the balancer. It depends on the
// route only, never on its matches, targets or weights, so that changing
// those changes the pushed state and not the nginx configuration.
func ChoiceKey(c *Choice) string {
	route := sha256.Sum256([]byte(c.Route))
	k := fmt.Sprintf("choice@%s/%s.%s", c.Source.Namespace, c.Source.Name, hex.EncodeToString(route[:6]))
	if len(k) <= maxSplitKeyLen {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	return "choice@" + hex.EncodeToString(sum[:16])
}

func validateChoiceTargets(ts []Target, answers int) error {
	if err := validateTargets(ts, answers); err != nil {
		return err
	}
	sum := 0
	for _, t := range ts {
		if t.Weight > ChoiceWeightTotal {
			return fmt.Errorf("target %q weight %d: want a weight of 0 to %d", t.Backend, t.Weight, ChoiceWeightTotal)
		}
		sum += t.Weight
	}
	if sum != ChoiceWeightTotal {
		return fmt.Errorf("the weights sum to %d, want %d", sum, ChoiceWeightTotal)
	}
	return nil
}
