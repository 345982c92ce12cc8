package model

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Split picks, per request, what serves a location: the first rule whose
// conditions all hold picks among its targets by weight, else the
// default targets do. It is the one traffic-split mechanism of the model:
//   - ingress-nginx's canary Ingress is a split whose Primary is the main
//     Ingress's backend, with its precedence (header, then cookie, then
//     weight) as rules in that order (CanaryRule.Split);
//   - a VirtualServer route's matches are rules of conditions compared
//     ignoring case, and its splits are weighted targets, some of which
//     may be answers (a redirect or a return) instead of backends;
//   - a Gateway API route rule's matches (headers and query parameters,
//     exact or regex, and the method) are rules in the spec's precedence
//     order, each with its weighted backendRefs.
//
// The Lua balancer applies the rules and weights from pushed state, so a
// change of conditions, order or weights needs no reload; the location
// only names the split (Key). Proxy.Backend is the backend whose proxy
// settings and hooks the location uses (the Primary of a canary), or ""
// when every target is an answer (AnswersOnly).
type Split struct {
	// Source is the object whose rules split the location: the canary
	// Ingress, the VirtualServer (Route).
	Source ObjectRef
	// Route is the route of Source the split belongs to, "" for a canary
	// Ingress: one object may split several routes.
	Route string
	// Rules are tried in order; the first whose conditions all hold
	// picks among its targets.
	Rules []SplitRule
	// Default are the targets when no rule holds.
	Default []Target
	// DefaultAffinity is SplitRule.Affinity for the default targets.
	DefaultAffinity bool
	// Answers are what the targets that answer by themselves answer.
	// Unlike weights, they are in the nginx configuration: a change of
	// them reloads.
	Answers []Answer
	// Headers are the request header edits of backend targets that have
	// their own (Target.Headers; split_headers.go), applied to what the
	// location sends without them (its policy's edits, else the client's
	// headers). The edits are pushed state; the names they edit are
	// request header lines of the location, so a new name reloads.
	Headers []RequestHeaders
	// Primary, when set, makes the split ingress-nginx's canary of the
	// location's own backend (which it names): the split has exactly
	// two backends, Primary and the canary, and no answers. Before any
	// rule, a request whose affinity cookie names a peer of either
	// (sticky) backend stays there; a pick whose backend has no ready
	// endpoint goes to Primary; a regex the data plane fails to run
	// sends the request to Primary; and the requests the canary serves
	// are counted in its own metrics series.
	Primary string
}

// SplitRule holds when all its conditions do.
type SplitRule struct {
	Conditions []Condition
	Targets    []Target
	// Affinity keeps a client on the target it was on: a request whose
	// affinity cookie names a peer of one of the targets' (sticky)
	// backends goes to that target whatever the weights, even 0 (Gateway
	// API's session persistence over several backendRefs). Other
	// requests are drawn by weight.
	Affinity bool
}

// Answer is a redirect or a return a split may pick instead of a
// backend: exactly one of Redirect and Return is set.
type Answer struct {
	Redirect *Redirect
	Return   *Return
	// Headers are added to a Return's response (not to a Redirect's),
	// instead of the response headers of the location's proxy.
	Headers []Header
}

// Target is a backend, or an answer, and its weight: a target list
// shares its requests in proportion to the weights, which sum to 1 or
// more (a zero weight is never picked).
type Target struct {
	Backend string
	// Answer, when not 0, makes the target Split.Answers[Answer-1]
	// instead of a backend.
	Answer int
	Weight int
	// Headers, when not 0, edits the request's headers as
	// Split.Headers[Headers-1] says when this target's backend is picked.
	Headers int
}

// AnswerTarget is the target of s.Answers[i].
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

// MatchKind is how a condition compares.
type MatchKind string

// The comparisons.
const (
	// MatchExact compares the value byte for byte (ingress-nginx's
	// canary-by-header-value, Gateway API's Exact).
	MatchExact MatchKind = "exact"
	// MatchCaseless compares ignoring ASCII case (NGINX Ingress
	// Controller's matches, which nginx's map compares so).
	MatchCaseless MatchKind = "caseless"
	// MatchRegex holds when the attribute is present and the value, a
	// regular expression (ParseHeaderRegex: safe for PCRE and RE2 alike),
	// matches it anywhere, case-sensitively.
	MatchRegex MatchKind = "regex"
)

// Condition compares one request attribute with a value. An absent
// attribute reads as "" for MatchExact and MatchCaseless; it never
// matches a MatchRegex.
type Condition struct {
	Kind ConditionKind
	// Name is the header, cookie or argument name, or the variable
	// without "$" (one of ConditionVariables); see Condition.Validate.
	Name  string
	Match MatchKind
	// Value is compared (ParseMatchValue's grammar, or ParseHeaderRegex's
	// for MatchRegex); Negate holds when the comparison does not.
	Value  string
	Negate bool
}

