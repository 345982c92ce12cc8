package model

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Canary sends some of a location's requests to a second backend
// (ingress-nginx's canary Ingress). The rule is applied by the Lua
// balancer from the pushed state, so a change of Rule needs no reload;
// the location only names the split (see SplitKey).
type Canary struct {
	// Backend is the key of the canary's Backend in Model.Backends.
	Backend string
	// Rule decides, per request, which backend serves it.
	Rule CanaryRule
	// Source is the canary Ingress, or the VirtualServer (Route)
	// whose route splits.
	Source ObjectRef
	// Route, when set, is the route of Source the split belongs to: one
	// object may split several routes between the same two backends by
	// different rules (a VirtualServer's splits and matches).
	Route string
}

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

// maxSplitKeyLen is the balancer's limit on a backend key.
const maxSplitKeyLen = 256

// SplitKey names the split of a location whose requests go to primary or
// to canary's backend: the key the location selects in the balancer, in
// place of primary's. It depends on the canary Ingress and the two
// backends only, never on the rule, so that a change of rule changes the
// pushed state and not the nginx configuration. Readable when it fits
// the balancer's key grammar, a digest otherwise.
func SplitKey(primary string, c *Canary) string {
	source := c.Source.Namespace + "/" + c.Source.Name
	if c.Route != "" {
		route := sha256.Sum256([]byte(c.Route))
		source += "." + hex.EncodeToString(route[:4])
	}
	k := fmt.Sprintf("split@%s@%s@%s", source, primary, c.Backend)
	if len(k) <= maxSplitKeyLen {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	return "split@" + hex.EncodeToString(sum[:16])
}
