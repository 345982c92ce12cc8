-- round_robin: smooth weighted round robin (the scheme nginx uses).
-- Each pick adds every peer's weight to its running score, takes the
-- highest and subtracts the total from it: weights 1:3 give B B A B,
-- never A A.

local _M = {}
local mt = { __index = _M }

function _M.new(peers)
    local current = {}
    for i = 1, #peers do
        current[i] = 0
    end
    return setmetatable({ peers = peers, current = current }, mt)
end

-- pick skips excluded peers (tried already in this request) without
-- letting them accumulate score.
function _M.pick(self, _, exclude)
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
