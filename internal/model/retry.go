package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// RetryCode is an HTTP status a RouteRetry retries on: one of those
// nginx's proxy_next_upstream can move on from (http_403 ... http_504).
type RetryCode int

// RetryCodes are the statuses nginx can retry on, in order.
var RetryCodes = []RetryCode{403, 404, 429, 500, 502, 503, 504}

// ParseRetryCode reads a status to retry on; nginx retries on no other.
func ParseRetryCode(n int) (RetryCode, error) {
	c := RetryCode(n)
	if !slices.Contains(RetryCodes, c) {
		return 0, fmt.Errorf("nginx retries only on %s", retryCodeList())
	}
	return c, nil
}

func retryCodeList() string {
	s := make([]string, len(RetryCodes))
	for i, c := range RetryCodes {
		s[i] = strconv.Itoa(int(c))
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// Condition is the code's proxy_next_upstream condition ("http_500").
func (c RetryCode) Condition() string { return "http_" + strconv.Itoa(int(c)) }

// MaxRetryAttempts bounds RouteRetry.Attempts: each retry holds the
// request (and a connection to a backend) for up to another timeout.
const MaxRetryAttempts = 10

// RouteRetry is a Gateway API rule's retry (HTTPRoute
// spec.rules[].retry). A try that fails to connect, times out before
// the response or answers one of Codes is tried again, up to Attempts
// times after the first, whatever the request's method: on an endpoint
// not tried yet while one is left, else on one already tried (unlike
// Retry.On and Retry.Tries, which never try an endpoint twice). The
// whole is bounded by Retry.Timeout when set.
type RouteRetry struct {
	// Codes are the statuses retried, sorted, without duplicates.
	Codes []RetryCode
	// Attempts is the number of retries after the first try,
	// 1..MaxRetryAttempts.
	Attempts int
}

// Validate checks the invariants a front-end's parse guarantees.
func (r *RouteRetry) Validate() error {
	if r.Attempts < 1 || r.Attempts > MaxRetryAttempts {
		return fmt.Errorf("retry attempts %d: want 1 to %d", r.Attempts, MaxRetryAttempts)
	}
	for i, c := range r.Codes {
		if _, err := ParseRetryCode(int(c)); err != nil {
			return fmt.Errorf("retry code %d: %v", c, err)
		}
		if i > 0 && r.Codes[i-1] >= c {
			return fmt.Errorf("retry codes %v are not sorted without duplicates", r.Codes)
		}
	}
	return nil
}

// Tries is the number of tries in all, the first included.
func (r *RouteRetry) Tries() int { return r.Attempts + 1 }

// Conditions are the proxy_next_upstream conditions: connection errors
// and timeouts, the codes, and non-idempotent requests (POST, PATCH,
// LOCK), which nginx would otherwise never send twice.
func (r *RouteRetry) Conditions() []string {
	out := []string{"error", "timeout"}
	for _, c := range r.Codes {
		out = append(out, c.Condition())
	}
	return append(out, "non_idempotent")
}
