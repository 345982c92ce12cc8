-- causeway.hosts: the hosts table, hosts served without a reload.
--
-- nginx picks a server block by server_name, fixed at the last reload.
-- Hosts that are alike share one server block (a shape), and each shared
-- shape has a second one, its hop server, on a unix socket. A host added
-- since the reload is an entry here (balancer.Host); the catch-all and
-- wildcard servers run
--
--   set_by_lua_block $causeway_hop { return require("causeway.hosts").hop() }
--   if ($causeway_hop) { return 599; }   # error_page 599 = @causeway_hop,
--                                        # which proxies to the socket
--
-- and the hop server of shape <id> runs
--
--   set_by_lua_block $causeway_hop { return require("causeway.hosts").arrive("<id>") }
--   if ($causeway_hop) { return 404; }
--
-- which gives the shared server's per-host map variables the host's
-- values. By SNI, certs.serve serves the host's own certificate (cert).
--
-- Layout in lua_shared_dict causeway_state, beside causeway.store's keys:
--   hosts:ver           the current table's version (0: the empty table)
--   hosts:next          the last version handed out; none is used twice
--   hosts:staged        the version a replace is writing, until it is current
--   hosts:retired       the version the last replace retired (0: none)
--   hosts:names:<v>     the names of version v, serialised
--   hosts:e:<v>:<name>  the entry of name in version v, serialised
--   hosts:hop:<name>    name's hop socket: what hop() reads, one get on
--                       every request to the catch-all server
--
-- A replace (store's write lock held) writes the new version's entries,
-- points the hop keys of new and moved hosts at their sockets, and flips
-- hosts:ver. Every failure can happen only before the flip, and undoes
-- what was written. Then it deletes the hop keys of removed hosts and the
-- old version's entries, but for the removed and moved hosts, which stay
-- as the retired version until the next replace.
--
-- A request reads its hop key in the catch-all server and its entry in
-- the hop server, moments later (the same worker may run a whole replace
-- in between). So arrive() looks in the current version, then the staged
-- one, then the retired one, and takes the first entry of its shape: a
-- request that a hop key sent to a shape finds the entry of the table
-- that holds that hop key, whole, never another table's values.

local store = require("causeway.store")
local ngx_balancer = require("ngx.balancer")
local set_current_peer, set_more_tries = ngx_balancer.set_current_peer, ngx_balancer.set_more_tries
local get_last_failure = ngx_balancer.get_last_failure

local pairs, ipairs, pcall, type, tostring, sort = pairs, ipairs, pcall, type, tostring, table.sort
local log, ERR = ngx.log, ngx.ERR
local encode, decode = store.encode, store.decode

local _M = {}

local VER = "hosts:ver"
local NEXT = "hosts:next"
local STAGED = "hosts:staged"
local RETIRED = "hosts:retired"
local OTHERS = { STAGED, RETIRED } -- the versions arrive() falls back on
local NAMES = "hosts:names:"
local ENTRY = "hosts:e:"
local HOP = "hosts:hop:"

-- HEADERS carry the client's connection from the catch-all server to the
-- hop server; they never reach a backend.
local HEADERS = {
    "X-Causeway-Hop-Client", "X-Causeway-Hop-Proto", "X-Causeway-Hop-Host",
    "X-Causeway-Hop-Port", "X-Causeway-Hop-For", "X-Causeway-Hop-HSTS",
    "X-Causeway-Hop-Scheme",
}

local YIELD_EVERY = 1000  -- dict operations between yields of a replace
local MAX_CACHED = 20000  -- decoded entries a worker keeps

local shared
local function dict()
    if not shared then
        shared = ngx.shared[store.DICT]
    end
    return shared
end

local function ekey(ver, name)
    return ENTRY .. ver .. ":" .. name
end

---------------------------------------------------------------------------
-- Reader side.

-- This worker's decoded entries of version cache_ver ([name] = entry, or
-- false when name is not in it).
local cache, cache_n, cache_ver = {}, 0, false

local function fetch(d, ver, name)
    local blob = d:get(ekey(ver, name))
    if not blob then
        return false
    end
    local ok, e = pcall(decode, blob)
    if not ok or type(e) ~= "table" then
        log(ERR, "causeway: entry of host ", name, " in the hosts table is corrupt")
        return false
    end
    return e
end

local function cached(d, ver, name)
    if ver ~= cache_ver then
        cache, cache_n, cache_ver = {}, 0, ver
    end
    local e = cache[name]
    if e == nil then
        e = fetch(d, ver, name)
        if cache_n >= MAX_CACHED then
            cache, cache_n = {}, 0
        end
        cache[name], cache_n = e, cache_n + 1
    end
    return e
