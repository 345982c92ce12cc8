-- causeway.backend: turns one validated backend definition into the
-- per-worker object the balancer picks from.

local stats = require("causeway.stats")
local peers_limits = require("causeway.peers")

local _M = {}

_M.methods = {
    round_robin = require("causeway.method.round_robin"),
    least_conn = require("causeway.method.least_conn"),
    ewma = require("causeway.method.ewma"),
    p2c = require("causeway.method.p2c"),
    chash = require("causeway.method.chash"),
    sticky = require("causeway.method.sticky"),
}

-- new_split returns the instance of a canary split: the rule the
-- balancer applies (see causeway.balancer), with the nginx variables it
-- reads named once here rather than per request.
local function new_split(def)
    local s = def.split
    return {
        key = def.key, split = true, n = 0,
        primary = s.primary, canary = s.canary,
        header_var = s.header and ("http_" .. s.header:lower():gsub("-", "_")) or nil,
        value = s.header_value, pattern = s.header_pattern,
        cookie_var = s.cookie and ("cookie_" .. s.cookie) or nil,
        weight = s.weight, total = s.weight_total,
    }
end

-- VAR_PREFIX is the nginx variable family each condition kind reads.
local VAR_PREFIX = { header = "http_", cookie = "cookie_", argument = "arg_", variable = "" }

-- new_choice returns the instance of a choice (model.Choice): the
-- variables its conditions read are named, and their values lowercased,
-- once here (nginx's map, which NGINX Ingress Controller uses, compares
-- strings ignoring case).
local function new_choice(def)
    local c = def.choice
    local matches = {}
    for i, m in ipairs(c.matches) do
        local conds = {}
        for j, cond in ipairs(m.conditions) do
            local name = cond.name
            if cond.kind == "header" then
                name = (name:lower():gsub("-", "_"))
            end
            conds[j] = { var = VAR_PREFIX[cond.kind] .. name, value = cond.value:lower(), negate = cond.negate }
        end
        matches[i] = { conditions = conds, targets = m.targets }
    end
    return { key = def.key, choice = true, n = 0, matches = matches, targets = c.targets, answers = c.answers }
end

-- new returns the balancer instance for def. Only ready endpoints become
-- peers, so a not-ready endpoint is never picked. An instance with n == 0
-- sends requests to the local server that answers 503.
function _M.new(def)
    if def.split then
        return new_split(def)
    end
    if def.choice then
        return new_choice(def)
    end
    local peers, keep = {}, {}
    for _, e in ipairs(def.endpoints) do
        if e.ready then
            -- nginx wants IPv6 peers in brackets.
            local host = e.v6 and ("[" .. e.address .. "]") or e.address
            local p = {
                id = host .. ":" .. e.port, host = host, port = e.port,
                weight = e.weight, zone = e.zone,
            }
            peers[#peers + 1] = p
            keep[p.id] = true
        end
    end
    stats.forget(def.key, keep)
    peers_limits.forget(def.key, keep)
    local impl = _M.methods[def.method]
    local o
    if #peers > 0 then
        o = impl.new(peers, def)
    else
        o = { peers = peers }
    end
    o.key = def.key
    o.n = #peers
    o.retries = def.retries
    o.method = def.method
    -- Peer limits (causeway.peers): limited says whether any applies.
    o.max_fails, o.fail_timeout, o.max_conns = def.max_fails, def.fail_timeout_ms / 1000, def.max_conns
    o.limited = def.max_fails > 0 or def.max_conns > 0
    if def.max_conns > 0 then
        o.counts_inflight = true
    end
    -- Whether balance() must keep per-request state in ngx.ctx for the
    -- later phases.
    o.per_request = (o.counts_inflight or o.tracks_latency or o.header_filter or o.max_fails > 0) and true or false
    return o
end

return _M
