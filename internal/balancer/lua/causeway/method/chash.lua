-- chash: consistent hashing on a request key such as $request_uri,
-- $remote_addr, $http_x_user or $cookie_id.
--
-- Every endpoint owns VNODES points per unit of weight on a 32-bit ring,
-- taken four at a time from md5("<id>#<n>"). A key goes to the owner of
-- the first point at or after crc32(key). The points depend only on the
-- endpoint's own id, so removing one of N endpoints moves only the keys
-- it owned (about 1/N); all other keys stay where they were.
-- (crc32 would be cheaper for the points, but it is linear: for ids that
-- differ in a few characters its points cluster, and endpoint shares
-- vary about three times as much as with md5.)

local validate = require("causeway.validate")

local crc32, md5_bin = ngx.crc32_long, ngx.md5_bin
local byte = string.byte
local floor = math.floor
local sort, concat = table.sort, table.concat

local _M = {}
local mt = { __index = _M }

local VNODES = 100
-- A ring entry packs hash * SLOT + peer index into one exact double
-- (2^32 * 2^16 < 2^53), so a plain numeric sort orders the ring.
local SLOT = 65536

function _M.new(peers, def)
    local vars = validate.parse_hash_key(def.hash_key)
    local ring, n = {}, 0
    for i = 1, #peers do
        local p = peers[i]
        for v = 0, VNODES * p.weight / 4 - 1 do
            local d = md5_bin(p.id .. "#" .. v)
            for j = 1, 13, 4 do
                local a, b, c, e = byte(d, j, j + 3)
                n = n + 1
                ring[n] = (((a * 256 + b) * 256 + c) * 256 + e) * SLOT + i
            end
        end
    end
    sort(ring)
    return setmetatable({ peers = peers, ring = ring, vars = vars }, mt)
end

-- key_hash evaluates the key expression; a retry (which has rc) reuses
-- the first attempt's. A missing variable counts as the empty string.
local function key_hash(self, rc)
    local h = rc and rc.hash
    if h then
        return h
    end
    local vars, parts = self.vars, {}
    for i = 1, #vars do
        parts[i] = ngx.var[vars[i]] or ""
    end
    h = crc32(concat(parts))
    if rc then
        rc.hash = h
    end
    return h
end

-- pick returns the owner of the key's point; on a retry it walks on
-- clockwise past the endpoints already tried.
function _M.pick(self, rc, exclude)
    local ring, peers = self.ring, self.peers
    local n = #ring
    local target = key_hash(self, rc) * SLOT
    local lo, hi = 1, n + 1
    while lo < hi do
        local mid = floor((lo + hi) / 2)
        if ring[mid] < target then
            lo = mid + 1
        else
            hi = mid
        end
    end
    for k = 0, n - 1 do
        local p = peers[ring[(lo - 1 + k) % n + 1] % SLOT]
        if not (exclude and exclude[p.id]) then
            return p
        end
    end
    return nil
end

return _M
