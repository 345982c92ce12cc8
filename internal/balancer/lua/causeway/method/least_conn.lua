-- least_conn: the peer with the fewest in-flight requests from this
-- worker, relative to its weight. Ties are broken by a rotating start so
-- that idle peers share the load evenly.

local stats = require("causeway.stats")

local _M = { counts_inflight = true }
local mt = { __index = _M }

function _M.new(peers, def)
    return setmetatable({ peers = peers, bkey = def.key, next = 0 }, mt)
end

function _M.pick(self, _, exclude)
    local peers, bkey = self.peers, self.bkey
    local n = #peers
    local start = self.next % n
    self.next = start + 1
    local best, best_load, best_weight
    for k = 0, n - 1 do
        local p = peers[(start + k) % n + 1]
        if not (exclude and exclude[p.id]) then
            local load = stats.inflight(bkey, p.id)
            -- load/weight < best_load/best_weight, without division
            if not best or load * best_weight < best_load * p.weight then
                best, best_load, best_weight = p, load, p.weight
            end
        end
    end
    return best
end

return _M
