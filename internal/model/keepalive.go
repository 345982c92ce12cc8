package model

import "fmt"

// Keepalive is a backend's own pool of idle connections to its endpoints
// (a VirtualServer upstream's keepalive), in place of the ConfigMap's
// upstream-keepalive-connections. The zero value sets none.
type Keepalive struct {
	// Set says the backend has its own pool size.
	Set bool
	// Idle is the number of idle connections each nginx worker keeps;
	// 0 keeps none: every request opens its own connection.
	Idle int
}

// MaxKeepalive bounds Keepalive.Idle: nginx allocates the pool when it
// loads the configuration, whether it fills or not. It is the workers'
// default worker-connections.
const MaxKeepalive = 16384

// MaxKeepaliveTotal bounds the idle connections of every backend's own
// pool together (each entry of a pool is about 150 bytes per worker), and
// on the plain data plane those with the ConfigMap's pools
// (build's boundSharedPools).
const MaxKeepaliveTotal = 65536

// Validate checks the bounds.
func (k Keepalive) Validate() error {
	if k.Idle < 0 || k.Idle > MaxKeepalive || (!k.Set && k.Idle != 0) {
		return fmt.Errorf("keepalive %d out of range 0..%d", k.Idle, MaxKeepalive)
	}
	return nil
}
