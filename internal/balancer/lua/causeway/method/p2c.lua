-- p2c: power of two choices. Two distinct random peers are compared on
-- in-flight requests (relative to weight); a tie goes to the lower
-- latency EWMA. Cheap for large sets, and random enough that workers do
-- not stampede onto the same peer.

local stats = require("causeway.stats")

local random = math.random

local _M = { counts_inflight = true, tracks_latency = true }
local mt = { __index = _M }

function _M.new(peers, def)
    return setmetatable({ peers = peers, bkey = def.key }, mt)
end

-- candidates returns the peers not yet tried in this request.
local function candidates(peers, exclude)
    if not exclude then
        return peers
    end
    local out = {}
    for i = 1, #peers do
        if not exclude[peers[i].id] then
            out[#out + 1] = peers[i]
        end
    end
    return out
end
_M.candidates = candidates

-- two returns two distinct random peers (or the only one).
local function two(list)
    local n = #list
    if n < 2 then
        return list[1], nil
    end
    local i = random(n)
    local j = random(n - 1)
    if j >= i then
        j = j + 1
    end
    return list[i], list[j]
end
_M.two = two

function _M.pick(self, _, exclude)
    local a, b = two(candidates(self.peers, exclude))
    if not b then
        return a
    end
    local bkey = self.bkey
    local la = stats.inflight(bkey, a.id) * b.weight
    local lb = stats.inflight(bkey, b.id) * a.weight
    if la ~= lb then
        return la < lb and a or b
    end
    local now = ngx.now()
    local ea = stats.latency(bkey, a.id, now) or 0
    local eb = stats.latency(bkey, b.id, now) or 0
    return eb < ea and b or a
end

return _M
