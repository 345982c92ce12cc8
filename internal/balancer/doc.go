// Package balancer is the reload-free half of Causeway's HTTP data plane:
// Lua modules that pick an upstream endpoint for every request inside
// nginx, and the Go client that pushes endpoint sets to them.
//
// nginx proxies all HTTP traffic to one upstream, causeway_balancer, whose
// balancer_by_lua handler picks the peer from state held in a
// lua_shared_dict. The controller replaces or updates that state by
// posting JSON to a server that listens on a unix socket only (a full
// replace is authoritative: its generation is recorded, never compared);
// every worker notices the change on its next request (one shared-dict
// read per request), so endpoint changes never need a reload.
//
// The package provides:
//   - WriteLua, which installs the embedded Lua modules for lua_package_path;
//   - NginxSnippets and BackendDirective, the exact configuration the
//     renderer must emit;
//   - State, Backend and Endpoint, the payload, with Validate mirroring the
//     checks the Lua side applies, and the limits both sides enforce
//     (limits.go, kept equal to validate.lua's by a test);
//   - Client, which talks to the dynamic socket.
//
// docs/load-balancing.md describes the methods and the payload for users.
package balancer
