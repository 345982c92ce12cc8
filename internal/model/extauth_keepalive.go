package model

import (
	"errors"
	"time"
)

// AuthKeepalive keeps idle connections to an auth-url service open for
// the next subrequests (ingress-nginx's auth-keepalive family): the
// service's host and port become an upstream with a keepalive pool.
// nginx's auth_request does not read an answer's body, so a connection
// goes back to the pool only after an answer without one (204, 304,
// Content-Length: 0, or any answer to auth-method HEAD).
type AuthKeepalive struct {
	// Connections is the number of idle connections kept per nginx
	// worker, 1 to MaxAuthKeepalive.
	Connections int
	// Requests is how many subrequests one connection serves before it
	// is closed, 1 to MaxAuthKeepaliveRequests.
	Requests int
	// Timeout closes a connection idle for that long, more than 0 and at
	// most MaxAuthKeepaliveTimeout.
	Timeout time.Duration
}

// Bounds and defaults of the auth-keepalive family; the defaults are
// ingress-nginx's.
const (
	MaxAuthKeepalive             = 1024
	MaxAuthKeepaliveRequests     = 1_000_000
	MaxAuthKeepaliveTimeout      = time.Hour
	DefaultAuthKeepaliveRequests = 1000
	DefaultAuthKeepaliveTimeout  = 60 * time.Second
)

// Validate checks the bounds the fields document.
func (k *AuthKeepalive) Validate() error {
	switch {
	case k.Connections < 1 || k.Connections > MaxAuthKeepalive:
		return errors.New("auth keepalive connections out of 1 to 1024")
	case k.Requests < 1 || k.Requests > MaxAuthKeepaliveRequests:
		return errors.New("auth keepalive requests out of 1 to 1000000")
	case k.Timeout <= 0 || k.Timeout > MaxAuthKeepaliveTimeout:
		return errors.New("auth keepalive timeout out of (0, 1h]")
	}
	return nil
}

// ParseAuthKeepaliveTimeout checks auth-keepalive-timeout: a duration as
// ParseSeconds reads it (a bare number is seconds, as ingress-nginx
// writes it), more than 0 and at most 1h.
func ParseAuthKeepaliveTimeout(s string) (time.Duration, error) {
	d, err := ParseSeconds(s)
	if err != nil || d <= 0 || d > MaxAuthKeepaliveTimeout {
		return 0, errors.New("want a duration of more than 0 and at most 1h, such as 60 or 30s")
	}
	return d, nil
}
