package model

import "fmt"

// CanaryRule is ingress-nginx's precedence: the header, then the cookie,
// then the weight. Every field is validated (see the Parse functions
// below); the zero rule sends nothing to the canary.
type CanaryRule struct {
	// Header names the request header that chooses (ParseCanaryName);
	// "" for none. With neither HeaderValue nor HeaderPattern, "always"
	// chooses the canary and "never" the main backend.
	Header string
	// HeaderValue, when set, chooses the canary when the header equals
	// it exactly (ParseCanaryHeaderValue); other values fall through.
	HeaderValue string
	// HeaderPattern, when set and HeaderValue is not, chooses the
	// canary when the header matches it anywhere, case-sensitively
	// (ParseHeaderRegex, safe for PCRE and RE2 alike).
	HeaderPattern string
	// Cookie names the cookie whose value "always" or "never" chooses
	// (ParseCanaryCookie); "" for none.
	Cookie string
	// Weight out of WeightTotal requests (those the header and cookie
	// left undecided) go to the canary: 0 <= Weight <= WeightTotal.
	Weight, WeightTotal int
}

// Bounds of a canary rule.
const (
	MaxCanaryNameLen        = 64
	MaxCanaryHeaderValueLen = 256
	// MaxCanaryPatternLen is ParseHeaderRegex's bound.
	MaxCanaryPatternLen = maxRegexLen
	// MaxCanaryWeightTotal bounds canary-weight-total: a million gives a
	// resolution of one request in a million.
	MaxCanaryWeightTotal = 1000000
	// DefaultCanaryWeightTotal is canary-weight-total's default.
	DefaultCanaryWeightTotal = 100
)

var (
	canaryHeaderChars = newCharSet("-_")
	canaryCookieChars = newCharSet("-_.")
	// canaryValueChars are ingress-nginx's "basic characters", which it
	// requires of canary-by-header-value.
	canaryValueChars = newCharSet("-._~/:")
)

// ParseCanaryHeader checks canary-by-header: 1 to 64 ASCII letters,
// digits, "-" and "_". The balancer reads it as nginx's $http_<name>
// variable, which folds case and reads "-" as "_".
func ParseCanaryHeader(s string) (string, error) {
	return s, checkChars(s, "header name", MaxCanaryNameLen, canaryHeaderChars, "letters, digits, - and _")
}

// ParseCanaryCookie checks canary-by-cookie: 1 to 64 ASCII letters,
// digits, "-", "_" and ".". The balancer reads it as nginx's
// $cookie_<name> variable, which matches the name ignoring ASCII case.
func ParseCanaryCookie(s string) (string, error) {
	return s, checkChars(s, "cookie name", MaxCanaryNameLen, canaryCookieChars, "letters, digits, - _ and .")
}

// ParseCanaryHeaderValue checks canary-by-header-value: 1 to 256 of
// ingress-nginx's basic characters, ASCII letters, digits and - . _ ~ / :.
func ParseCanaryHeaderValue(s string) (string, error) {
	return s, checkChars(s, "header value", MaxCanaryHeaderValueLen, canaryValueChars, "letters, digits and - . _ ~ / :")
}

// Validate checks every field of a rule, as the balancer's payload
// requires.
func (r *CanaryRule) Validate() error {
	if r.Header != "" {
		if _, err := ParseCanaryHeader(r.Header); err != nil {
			return err
		}
	} else if r.HeaderValue != "" || r.HeaderPattern != "" {
		return fmt.Errorf("a header value or pattern needs a header name")
	}
	if r.HeaderValue != "" {
		if _, err := ParseCanaryHeaderValue(r.HeaderValue); err != nil {
			return err
		}
	}
	if r.HeaderPattern != "" {
		if _, err := ParseHeaderRegex(r.HeaderPattern); err != nil {
			return err
		}
	}
	if r.Cookie != "" {
		if _, err := ParseCanaryCookie(r.Cookie); err != nil {
			return err
		}
	}
	if r.WeightTotal < 1 || r.WeightTotal > MaxCanaryWeightTotal {
		return fmt.Errorf("weight total %d is out of range 1..%d", r.WeightTotal, MaxCanaryWeightTotal)
	}
	if r.Weight < 0 || r.Weight > r.WeightTotal {
		return fmt.Errorf("weight %d is out of range 0..%d (the weight total)", r.Weight, r.WeightTotal)
	}
	return nil
}

// Split is the canary split of the location whose backend is primary,
// by the canary Ingress source to the backend canary: ingress-nginx's
// precedence (the header, then the cookie, then the weight) as the
// split's rules in that order. The rule must Validate.
func (r *CanaryRule) Split(source ObjectRef, primary, canary string) *Split {
	to := func(b string) []Target { return []Target{{Backend: b, Weight: 1}} }
	when := func(kind ConditionKind, name string, m MatchKind, value, b string) SplitRule {
		return SplitRule{Conditions: []Condition{{Kind: kind, Name: name, Match: m, Value: value}}, Targets: to(b)}
	}
	s := &Split{Source: source, Primary: primary,
		Default: []Target{{Backend: canary, Weight: r.Weight}, {Backend: primary, Weight: r.WeightTotal - r.Weight}}}
	switch {
	case r.Header == "":
	case r.HeaderValue != "":
		s.Rules = append(s.Rules, when(ConditionHeader, r.Header, MatchExact, r.HeaderValue, canary))
	case r.HeaderPattern != "":
		s.Rules = append(s.Rules, when(ConditionHeader, r.Header, MatchRegex, r.HeaderPattern, canary))
	default:
		s.Rules = append(s.Rules, when(ConditionHeader, r.Header, MatchExact, "always", canary),
			when(ConditionHeader, r.Header, MatchExact, "never", primary))
	}
	if r.Cookie != "" {
		s.Rules = append(s.Rules, when(ConditionCookie, r.Cookie, MatchExact, "always", canary),
			when(ConditionCookie, r.Cookie, MatchExact, "never", primary))
	}
	return s
}
