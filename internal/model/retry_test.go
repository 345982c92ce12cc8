package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseRetryCode(t *testing.T) {
	for _, n := range []int{403, 404, 429, 500, 502, 503, 504} {
		if c, err := ParseRetryCode(n); err != nil || int(c) != n || c.Condition() != fmt.Sprintf("http_%d", n) {
			t.Errorf("%d: %v %v", n, c, err)
		}
	}
	for _, n := range []int{0, 200, 400, 408, 501, 505, 599, -500} {
		if _, err := ParseRetryCode(n); err == nil || !strings.Contains(err.Error(), "403, 404, 429, 500, 502, 503 and 504") {
			t.Errorf("%d: accepted (%v)", n, err)
		}
	}
}

func TestRouteRetry(t *testing.T) {
	r := &RouteRetry{Codes: []RetryCode{500, 504}, Attempts: 3}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if r.Tries() != 4 || !slices.Equal(r.Conditions(), []string{"error", "timeout", "http_500", "http_504", "non_idempotent"}) {
		t.Errorf("tries %d, conditions %v", r.Tries(), r.Conditions())
	}
	for name, bad := range map[string]*RouteRetry{
		"no attempts":  {},
		"too many":     {Attempts: MaxRetryAttempts + 1},
		"unknown code": {Codes: []RetryCode{501}, Attempts: 1},
		"duplicate":    {Codes: []RetryCode{500, 500}, Attempts: 1},
		"not sorted":   {Codes: []RetryCode{502, 500}, Attempts: 1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%s: valid", name)
		}
	}
}
