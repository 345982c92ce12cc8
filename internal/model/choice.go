package model

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
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

// ChoiceAnswer is a redirect or a return a choice may pick instead of a
// backend: exactly one of Redirect and Return is set.
type ChoiceAnswer struct {
	Redirect *Redirect
	Return   *Return
	// Headers are added to a Return's response (not to a Redirect's),
	// instead of the response headers of the location's proxy.
	Headers []Header
}

// ChoiceMatch holds when all its conditions do.
type ChoiceMatch struct {
	Conditions []Condition
	Targets    []Target
}

// Target is a backend, or an answer, and its share of the requests, out
// of ChoiceWeightTotal; the weights of a target list sum to it.
type Target struct {
	Backend string
	// Answer, when not 0, makes the target Choice.Answers[Answer-1]
	// instead of a backend.
	Answer int
	Weight int
}

// AnswerTarget is the target of c.Answers[i].
func AnswerTarget(i, weight int) Target { return Target{Answer: i + 1, Weight: weight} }

// ConditionKind is what a condition reads of the request.
type ConditionKind string

// The kinds of condition, as NGINX Ingress Controller names them.
const (
	ConditionHeader   ConditionKind = "header"
	ConditionCookie   ConditionKind = "cookie"
	ConditionArgument ConditionKind = "argument"
	ConditionVariable ConditionKind = "variable"
)

// Condition compares one request attribute with a value, ignoring ASCII
// case (as nginx's map does); an absent attribute reads as "".
type Condition struct {
	Kind ConditionKind
	// Name is the header, cookie or argument name (ParseConditionName),
	// or the variable without "$" (one of ConditionVariables).
	Name string
	// Value is compared (ParseMatchValue); Negate holds when it differs.
	Value  string
	Negate bool
}

// Bounds of a choice.
const (
	ChoiceWeightTotal   = 100
	MaxChoiceMatches    = 32
	MaxChoiceConditions = 16
	MaxChoiceTargets    = 16
	MaxMatchValueLen    = 256
	// MaxChoiceAnswers: every target of every match and the default.
	MaxChoiceAnswers = MaxChoiceTargets * (MaxChoiceMatches + 1)
)

// ConditionVariables are the nginx variables a condition may read
// (NGINX Ingress Controller's list), without "$".
var ConditionVariables = map[string]bool{
	"args": true, "http2": true, "https": true, "remote_addr": true, "remote_port": true,
	"query_string": true, "request": true, "request_body": true, "request_uri": true,
	"request_method": true, "scheme": true,
}

var (
	conditionHeaderChars = newCharSet("-_")
	conditionNameChars   = newCharSet("_")
	matchValueChars      = printableExcept(`"\`)
)

// printableExcept is printable ASCII (space included) without the
// characters of except.
func printableExcept(except string) *charSet {
	var s charSet
	for c := 0x20; c < 0x7f; c++ {
		s[c] = !strings.ContainsRune(except, rune(c))
	}
	return &s
}

// ParseConditionName checks the name a condition of kind reads: a header
// of 1 to 64 letters, digits, "-" and "_" (read as nginx's $http_<name>);
// a cookie or argument of 1 to 64 letters, digits and "_" (NGINX Ingress
// Controller's grammar); a variable, written with its "$", from
// ConditionVariables. It returns the name the balancer reads (a variable
// without "$").
func ParseConditionName(kind ConditionKind, s string) (string, error) {
	switch kind {
	case ConditionHeader:
		return s, checkChars(s, "header name", MaxCanaryNameLen, conditionHeaderChars, "letters, digits, - and _")
	case ConditionCookie:
		return s, checkChars(s, "cookie name", MaxCanaryNameLen, conditionNameChars, "letters, digits and _")
	case ConditionArgument:
		return s, checkChars(s, "argument name", MaxCanaryNameLen, conditionNameChars, "letters, digits and _")
	case ConditionVariable:
		name, ok := strings.CutPrefix(s, "$")
		if !ok || !ConditionVariables[name] {
			return "", fmt.Errorf("variable %q is not one of $args, $http2, $https, $remote_addr, $remote_port, "+
				"$query_string, $request, $request_body, $request_uri, $request_method and $scheme", Truncate(s))
		}
		return name, nil
	}
	return "", fmt.Errorf("unknown condition kind %q", kind)
}

// ParseMatchValue reads a condition's value: a leading "!" negates it;
// the rest is 0 to 256 printable ASCII characters without '"' and '\'
// (NGINX Ingress Controller escapes those for nginx's map; the balancer
// compares the value itself, so no escape is needed, and none is taken).
func ParseMatchValue(s string) (value string, negate bool, err error) {
	value, negate = strings.CutPrefix(s, "!")
	if len(value) > MaxMatchValueLen {
		return "", false, fmt.Errorf("a match value is at most %d characters", MaxMatchValueLen)
	}
	for i := 0; i < len(value); i++ {
		if !matchValueChars[value[i]] {
			return "", false, fmt.Errorf(`a match value holds printable ASCII characters other than " and \, not %s`, describeByte(value[i]))
		}
	}
	return value, negate, nil
}

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
			if err := cond.validate(); err != nil {
				return fmt.Errorf("match %d condition %d: %w", i, j, err)
			}
		}
		if err := validateTargets(m.Targets, len(c.Answers)); err != nil {
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
	return validateTargets(c.Default, len(c.Answers))
}

// HasAnswers reports whether the choice may pick an answer.
func (c *Choice) HasAnswers() bool { return len(c.Answers) > 0 }

// AnswersOnly reports whether p proxies to nothing: every target of its
// choice is an answer, so it names no backend.
func (p *Proxy) AnswersOnly() bool { return p.Backend == "" && p.Choice != nil }

func (c *Condition) validate() error {
	name := c.Name
	if c.Kind == ConditionVariable {
		name = "$" + name
	}
	if _, err := ParseConditionName(c.Kind, name); err != nil {
		return err
	}
	_, _, err := ParseMatchValue(c.Value)
	return err
}

func validateTargets(ts []Target, answers int) error {
	if len(ts) == 0 || len(ts) > MaxChoiceTargets {
		return fmt.Errorf("want 1 to %d targets, got %d", MaxChoiceTargets, len(ts))
	}
	sum := 0
	for _, t := range ts {
		if (t.Backend == "") == (t.Answer == 0) || t.Answer < 0 || t.Answer > answers {
			return fmt.Errorf("target %q answer %d: want a backend or one of the %d answers", t.Backend, t.Answer, answers)
		}
		if t.Weight < 0 || t.Weight > ChoiceWeightTotal {
			return fmt.Errorf("target %q weight %d: want a weight of 0 to %d", t.Backend, t.Weight, ChoiceWeightTotal)
		}
		sum += t.Weight
	}
	if sum != ChoiceWeightTotal {
		return fmt.Errorf("the weights sum to %d, want %d", sum, ChoiceWeightTotal)
	}
	return nil
}

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
