// Package balancer is the Lua half of Causeway's HTTP data plane and the Go
// side of its contract with it. It writes no nginx configuration: package
// render prints every directive that loads these modules or names these
// values (render/lua.go and templates/lua.conf.tmpl among others).
//
// nginx proxies HTTP traffic to Lua-balanced upstreams (causeway_balancer
// and its twins, names.go) whose balancer_by_lua handler picks the peer
// from state held in a lua_shared_dict. The controller replaces or updates
// that state by posting JSON to a server that listens on a unix socket
// only (a full replace is authoritative: its generation is recorded, never
// compared); every worker notices the change on its next request (one
// shared-dict read per request), so endpoint and split changes never need
// a reload. The same modules serve what nginx lacks, or could change only
// with a reload: host certificates (causeway.certs), digest and API key
// authentication (causeway.digest, causeway.apikey), fresh X-Request-ID
// values (causeway.requestid).
//
// The package provides:
//   - WriteLua and LuaFS, the embedded Lua modules for lua_package_path;
//   - the names both sides share: upstreams, variables and the shared dict
//     (names.go), the metrics log's fields and series keys (metrics.go);
//   - State, Backend and Endpoint, the payload (a key names a backend, or
//     a split of a location's traffic over backends that the Lua side
//     resolves per request), with Validate mirroring the checks the Lua
//     side applies, and the limits both sides enforce (limits.go, kept
//     equal to validate.lua's by a test);
//   - Client, which talks to the dynamic socket.
//
// Its only Causeway import is internal/model, whose balancing methods and
// options the payload carries.
//
// docs/load-balancing.md describes the methods and the payload for users.
package balancer