end

-- entry returns name's entry in the current table, nil when it has none.
-- With shape, it returns the first entry of that shape in the current,
-- staged or retired version.
local function entry(name, shape)
    local d = dict()
    local ver = d:get(VER) or 0
    local e = cached(d, ver, name)
    if not shape or (e and e.shape == shape) then
        return e or nil
    end
    for _ = 1, 2 do
        for _, key in ipairs(OTHERS) do
            local v = d:get(key)
            if v and v ~= 0 then
                e = fetch(d, v, name)
                if e and e.shape == shape then
                    return e
                end
            end
        end
        -- A replace may have flipped meanwhile: look again.
        local now = d:get(VER) or 0
        if now == ver then
            return nil
        end
        ver = now
        e = cached(d, ver, name)
        if e and e.shape == shape then
            return e
        end
    end
    return nil
end

-- hop returns the hop socket of the request's host, or "" when the host
-- is not in the table. It runs on every request to the catch-all and
-- wildcard servers: one shared-dict get, nothing decoded.
function _M.hop()
    return dict():get(HOP .. ngx.var.host) or ""
end

local function set_var(name, value)
    ngx.var[name] = value
end

-- arrive runs in the hop server of shape: it drops the hop headers and
-- gives the shared server's map variables the host's values. It returns
-- "1" (the server answers 404) when the host is not in the table as a
-- host of shape, else "".
function _M.arrive(shape)
    for _, h in ipairs(HEADERS) do
        ngx.req.clear_header(h)
    end
    local host = ngx.var.host
    local e = entry(host, shape)
    if not e then
        return "1"
    end
    for name, value in pairs(e.vars) do
        -- Only a table that does not fit this configuration names a
        -- variable it does not define.
        local ok, err = pcall(set_var, name, value)
        if not ok then
            log(ERR, "causeway: host ", host, ": cannot set $", name, ": ", err)
            return "1"
        end
    end
    return ""
end

-- balance runs in the causeway_hop upstream's balancer_by_lua: the peer
-- is the hop server's socket that hop() gave $causeway_hop, so that
-- nginx keeps connections to each hop server alive. One more try on the
-- same socket covers a kept-alive connection the hop server closed just
-- as it was reused (proxy_next_upstream error: never after a request
-- was sent unless idempotent).
function _M.balance()
    if not get_last_failure() then
        set_more_tries(1)
    end
    local ok, err = set_current_peer("unix:" .. ngx.var.causeway_hop)
    if not ok then
        log(ERR, "causeway: cannot set the hop server's socket ", ngx.var.causeway_hop, ": ", err)
        return ngx.exit(ngx.ERROR)
    end
end

-- cert returns the certificate path of host name, or nil when it is not
-- in the table or is served with its server's own.
function _M.cert(name)
    local e = entry(name)
    return e and e.cert or nil
end

---------------------------------------------------------------------------
-- Writer side: always under causeway.store's write lock (store.write
-- for a full state, store.exclusive for PUT /v1/hosts).

local function names_of(d, ver)
    if ver == 0 then
        return {}
    end
    local blob = d:get(NAMES .. ver)
    local ok, names = pcall(decode, blob)
    if not blob or not ok or type(names) ~= "table" then
        return nil
    end
    return names
end

local function full(d, what, err)
    return nil, 507, "shared dict " .. store.DICT .. " cannot hold the hosts table: "
        .. what .. ": " .. tostring(err)
end

-- drop deletes the entries of version ver and its list of names.
local function drop(d, ver, names, yield)
    for i, name in ipairs(names) do
        d:delete(ekey(ver, name))
        if yield and i % YIELD_EVERY == 0 then
            yield()
        end
    end
    d:delete(NAMES .. ver)
end

-- abort undoes a stage: the new version's keys and the hop keys it set.
function _M.abort(st)
    local d = dict()
    drop(d, st.ver, st.names, st.yield)
    -- The new entries' room is free again, so the old values fit.
    for name, prev in pairs(st.hops) do
        if prev then
            if not d:safe_set(HOP .. name, prev) then
                log(ERR, "causeway: cannot restore the hop of host ", name, " after a failed write")
            end
        else
            d:delete(HOP .. name)
        end
    end
    d:delete(STAGED)
end

