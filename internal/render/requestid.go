package render

// X-Request-ID (generate-request-id): every request carries the client's
// X-Request-ID to its backends and into the access log ($req_id), else a
// fresh one. nginx's $request_id makes a fresh one by asking OpenSSL for
// 16 random bytes per request, which costs OpenSSL 3 about 5,000
// instructions of lookups each time. With the Lua balancer, nginx.conf
// maps $causeway_request_id to the client's header, and each server
// assigns it first thing in its rewrite phase, through causeway.requestid:
// the value it holds, else a fresh one, drawn with the same OpenSSL
// function as $request_id for 256 requests at once: the same kind of ID
// for about 3,400 instructions less per request. A request keeps its ID
// through internal redirects and auth subrequests, which run that phase
// again. Without Lua, nginx.conf's maps use $request_id.

// luaRequestID says whether servers assign fresh IDs with Lua.
func luaRequestID(generate, lua bool) bool { return generate && lua }

// LuaRequestID tells nginx.conf to map $causeway_request_id to the
// client's ID only, for the servers to fill in, instead of to
// $request_id.
func (v *mainView) LuaRequestID() bool { return luaRequestID(v.GenerateRequestID, v.lua != nil) }
