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

-- VAR_PREFIX is the nginx variable family each condition kind reads.
local VAR_PREFIX = { header = "http_", cookie = "cookie_", argument = "arg_", variable = "" }

-- condition names the variable a condition reads once here rather than
-- per request ($http_<name> folds case and reads "-" as "_"), and
-- lowercases a caseless value.
local function condition(c)
    local name = c.name
    if c.kind == "header" then
        name = (name:lower():gsub("-", "_"))
    end
    local value = c.value
    if c.match == "caseless" then
        value = value:lower()
    end
    return { var = VAR_PREFIX[c.kind] .. name, match = c.match, value = value, negate = c.negate }
end

-- weighted returns targets with the sum of their weights, which the
-- balancer draws from, and with affinity (model.SplitRule.Affinity)
-- the targets that are backends, whose affinity cookies the balancer
-- reads before drawing (whatever their weight, even 0).
local function weighted(targets, affinity)
    local sum = 0
    local affine = affinity and {} or nil
    for _, t in ipairs(targets) do
        sum = sum + t.weight
        if affine and t.backend then
            affine[#affine + 1] = t
        end
    end
    targets.sum = sum
    if affine and #affine > 0 then
        targets.affine = affine
    end
    return targets
end

-- new_split returns the instance of a split (model.Split): its rules,
-- with the variables their conditions read named once here, its default
-- targets, and for a canary its primary and the backends whose affinity
-- cookies keep a request (the primary first).
local function new_split(key, s)
    local rules = {}
    for i, r in ipairs(s.rules) do
        local conds = {}
        for j, c in ipairs(r.conditions) do
            conds[j] = condition(c)
        end
        rules[i] = { conditions = conds, targets = weighted(r.targets, r.affinity) }
    end
    local o = {
        key = key, split = true, n = 0, rules = rules, targets = weighted(s.targets, s.affinity),
        answers = s.answers, primary = s.primary, headers = s.headers,
        -- The access hook picks (balancer.access): the split may answer,
        -- or edit the request headers of the backend it picks.
        early = s.answers > 0 or #s.headers > 0,
    }
    if s.primary then
        local affine, pinned = { s.primary }, { [s.primary] = { backend = s.primary } }
        local function add(ts)
            for _, t in ipairs(ts) do
                if t.backend and not pinned[t.backend] then
                    affine[#affine + 1] = t.backend
                    pinned[t.backend] = { backend = t.backend }
                end
            end
        end
        for _, r in ipairs(rules) do
            add(r.targets)
        end
        add(o.targets)
        o.affine, o.pinned = affine, pinned
    end
    return o
end

-- new returns the balancer instance for def. Only ready endpoints become
-- peers, so a not-ready endpoint is never picked. An instance with n == 0
-- sends requests to the local server that answers 503.
function _M.new(def)
    if def.split then
        return new_split(def.key, def.split)
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
