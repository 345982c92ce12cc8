-- causeway.store: the endpoint state in the shared dict, and each
-- worker's decoded view of it.
--
-- Layout of lua_shared_dict causeway_state:
--   seq        write counter; bumped last, after the new state is stored
--   gen        the controller's generation of the current state
--   count      number of backends in the current state
--   state0/1   the state for even/odd seq (double-buffered, see write)
--   lock       held while a write is in progress
-- A state blob is the serialisation of
--   { seq = n, generation = g, backends = { [key] = backend blob } }
-- where each backend blob serialises one validated backend on its own.
--
-- Propagation: every request reads "seq" (one cheap shared-dict get). When
-- it differs from what this worker last applied, the worker decodes the
-- new state and drops its instances of the backends whose blob changed;
-- each is rebuilt on its next request. So a change is visible to every
-- worker from the first request that starts after the write returned: no
-- timer, no polling interval.

local backend = require("causeway.backend")
local json = require("causeway.json")
local stats = require("causeway.stats")

local pairs, ipairs, pcall, type = pairs, ipairs, pcall, type
local log, ERR = ngx.log, ngx.ERR
local tostring = tostring

local _M = {}

_M.DICT = "causeway_state"

-- LuaJIT's string.buffer (present in Debian's and OpenResty's LuaJIT)
-- serialises tables far faster than JSON; fall back to JSON without it.
local encode, decode
do
    local ok, buffer = pcall(require, "string.buffer")
    if ok then
        encode, decode = buffer.encode, buffer.decode
    else
        encode = function(v)
            return assert(json.encode(v))
        end
        decode = function(s)
            return assert(json.decode(s))
        end
    end
end

local function dict()
    return ngx.shared[_M.DICT]
end

local function slot(seq)
    return (seq % 2 == 0) and "state0" or "state1"
end

-- read returns the decoded current state (backend blobs still encoded),
-- nil when nothing was ever written, or nil and an error.
local function read()
    local d = dict()
    local seq = d:get("seq")
    if not seq then
        return nil
    end
    local blob = d:get(slot(seq))
    if not blob then
        return nil, "state blob for seq " .. seq .. " is missing"
    end
    local ok, st = pcall(decode, blob)
    if not ok or type(st) ~= "table" or type(st.backends) ~= "table" then
        return nil, "state blob for seq " .. seq .. " is corrupt"
    end
    return st
end

---------------------------------------------------------------------------
-- Writer side (the dynamic-socket handler, in whichever worker got it).

local LOCK_TRIES = 200    -- x 10 ms: wait up to 2 s for a concurrent write
local LOCK_EXPIRY = 5     -- seconds; frees the lock if its holder died
                          -- (a write of 10,000 backends takes ~0.1 s)

-- pause waits 10 ms: ngx.sleep where the context can yield, else (in
-- init_by_lua, which cannot) a blocking usleep, then refreshes nginx's
-- cached clock, by which the shared dict expires the lock.
local usleep
local function pause(blocking)
    if not blocking then
        return ngx.sleep(0.01)
    end
    if not usleep then
        local ffi = require("ffi")
        pcall(ffi.cdef, "int usleep(unsigned int usec);") -- may be declared already
        usleep = ffi.C.usleep
    end
    usleep(10000)
    ngx.update_time()
end

local function lock(blocking)
    local d = dict()
    for _ = 1, LOCK_TRIES do
        local ok, err = d:add("lock", ngx.worker.pid(), LOCK_EXPIRY)
        if ok then
            return true
        end
        if err ~= "exists" then
            return nil, err
        end
        pause(blocking)
    end
    return nil, "timed out waiting for a concurrent write"
end

local function unlock()
    dict():delete("lock")
end

