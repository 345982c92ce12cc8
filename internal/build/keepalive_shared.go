package build

import "github.com/causeway/causeway/internal/model"

// boundSharedPools bounds the ConfigMap's pools on the plain data plane.
// There every backend's upstream block has a pool of its own, and those
// without their own keepalive take upstream-keepalive-connections each
// (the Lua data plane has one shared pool instead). nginx allocates every
// pool's entries when it loads the configuration, so with thousands of
// backends the default of 320 would reserve hundreds of megabytes per
// worker for connections that never exist. When the pools together would
// hold over model.MaxKeepaliveTotal idle connections (the backends' own
// included), the ConfigMap's pool of each block shrinks to its share of
// what is left, at least one, with a Problem on the ConfigMap.
func (b *builder) boundSharedPools() {
	per := b.model.Config.UpstreamKeepalive
	if b.opts.LuaAvailable || per <= 0 {
		return
	}
	own, shared := 0, 0
	for _, be := range b.model.Backends {
		switch {
		case len(be.Endpoints) == 0:
			// No upstream block: nothing is allocated.
		case be.Keepalive.Set:
			own += be.Keepalive.Idle
		default:
			shared++
		}
	}
	if shared == 0 || own+shared*per <= model.MaxKeepaliveTotal {
		return
	}
	share := max(1, (model.MaxKeepaliveTotal-own)/shared)
	b.model.Config.UpstreamKeepalive = share
	// The message names no count: it would change with every backend
	// that gains or loses its endpoints, and each change would be a new
	// Event. upstreams.conf has each pool's size.
	b.problem(b.configMapRef(), model.ReasonUnsupported, false,
		`key "upstream-keepalive-connections": without the Lua balancer each upstream keeps a pool of its own, `+
			"and %d idle connections each would reserve over %d per nginx worker together; "+
			"each upstream keeps its share of what is left (at least 1; see keepalive in upstreams.conf)",
		per, model.MaxKeepaliveTotal)
}
