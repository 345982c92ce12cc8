-- causeway.digest: HTTP Digest authentication (RFC 7616 with MD5 and
-- qop "auth", and RFC 2069's form without qop), ingress-nginx's
-- auth-type digest. Debian's nginx has no digest module, so a location
-- with digest authentication runs
--
--   set $causeway_digest_realm "<realm>";
--   set $causeway_digest_file "/state/secrets/ns_name_htdigest.htpasswd";
--   access_by_lua_block { require("causeway.digest").check() }
--
-- The realm and the path reach Lua through nginx variables, quoted by the
-- renderer, never through Lua source. The file holds "user:realm:HA1"
-- lines the controller validated; each worker reads it at most once a
-- second, so a changed Secret applies without a reload.
--
-- Nonces are "<time>-<mac>", the MAC an HMAC-SHA1 of the time under a key
-- read from /dev/urandom when nginx loads its configuration, so a reload
-- retires every nonce (clients then get stale=true and retry without
-- asking the user). A nonce is good for NONCE_LIFETIME seconds; its
-- request counter is not tracked, so within that time a captured request
-- could be replayed to the same URI (nginx's third-party digest module
-- tracks counters; this one does not).

local ngx = ngx
local var = ngx.var
local md5, hmac_sha1, encode_base64 = ngx.md5, ngx.hmac_sha1, ngx.encode_base64
local time = ngx.time
local byte, sub, find, lower, gsub = string.byte, string.sub, string.find, string.lower, string.gsub
local tonumber, tostring, io_open = tonumber, tostring, io.open
local authfile = require("causeway.authfile")
local log, ERR = ngx.log, ngx.ERR

local _M = {}

local NONCE_LIFETIME = 300
local MAX_HEADER = 4096

local key -- the nonces' HMAC key

-- init reads the nonce key; it runs in init_by_lua, in the master.
function _M.init()
    local f = io_open("/dev/urandom", "rb")
    if f then
        key = f:read(32)
        f:close()
    end
    if not key or #key ~= 32 then
        -- Without a key no nonce is accepted: every request gets 401.
        key = nil
        log(ERR, "causeway: digest: cannot read /dev/urandom; digest authentication refuses every request")
    end
end

-- users_of reads "user:realm:ha1" lines, as the controller wrote them
-- (no ':' in user or realm, ha1 32 lower-case hex digits), into
-- { [realm] = { [user] = ha1 } }; an unreadable file has no users.
local function users_of(path)
    return authfile.read(path, "digest", function(line, users)
        local u, r, h = line:match("^([^:]+):([^:]*):(%x+)$")
        if u and #h == 32 then
            users[r] = users[r] or {}
            users[r][u] = h
        end
    end) or {}
end

local function mac(t)
    local m = gsub(encode_base64(hmac_sha1(key, t)), "[+/=]", { ["+"] = "-", ["/"] = "_", ["="] = "" })
    return m
end

local function new_nonce()
    local t = tostring(time())
    return t .. "-" .. mac(t)
end

-- nonce_state is "ok", "stale" (well formed, ours, too old) or nil.
local function nonce_state(n)
    local t, m = n:match("^(%d+)-([%w_%-]+)$")
    if not t or not key or #t > 12 or m ~= mac(t) then
        return nil
    end
    local age = time() - tonumber(t)
    if age < 0 or age > NONCE_LIFETIME then
        return "stale"
    end
    return "ok"
end

local function challenge(realm, stale)
    ngx.header["WWW-Authenticate"] = 'Digest realm="' .. realm .. '", qop="auth", algorithm=MD5, nonce="'
        .. new_nonce() .. '"' .. (stale and ", stale=true" or "")
    return ngx.exit(401)
end

-- parse reads the parameters of a Digest Authorization header:
-- name=token or name="quoted string" (with backslash escapes), separated
-- by commas. It returns nil for anything else.
local function parse(h)
    local p, i, n = {}, 1, #h
    while i <= n do
        local s, e, name = find(h, "^[ \t,]*([%w%-]+)[ \t]*=[ \t]*", i)
        if not s then
            if find(h, "^[ \t,]*$", i) then
                break
            end
            return nil
        end
        name = lower(name)
        i = e + 1
        local v
        if byte(h, i) == 34 then -- '"'
            local buf, j = {}, i + 1
            while true do
                local c = byte(h, j)
                if not c then
                    return nil
                elseif c == 92 then -- '\'
                    buf[#buf + 1] = sub(h, j + 1, j + 1)
                    j = j + 2
                elseif c == 34 then
                    break
                else
                    buf[#buf + 1] = sub(h, j, j)
                    j = j + 1
                end
            end
            v = table.concat(buf)
            i = j + 1
        else
            local _, e2, tok = find(h, "^([^ \t,]*)", i)
            v = tok
            i = e2 + 1
        end
        if p[name] then
            return nil -- a repeated parameter
        end
        p[name] = v
    end
    return p
end

-- check answers 401 with a challenge unless the request carries Digest
-- credentials of a user of the file for this realm.
function _M.check()
    local realm, path = var.causeway_digest_realm, var.causeway_digest_file
    if not realm or not path or path == "" then
        return ngx.exit(500)
    end
    local h = var.http_authorization
    if not h or #h > MAX_HEADER or lower(sub(h, 1, 7)) ~= "digest " then
        return challenge(realm)
    end
    local p = parse(sub(h, 8))
    if not p or not p.username or not p.nonce or not p.uri or not p.response or p.realm ~= realm then
        return challenge(realm)
    end
    if p.algorithm and lower(p.algorithm) ~= "md5" then
        return challenge(realm)
    end
    -- The credentials must be for this request: the URI as sent.
    if p.uri ~= var.request_uri then
        return ngx.exit(400)
    end
    local state = nonce_state(p.nonce)
    if not state then
        return challenge(realm)
    end
    local in_realm = users_of(path)[realm]
    local ha1 = in_realm and in_realm[p.username]
    if not ha1 then
        return challenge(realm)
    end
    local ha2 = md5(var.request_method .. ":" .. p.uri)
    local want
    if p.qop == "auth" then
        if not p.nc or not p.cnonce or not p.nc:match("^%x%x%x%x%x%x%x%x$") then
            return challenge(realm)
        end
        want = md5(ha1 .. ":" .. p.nonce .. ":" .. p.nc .. ":" .. p.cnonce .. ":auth:" .. ha2)
    elseif p.qop == nil then
        want = md5(ha1 .. ":" .. p.nonce .. ":" .. ha2)
    else
        return challenge(realm)
    end
    if lower(p.response) ~= want then
        return challenge(realm)
    end
    if state == "stale" then
        -- Right password, old nonce: the client retries with a new one.
        return challenge(realm, true)
    end
end

return _M