local function write_locked(req, replace, yield)
    local d = dict()
    local cur, err = read()
    if err then
        -- Not fatal for a full replace; an update needs the base state.
        if not replace then
            return nil, 500, err
        end
        log(ERR, "causeway: replacing unreadable state: ", err)
        cur = nil
    end
    -- Only an update is ordered by generation: it applies on top of the
    -- current state. A full replace is authoritative whatever its
    -- generation, which is only recorded: a state pushed with a huge
    -- generation (stale, or not the controller's) must never lock out the
    -- controller's later pushes, and a restarted controller whose clock
    -- is behind must converge at once.
    if cur and req.generation < cur.generation then
        if not replace then
            return nil, 409, "generation " .. req.generation
                .. " is older than the current generation " .. cur.generation
        end
        log(ngx.NOTICE, "causeway: full state of generation ", req.generation,
            " replaces generation ", cur.generation)
    end
    -- An update with a base applies only on top of exactly that state:
    -- the controller computed it as a difference from what it pushed
    -- last, so on any other state (a foreign push, a reload that loaded
    -- an older file) it would leave a mixture; the controller then sends
    -- a full state instead.
    if not replace and req.base ~= nil then
        local have = cur and cur.generation or 0
        if have ~= req.base then
            return nil, 409, "the state is at generation " .. have
                .. ", not the base " .. req.base .. " of this update"
        end
    end
    local map = {}
    if cur and not replace then
        for k, v in pairs(cur.backends) do
            map[k] = v
        end
    end
    for _, k in ipairs(req.delete) do
        map[k] = nil
    end
    for i, b in ipairs(req.backends) do
        map[b.key] = encode(b)
        if yield and i % 1000 == 0 then
            yield()
        end
    end
    local count = 0
    for _ in pairs(map) do
        count = count + 1
    end
    local seq = (d:get("seq") or 0) + 1
    local blob = encode({ seq = seq, generation = req.generation, backends = map })
    -- The new state goes to the slot not in use. safe_set never evicts
    -- other keys; if it fails for lack of memory only the unused slot is
    -- lost, and the current state keeps serving.
    local ok, serr = d:safe_set(slot(seq), blob)
    if not ok then
        return nil, 507, "shared dict " .. _M.DICT .. " cannot hold the new state ("
            .. #blob .. " bytes): " .. tostring(serr)
    end
    d:safe_set("gen", req.generation)
    d:safe_set("count", count)
    ok, serr = d:safe_set("seq", seq) -- publish
    if not ok then
        return nil, 507, "cannot publish the new state: " .. tostring(serr)
    end
    return { generation = req.generation, seq = seq, backends = count }
end

-- write stores a validated request (see causeway.validate): replace=true
-- swaps in exactly req.backends, whatever its generation; otherwise
-- req.backends are upserted and req.delete removed, unless req.generation
-- is older than the current one or req.base is set and is not the current
-- generation (409). It returns a summary table, or nil,
-- an HTTP status and a message. On any failure the previous state stays
-- in force. yield (optional) is called now and then while encoding a
-- large state.
function _M.write(req, replace, yield)
    local ok, err = lock()
    if not ok then
        return nil, 503, "state is busy: " .. err
    end
    local pok, res, status, msg = pcall(write_locked, req, replace, yield)
    unlock()
    if not pok then
        error(res, 0) -- a bug: nginx logs it and answers 500
    end
    return res, status, msg
end

-- load replaces the state with what read() returns (a validated state
-- request, or nil and a message), calling read while holding the write
-- lock. For the state file loaded at every (re)start: the controller
-- rewrites that file before each push, so a file read under the lock is
-- never older than a push that already took the lock, and a push that
-- takes it later wins. The wait for the lock blocks, since init_by_lua
-- cannot yield. Returns the summary, or nil and a message.
function _M.load(read)
    local ok, err = lock(true)
    if not ok then
        return nil, "state is busy: " .. err
    end
    local pok, res, msg = pcall(function()
        local req, rerr = read()
        if not req then
            return nil, rerr
        end
        local r, _, m = write_locked(req, true)
        return r, m
    end)
    unlock()
    if not pok then
        error(res, 0)
    end
    return res, msg
end

-- status returns what the controller needs to verify a push.
function _M.status()
    local d = dict()
    return {
        generation = d:get("gen") or 0,
        seq = d:get("seq") or 0,
        backends = d:get("count") or 0,
    }
end

-- dump returns the current state as validated backend tables, sorted by
-- key, for GET /v1/state.
function _M.dump()
    local st, err = read()
    if err then
        return nil, err
    end
    local list = {}
    if st then
        for _, blob in pairs(st.backends) do
            list[#list + 1] = decode(blob)
        end
        table.sort(list, function(a, b) return a.key < b.key end)
    end
    return { generation = st and st.generation or 0, backends = list }
end

---------------------------------------------------------------------------
-- Reader side: this worker's view.

local view_seq = false -- seq last applied; false = never synced
local blobs = {}       -- [key] = backend blob in the applied state
local instances = {}   -- [key] = instance built from blobs[key], or false
                       --         if that blob could not be built

-- sync applies a new state to this worker's view. It only notes which
-- backends changed; each is rebuilt on its first request (lookup), so a
-- push touching 10,000 backends does not stall one request for all of
-- them.
local function sync(seq)
    if not seq then
        -- Nothing written yet (fresh shared dict): no backends at all.
        for k in pairs(blobs) do
            stats.forget(k)
        end
        blobs, instances, view_seq = {}, {}, seq
        return
    end
    local st, err = read()
    if not st then
        -- Keep serving the old view; retry on the next request.
        log(ERR, "causeway: cannot load state: ", err or "no state")
        return
    end
    local backends = st.backends
    for key, blob in pairs(backends) do
        if blobs[key] ~= blob then
            blobs[key], instances[key] = blob, nil
        end
    end
    for key in pairs(blobs) do
        if backends[key] == nil then
            blobs[key], instances[key] = nil, nil
            stats.forget(key)
        end
    end
    view_seq = st.seq
end

local function build(blob)
    return backend.new(decode(blob))
end

-- instance builds and caches key's balancer instance (false if it cannot
-- be built). Kept out of lookup: its pcall must not make lookup, which
-- runs on every request, untraceable for the JIT compiler.
local function instance(key)
    local blob = blobs[key]
    if not blob then
        return nil
    end
    local ok, res = pcall(build, blob)
    if not ok then
        -- Validated on write, so this is a bug; do not retry per request.
        log(ERR, "causeway: cannot build backend ", key, ": ", res)
        res = false
    end
    instances[key] = res
    return res
end

-- cached returns this worker's instance for key from the current view.
local function cached(key)
    local inst = instances[key]
    if inst == nil then
        inst = instance(key)
    end
    return inst or nil
end

-- lookup returns this worker's balancer instance for key (nil if the key
-- is unknown), first applying any newer state. It runs on every request:
-- keep it free of closures, pcall and anything else LuaJIT cannot compile
-- (check with jit.v, see docs/load-balancing.md).
function _M.lookup(key)
    local seq = dict():get("seq")
    if seq ~= view_seq then
        sync(seq)
    end
    return cached(key)
end

-- lookup_synced is lookup for a request that already called lookup: the
-- view is current, so the shared dict is not read again (a canary split
-- looks up its two backends this way).
_M.lookup_synced = cached

return _M
