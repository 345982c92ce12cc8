package model

import (
	"errors"
	"fmt"
	"regexp"
)

// BalanceMethod is how a backend spreads requests over its endpoints. The
// Lua balancer implements each (docs/load-balancing.md); package balancer
// carries the value to it unchanged.
type BalanceMethod string

// The methods.
const (
	// RoundRobin is smooth weighted round robin. The default.
	RoundRobin BalanceMethod = "round_robin"
	// LeastConn picks the endpoint with the fewest in-flight requests
	// (counted per nginx worker) relative to its weight.
	LeastConn BalanceMethod = "least_conn"
	// EWMA compares two random endpoints by latency EWMA times in-flight
	// requests.
	EWMA BalanceMethod = "ewma"
	// P2C compares two random endpoints by in-flight requests, breaking
	// ties by latency EWMA.
	P2C BalanceMethod = "p2c"
	// CHash is consistent hashing on Balance.HashKey.
	CHash BalanceMethod = "chash"
	// Sticky pins clients to an endpoint with a cookie (Balance.Sticky).
	Sticky BalanceMethod = "sticky"
)

// Valid reports whether m is one of the methods ("" is not).
func (m BalanceMethod) Valid() bool {
	switch m {
	case RoundRobin, LeastConn, EWMA, P2C, CHash, Sticky:
		return true
	}
	return false
}

// Balance is a backend's load-balancing method and its options, already
// validated against the same grammar the Lua side enforces.
type Balance struct {
	Method  BalanceMethod
	HashKey string
	Sticky  *StickyCookie
	// Retries is how many other endpoints a failed connect may try; nil
	// means the default (one).
	Retries *int
}

// Bounds of the balancing options. The Lua validator has the same numbers
// (package balancer's limit-parity test reads them from validate.lua).
const (
	// MaxRetries is the largest number of other endpoints a failed
	// attempt may move on to.
	MaxRetries = 5
	// MaxCookieAge is the largest affinity cookie max-age, in seconds
	// (ten years).
	MaxCookieAge = 10 * 365 * 24 * 3600
	// MaxHashKeyLen is the length of a CHash key expression.
	MaxHashKeyLen = 256
	// MaxCookieNameLen is the length of an affinity cookie name.
	MaxCookieNameLen = 64
	// MaxCookiePathLen is the length of an affinity cookie path.
	MaxCookiePathLen = 256
)

// StickyCookie configures the affinity cookie of the Sticky method. Zero
// values take the Lua side's defaults.
type StickyCookie struct {
	// Name is 1-64 of [A-Za-z0-9_.-] ("causeway_affinity").
	Name string
	// Path is the cookie's Path ("/").
	Path string
	// MaxAge in seconds; 0 makes a session cookie.
	MaxAge int
	// SameSite is "", "Lax", "Strict" or "None" (which requires Secure).
	SameSite string
	Secure   bool
}

var (
	hashExprRe   = regexp.MustCompile(`^(\$[A-Za-z0-9_]+)+$`)
	hashVarRe    = regexp.MustCompile(`\$([A-Za-z0-9_]+)`)
	hashPrefixRe = regexp.MustCompile(`^(http_[a-z0-9_]+|cookie_[A-Za-z0-9_]+|arg_[A-Za-z0-9_]+)$`)
	cookieNameRe = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	cookiePathRe = regexp.MustCompile(`^/[A-Za-z0-9._~!$&'()*+,=:@%/-]*$`)

	hashVars = map[string]bool{
		"request_uri": true, "uri": true, "args": true, "host": true, "scheme": true,
		"remote_addr": true, "binary_remote_addr": true, "realip_remote_addr": true,
		"request_method": true, "server_name": true,
	}
)

// ValidateHashKey checks a CHash key expression: nginx variables written
// back to back, from $request_uri, $uri, $args, $host, $scheme,
// $remote_addr, $binary_remote_addr, $realip_remote_addr, $request_method,
// $server_name, $http_*, $cookie_* and $arg_*.
func ValidateHashKey(expr string) error {
	if len(expr) < 2 || len(expr) > MaxHashKeyLen || !hashExprRe.MatchString(expr) {
		return fmt.Errorf("hash key %q must be nginx variables such as $request_uri or $http_x_user", Truncate(expr))
	}
	for _, m := range hashVarRe.FindAllStringSubmatch(expr, -1) {
		if !hashVars[m[1]] && !hashPrefixRe.MatchString(m[1]) {
			return fmt.Errorf("hash key %q: variable $%s is not allowed", Truncate(expr), m[1])
		}
	}
	return nil
}

// ValidateRetries checks a retry count.
func ValidateRetries(n int) error {
	if n < 0 || n > MaxRetries {
		return fmt.Errorf("retries %d out of range 0..%d", n, MaxRetries)
	}
	return nil
}

// Validate checks the cookie options.
func (s *StickyCookie) Validate() error {
	if s.Name != "" && (len(s.Name) > MaxCookieNameLen || !cookieNameRe.MatchString(s.Name)) {
		return fmt.Errorf("sticky cookie name %q must be 1 to %d of [A-Za-z0-9_.-]", Truncate(s.Name), MaxCookieNameLen)
	}
	if s.Path != "" && (len(s.Path) > MaxCookiePathLen || !cookiePathRe.MatchString(s.Path)) {
		return fmt.Errorf("sticky path %q must be an absolute URL path without ';' or spaces", Truncate(s.Path))
	}
	if s.MaxAge < 0 || s.MaxAge > MaxCookieAge {
		return fmt.Errorf("sticky max_age %d out of range 0..%d", s.MaxAge, MaxCookieAge)
	}
	switch s.SameSite {
	case "", "Lax", "Strict":
	case "None":
		if !s.Secure {
			return errors.New(`sticky same_site "None" requires secure`)
		}
	default:
		return fmt.Errorf(`sticky same_site %q must be "Lax", "Strict" or "None"`, Truncate(s.SameSite))
	}
	return nil
}