// Bounds of a split.
const (
	MaxSplitRules      = 32
	MaxSplitConditions = 16
	MaxSplitTargets    = 16
	// MaxSplitWeight bounds one target's weight (Gateway API's bound; a
	// canary's weight total): a target list sums to at most
	// MaxSplitTargets times it.
	MaxSplitWeight   = 1000000
	MaxMatchValueLen = 256
	// MaxSplitAnswers: every target of every rule and the default.
	MaxSplitAnswers = MaxSplitTargets * (MaxSplitRules + 1)
	// MaxConditionNameLen bounds a header, cookie or argument name.
	MaxConditionNameLen = 64
	// MaxConditionRegexLen is ParseHeaderRegex's bound.
	MaxConditionRegexLen = maxRegexLen
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
	conditionCookieChars = newCharSet("-_.")
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

func checkChars(s, what string, max int, set *charSet, allowed string) error {
	if s == "" || len(s) > max {
		return fmt.Errorf("want a %s of 1 to %d %s", what, max, allowed)
	}
	for i := 0; i < len(s); i++ {
		if !set[s[i]] {
			return fmt.Errorf("%s must hold only %s, not %s", what, allowed, describeByte(s[i]))
		}
	}
	return nil
}

// ParseConditionName checks the name a condition of kind reads, as NGINX
// Ingress Controller writes it: a header of 1 to 64 letters, digits, "-"
// and "_" (read as nginx's $http_<name>); a cookie or argument of 1 to 64
// letters, digits and "_"; a variable, written with its "$", from
// ConditionVariables. It returns the name the balancer reads (a variable
// without "$"). Condition.Validate is the model's (wider) grammar.
func ParseConditionName(kind ConditionKind, s string) (string, error) {
	switch kind {
	case ConditionHeader:
		return s, checkChars(s, "header name", MaxConditionNameLen, conditionHeaderChars, "letters, digits, - and _")
	case ConditionCookie:
		return s, checkChars(s, "cookie name", MaxConditionNameLen, conditionNameChars, "letters, digits and _")
	case ConditionArgument:
		return s, checkChars(s, "argument name", MaxConditionNameLen, conditionNameChars, "letters, digits and _")
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
	return value, negate, checkMatchValue(value)
}

func checkMatchValue(value string) error {
	if len(value) > MaxMatchValueLen {
		return fmt.Errorf("a match value is at most %d characters", MaxMatchValueLen)
	}
	for i := 0; i < len(value); i++ {
		if !matchValueChars[value[i]] {
			return fmt.Errorf(`a match value holds printable ASCII characters other than " and \, not %s`, describeByte(value[i]))
		}
	}
	return nil
}

// Validate checks a condition, as the balancer's payload requires: a
// header name of 1 to 64 letters, digits, "-" and "_" (nginx's
// $http_<name> folds case and reads "-" as "_"); a cookie name of 1 to 64
// letters, digits, "-", "_" and "." ($cookie_<name>); an argument name of
// 1 to 64 letters, digits and "_" ($arg_<name>); a variable from
// ConditionVariables. The value is ParseMatchValue's grammar, or for
// MatchRegex ParseHeaderRegex's.
func (c *Condition) Validate() error {
	var err error
	switch c.Kind {
	case ConditionHeader:
		err = checkChars(c.Name, "header name", MaxConditionNameLen, conditionHeaderChars, "letters, digits, - and _")
	case ConditionCookie:
		err = checkChars(c.Name, "cookie name", MaxConditionNameLen, conditionCookieChars, "letters, digits, - _ and .")
	case ConditionArgument:
		err = checkChars(c.Name, "argument name", MaxConditionNameLen, conditionNameChars, "letters, digits and _")
	case ConditionVariable:
		_, err = ParseConditionName(ConditionVariable, "$"+c.Name)
	default:
		err = fmt.Errorf("unknown condition kind %q", c.Kind)
	}
	if err != nil {
		return err
	}
	switch c.Match {
	case MatchExact, MatchCaseless:
		return checkMatchValue(c.Value)
	case MatchRegex:
		_, err := ParseHeaderRegex(c.Value)
		return err
	}
	return fmt.Errorf("unknown match %q: want exact, caseless or regex", c.Match)
}

// Validate checks every field of a split, as the balancer's payload
// requires.
func (s *Split) Validate() error {
	if len(s.Rules) > MaxSplitRules {
		return fmt.Errorf("%d rules: at most %d", len(s.Rules), MaxSplitRules)
	}
	for i, r := range s.Rules {
		if len(r.Conditions) == 0 || len(r.Conditions) > MaxSplitConditions {
			return fmt.Errorf("rule %d: want 1 to %d conditions", i, MaxSplitConditions)
		}
		for j, cond := range r.Conditions {
			if err := cond.Validate(); err != nil {
				return fmt.Errorf("rule %d condition %d: %w", i, j, err)
			}
		}
		if err := validateTargets(r.Targets, len(s.Answers)); err != nil {
			return fmt.Errorf("rule %d: %w", i, err)
		}
	}
	if len(s.Answers) > MaxSplitAnswers {
		return fmt.Errorf("%d answers: at most %d", len(s.Answers), MaxSplitAnswers)
	}
	for i, a := range s.Answers {
		if (a.Redirect == nil) == (a.Return == nil) {
			return fmt.Errorf("answer %d: want exactly one of a redirect and a return", i)
		}
		if a.Redirect != nil && len(a.Headers) > 0 {
			return fmt.Errorf("answer %d: a redirect has no headers of its own", i)
		}
	}
	if err := validateTargets(s.Default, len(s.Answers)); err != nil {
		return err
	}
	if err := s.validateHeaders(); err != nil {
		return err
	}
	if s.Primary != "" {
		bs := s.Backends()
		if len(s.Answers) > 0 || len(s.Headers) > 0 || len(bs) != 2 || bs[0] != s.Primary && bs[1] != s.Primary {
			return fmt.Errorf("a canary of %q has exactly two backends, %q one of them, and no answers", s.Primary, s.Primary)
		}
	}
	return nil
}

func validateTargets(ts []Target, answers int) error {
	if len(ts) == 0 || len(ts) > MaxSplitTargets {
		return fmt.Errorf("want 1 to %d targets, got %d", MaxSplitTargets, len(ts))
	}
	sum := 0
	for _, t := range ts {
		if (t.Backend == "") == (t.Answer == 0) || t.Answer < 0 || t.Answer > answers {
			return fmt.Errorf("target %q answer %d: want a backend or one of the %d answers", t.Backend, t.Answer, answers)
		}
		if t.Weight < 0 || t.Weight > MaxSplitWeight {
			return fmt.Errorf("target %q weight %d: want a weight of 0 to %d", t.Backend, t.Weight, MaxSplitWeight)
		}
		sum += t.Weight
	}
	if sum < 1 {
		return fmt.Errorf("the weights sum to %d, want at least 1", sum)
	}
	return nil
}

// HasAnswers reports whether the split may pick an answer.
func (s *Split) HasAnswers() bool { return len(s.Answers) > 0 }

// AnswersOnly reports whether p proxies to nothing: every target of its
// split is an answer, so it names no backend.
func (p *Proxy) AnswersOnly() bool { return p.Backend == "" && p.Split != nil }

// Backends lists every backend the split may pick, in order, once each
// (answers are not backends).
func (s *Split) Backends() []string {
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
	for _, r := range s.Rules {
		add(r.Targets)
	}
	add(s.Default)
	return out
}

// Canary is the backend of a canary split (Primary set) other than its
// primary, "" for any other split.
func (s *Split) Canary() string {
	if s.Primary == "" {
		return ""
	}
	for _, b := range s.Backends() {
		if b != s.Primary {
			return b
		}
	}
	return ""
}

// maxSplitKeyLen is the balancer's limit on a backend key.
const maxSplitKeyLen = 256

// Key names the split in the balancer: the key the location selects in
// place of a backend's. It depends on what the split belongs to, never on
// its rules, targets or weights, so that changing those changes the
// pushed state and not the nginx configuration: for a canary, the canary
// Ingress and the two backends (one canary Ingress splits the locations
// of several main Ingresses); otherwise the source and the route.
// Readable when it fits the balancer's key grammar, a digest otherwise.
func (s *Split) Key() string {
	if s.Primary != "" {
		source := s.Source.Namespace + "/" + s.Source.Name
		if s.Route != "" {
			route := sha256.Sum256([]byte(s.Route))
			source += "." + hex.EncodeToString(route[:4])
		}
		return shortKey("split@", fmt.Sprintf("split@%s@%s@%s", source, s.Primary, s.Canary()))
	}
	route := sha256.Sum256([]byte(s.Route))
	return shortKey("choice@", fmt.Sprintf("choice@%s/%s.%s", s.Source.Namespace, s.Source.Name, hex.EncodeToString(route[:6])))
}

// shortKey is k, or prefix and k's digest when k is too long a key.
func shortKey(prefix, k string) string {
	if len(k) <= maxSplitKeyLen {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	return prefix + hex.EncodeToString(sum[:16])
}
