-- sticky: cookie-based session affinity.
--
-- The cookie holds a digest of the endpoint's address and port (never the
-- address itself). A request whose cookie names a ready endpoint goes
-- there; any other request (no cookie, endpoint gone, not ready, or
-- failed on this request) gets a new endpoint by smooth weighted round
-- robin, and the header filter re-issues the cookie for the endpoint that
-- actually served it.

local round_robin = require("causeway.method.round_robin")

local md5 = ngx.md5
local sub, gmatch, match = string.sub, string.gmatch, string.match
local type = type

local _M = {}
local mt = { __index = _M }

function _M.new(peers, def)
    local by_cookie = {}
    for i = 1, #peers do
        local p = peers[i]
        p.cookie = sub(md5(p.id), 1, 16)
        by_cookie[p.cookie] = p
    end
    local s = def.sticky
    -- Attributes are fixed per backend, so build them once.
    local attrs = "; Path=" .. s.path
    if s.max_age > 0 then
        attrs = attrs .. "; Max-Age=" .. s.max_age
    end
    if s.same_site then
        attrs = attrs .. "; SameSite=" .. s.same_site
    end
    if s.secure then
        attrs = attrs .. "; Secure"
    end
    if s.http_only then
        attrs = attrs .. "; HttpOnly"
    end
    return setmetatable({
        peers = peers, by_cookie = by_cookie, rr = round_robin.new(peers),
        cookie_name = s.cookie, attrs = attrs,
        -- For canary splits (causeway.balancer): the variable that reads
        -- the cookie, and the peers by cookie value.
        cookie_var = "cookie_" .. s.cookie,
    }, mt)
end

-- read_cookie returns the first value of the named cookie, or nil.
local function read_cookie(name)
    local h = ngx.var.http_cookie
    if not h then
        return nil
    end
    for pair in gmatch(h, "[^;]+") do
        local k, v = match(pair, "^%s*([^=%s]+)%s*=%s*(.-)%s*$")
        if k == name then
            return v
        end
    end
    return nil
end

function _M.pick(self, rc, exclude)
    if rc.cookie == nil then
        rc.cookie = read_cookie(self.cookie_name) or false
    end
    local p = rc.cookie and self.by_cookie[rc.cookie]
    if p and not (exclude and exclude[p.id]) then
        return p
    end
    return self.rr:pick(rc, exclude)
end

-- header_filter (re)issues the cookie when the endpoint that served this
-- request is not the one the client's cookie named. Upstream Set-Cookie
-- headers are kept.
function _M.header_filter(self, rc)
    local p = rc.peer
    if not p or rc.cookie == p.cookie then
        return
    end
    -- Do not pin the client to an attempt that failed outright.
    local ht = ngx.var.upstream_header_time
    if ht and sub(ht, -1) == "-" then
        return
    end
    local c = self.cookie_name .. "=" .. p.cookie .. self.attrs
    local h = ngx.header["Set-Cookie"]
    if h == nil then
        ngx.header["Set-Cookie"] = c
    elseif type(h) == "table" then
        h[#h + 1] = c
        ngx.header["Set-Cookie"] = h
    else
        ngx.header["Set-Cookie"] = { h, c }
    end
end

return _M
