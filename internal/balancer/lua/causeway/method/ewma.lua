-- ewma: latency-weighted choice in the style of Finagle's peak EWMA (as
-- ingress-nginx does). Two random peers are scored by
--     (latency EWMA + 1 ms) * (in-flight + 1) / weight
-- and the lower score wins. The in-flight factor makes a peer that is
-- slowing down shed load before its EWMA catches up; the 1 ms floor
-- keeps peers with no sample yet from all scoring zero.

local stats = require("causeway.stats")
local p2c = require("causeway.method.p2c")

local _M = { counts_inflight = true, tracks_latency = true }
local mt = { __index = _M }

local FLOOR = 0.001

function _M.new(peers, def)
    local ids = {}
    for i = 1, #peers do
        ids[i] = peers[i].id
    end
    stats.seed(def.key, ids, ngx.now())
    return setmetatable({ peers = peers, bkey = def.key }, mt)
end

local function score(bkey, p, now)
    local l = stats.latency(bkey, p.id, now) or 0
    return (l + FLOOR) * (stats.inflight(bkey, p.id) + 1) / p.weight
end

function _M.pick(self, _, exclude)
    local a, b = p2c.two(p2c.candidates(self.peers, exclude))
    if not b then
        return a
    end
    local now = ngx.now()
    return score(self.bkey, b, now) < score(self.bkey, a, now) and b or a
end

return _M