-- stage writes tbl (causeway.validate's hosts) as a new version, not yet
-- current, and points the hop keys of its new and moved hosts at their
-- sockets. It returns what commit or abort takes, or nil, 507 and a
-- message, having changed nothing.
function _M.stage(tbl, yield)
    local d = dict()
    -- The numbers are stored before anything else so that commit rewrites
    -- them in place, which cannot fail.
    local cur = d:get(VER)
    local ok, err = true, nil
    if not cur then
        cur = 0
        ok, err = d:safe_set(VER, 0)
    end
    if ok and not d:get(RETIRED) then
        ok, err = d:safe_set(RETIRED, 0)
    end
    local ver = (d:get(NEXT) or cur) + 1
    if ok then
        ok, err = d:safe_set(NEXT, ver)
    end
    if ok then
        ok, err = d:safe_set(STAGED, ver)
    end
    if not ok then
        return full(d, "version", err)
    end
    local old = names_of(d, cur)
    if not old then
        -- The removed hosts' keys cannot be found: they stay behind, and
        -- arrive() refuses those hosts (they are in no version).
        log(ERR, "causeway: the names of hosts table version ", cur, " are unreadable")
        old = {}
    end
    local st = { cur = cur, ver = ver, entries = tbl.entries, names = tbl.names, old = old,
        hops = {}, yield = yield }
    local n = 0
    local function tick()
        n = n + 1
        if yield and n % YIELD_EVERY == 0 then
            yield()
        end
    end
    for _, name in ipairs(tbl.names) do
        ok, err = d:safe_set(ekey(ver, name), encode(tbl.entries[name]))
        if not ok then
            _M.abort(st)
            return full(d, "host " .. name, err)
        end
        tick()
    end
    ok, err = d:safe_set(NAMES .. ver, encode(tbl.names))
    if not ok then
        _M.abort(st)
        return full(d, "names", err)
    end
    for _, name in ipairs(tbl.names) do
        local hop = tbl.entries[name].hop
        local prev = d:get(HOP .. name)
        if prev ~= hop then
            st.hops[name] = prev or false
            ok, err = d:safe_set(HOP .. name, hop)
            if not ok then
                _M.abort(st)
                return full(d, "hop of host " .. name, err)
            end
        end
        tick()
    end
    return st
end

-- commit makes a staged version the table. The old version becomes the
-- retired one (and the version retired before goes), but only its
-- removed and moved hosts stay in it: for the others the new version has
-- an entry of the same shape. Nothing here can undo the commit. It
-- returns the number of hosts.
function _M.commit(st)
    local d = dict()
    local yield = st.yield
    -- The old version is retired, whole, before the flip: a request that
    -- a hop key sent to its shape always finds its entry somewhere.
    local prev = d:get(RETIRED) or 0
    d:safe_set(RETIRED, st.cur)
    if prev ~= 0 then
        drop(d, prev, names_of(d, prev) or {}, yield)
    end
    d:safe_set(VER, st.ver)
    d:delete(STAGED)
    if st.cur == 0 then
        return #st.names
    end
    local kept = {}
    for i, name in ipairs(st.old) do
        if not st.entries[name] then
            d:delete(HOP .. name)
            kept[#kept + 1] = name
        elseif st.hops[name] then
            kept[#kept + 1] = name -- moved to another shape
        else
            d:delete(ekey(st.cur, name))
        end
        if yield and i % YIELD_EVERY == 0 then
            yield()
        end
    end
    -- Deleted first: a failed safe_set may lose the old value anyway.
    d:delete(NAMES .. st.cur)
    if #kept == 0 or not d:safe_set(NAMES .. st.cur, encode(kept)) then
        d:safe_set(RETIRED, 0)
        drop(d, st.cur, kept, yield)
    end
    return #st.names
end

-- replace makes tbl the table; for PUT /v1/hosts, under store.exclusive.
-- It returns { hosts = n }, or nil, an HTTP status and a message.
function _M.replace(tbl, yield)
    local st, status, msg = _M.stage(tbl, yield)
    if not st then
        return nil, status, msg
    end
    return { hosts = _M.commit(st) }
end

-- dump returns the current table as a list of entries sorted by name
-- (balancer.Host), for GET /v1/state; nil and a message if unreadable.
function _M.dump()
    local d = dict()
    for _ = 1, 5 do
        local ver = d:get(VER) or 0
        local names = names_of(d, ver)
        local list = {}
        for _, name in ipairs(names or {}) do
            local e = fetch(d, ver, name)
            if not e then
                list = nil
                break
            end
            list[#list + 1] = { name = name, shape = e.shape, hop = e.hop, cert = e.cert, vars = e.vars }
        end
        if names and list then
            sort(list, function(a, b) return a.name < b.name end)
            return list
        end
        if (d:get(VER) or 0) == ver then
            return nil, "the hosts table of version " .. ver .. " is incomplete"
        end
        -- A replace retired ver while we read it.
    end
    return nil, "the hosts table keeps changing"
end

return _M
