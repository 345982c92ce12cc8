-- round_robin: smooth weighted round robin (the scheme nginx uses).
-- Each pick adds every peer's weight to its running score, takes the
-- highest and subtracts the total from it: weights 1:3 give B B A B,
-- never A A. With equal weights (the usual case) that is plain rotation,
-- which needs no loop over the peers, so it is done directly: a pick
-- costs the same for 2 endpoints and for 200.

local _M = {}
local mt = { __index = _M }

function _M.new(peers)
    local current = {}
    local uniform = true
    for i = 1, #peers do
        current[i] = 0
        if peers[i].weight ~= peers[1].weight then
            uniform = false
        end
    end
    return setmetatable({ peers = peers, current = current, uniform = uniform, last = 0 }, mt)
end

-- rotate returns the peer after the last one picked, skipping excluded
-- peers (tried already in this request).
local function rotate(self, exclude)
    local peers = self.peers
    local n = #peers
    local i = self.last
    for _ = 1, n do
        i = i % n + 1
        local p = peers[i]
        if not (exclude and exclude[p.id]) then
            self.last = i
            return p
        end
    end
    return nil
end

-- pick skips excluded peers without letting them accumulate score.
function _M.pick(self, _, exclude)
    if self.uniform then
        return rotate(self, exclude)
    end
    local peers, current = self.peers, self.current
    local best, best_score, total = nil, nil, 0
    for i = 1, #peers do
        local p = peers[i]
        if not (exclude and exclude[p.id]) then
            local c = current[i] + p.weight
            current[i] = c
            total = total + p.weight
            if not best_score or c > best_score then
                best, best_score = i, c
            end
        end
    end
    if not best then
        return nil
    end
    current[best] = current[best] - total
    return peers[best]
end

return _M
