-- causeway.peers: a backend's peer limits (max_fails, fail_timeout_ms and
-- max_conns), the Lua twin of nginx's server parameters of those names.
--
-- Like causeway.stats, the state is this worker's own Lua memory, which
-- is what nginx does for an upstream without a shared zone: no lock on
-- the request path, and nothing outlives the worker. It is keyed by
-- backend key and endpoint id, so it survives endpoint updates.
--
-- Passive health checks follow nginx's round robin: every failed
-- attempt on an endpoint counts, and once max_fails have counted, each
-- within fail_timeout of the one before, the endpoint is skipped until
-- fail_timeout has passed since the last. A success after that window
-- clears the count (one within it does not, as in nginx). A backend with
-- a single endpoint never skips it.

local stats = require("causeway.stats")

local next, pairs = next, pairs
local now = ngx.now

local _M = {}

local failed = {} -- [backend key][endpoint id] = { failures, time of the last }

-- failure counts one failed attempt of inst's backend on endpoint id.
function _M.failure(inst, id)
    local b = failed[inst.key]
    if not b then
        b = {}
        failed[inst.key] = b
    end
    local t = now()
    local f = b[id]
    if not f then
        b[id] = { 1, t }
        return
    end
    f[1] = f[1] + 1
    f[2] = t
end

-- success records an attempt on endpoint id that got a response.
function _M.success(inst, id)
    local b = failed[inst.key]
    local f = b and b[id]
    if f and now() - f[2] > inst.fail_timeout then
        b[id] = nil
    end
end

-- skipped returns the set of ids of inst's endpoints that must not be
-- picked now, added to exclude (the endpoints a request has tried
-- already, or nil): those out after failures and those with max_conns
-- requests in flight from this worker. Nil when there are none.
function _M.skipped(inst, exclude)
    local out = exclude
    if inst.max_fails > 0 and inst.n > 1 then
        local b = failed[inst.key]
        if b then
            local t, max, window = now(), inst.max_fails, inst.fail_timeout
            for id, f in pairs(b) do
                if f[1] >= max and t - f[2] <= window then
                    out = out or {}
                    out[id] = true
                end
            end
        end
    end
    local max = inst.max_conns
    if max > 0 then
        local busy = stats.inflight_of(inst.key)
        if busy then
            for id, n in pairs(busy) do
                if n >= max then
                    out = out or {}
                    out[id] = true
                end
            end
        end
    end
    return out
end

-- forget drops the failures of endpoints not in keep (a set of ids).
function _M.forget(bkey, keep)
    local b = failed[bkey]
    if not b then
        return
    end
    for id in pairs(b) do
        if not keep[id] then
            b[id] = nil
        end
    end
    if next(b) == nil then
        failed[bkey] = nil
    end
end

return _M
