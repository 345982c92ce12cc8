package model

import (
	"fmt"
	"time"
)

// PeerLimits bound how a backend uses each of its endpoints, as nginx's
// server parameters max_fails, fail_timeout and max_conns do. The zero
// value sets none: every ready endpoint is always a candidate (Causeway's
// and ingress-nginx's default).
type PeerLimits struct {
	// MaxFails failed attempts on an endpoint, each within FailTimeout
	// of the one before, take it out of the rotation for FailTimeout
	// (passive health checks). 0 never does. A backend with one endpoint
	// never takes it out, as nginx does.
	MaxFails int
	// FailTimeout is that window and that time out; it matters only with
	// MaxFails.
	FailTimeout time.Duration
	// MaxConns bounds the requests in flight to one endpoint (0: no
	// bound). An endpoint at its bound is skipped; when every endpoint is
	// at its bound or out after failures the request gets 502.
	MaxConns int
}

// Bounds of PeerLimits. The Lua validator has the same numbers (package
// balancer's limit-parity test reads them from validate.lua).
const (
	MaxPeerFails       = 1000
	MaxPeerFailTimeout = 24 * time.Hour
	MaxPeerConns       = 1000000
)

// Validate checks the bounds: FailTimeout is whole seconds (nginx's
// fail_timeout takes no finer unit), from 1s when MaxFails is set.
func (l PeerLimits) Validate() error {
	if l.MaxFails < 0 || l.MaxFails > MaxPeerFails {
		return fmt.Errorf("max fails %d out of range 0..%d", l.MaxFails, MaxPeerFails)
	}
	if l.FailTimeout < 0 || l.FailTimeout > MaxPeerFailTimeout || l.FailTimeout%time.Second != 0 {
		return fmt.Errorf("fail timeout %v must be whole seconds up to %v", l.FailTimeout, MaxPeerFailTimeout)
	}
	if l.MaxFails > 0 && l.FailTimeout == 0 {
		return fmt.Errorf("max fails %d needs a fail timeout", l.MaxFails)
	}
	if l.MaxConns < 0 || l.MaxConns > MaxPeerConns {
		return fmt.Errorf("max conns %d out of range 0..%d", l.MaxConns, MaxPeerConns)
	}
	return nil
}
