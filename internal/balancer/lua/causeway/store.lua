-- causeway.store: the endpoint state in the shared dict, and each
-- worker's decoded view of it.
--
-- Layout of lua_shared_dict causeway_state:
--   seq        write counter; bumped last, after the new state is stored
--   gen        the controller's generation of the current state
--   count      number of backends in the current state
--   b:<key>    one validated backend, serialised on its own
--   keys       the set of backend keys, serialised: read for a full view
--   log:<seq>  what write <seq> changed: the list of keys it upserted or
--              removed, or "*" for a full replace; kept LOG_TTL seconds
--   lock       held while a write is in progress
--   hosts:*    the hosts table (causeway.hosts), written under the same
--              lock: a full state replaces it with the backends
-- So a write costs what it changes: an update of one backend among
-- 10,000 stores that backend (and the log), not the whole state.
--
-- Propagation: every request reads "seq" (one cheap shared-dict get). When
-- it differs from what this worker last applied, the worker reads the
-- logs of the writes it missed and drops its instances of the backends
-- they name; each is rebuilt on its next request. A worker that missed a
-- full replace, or more writes than the logs still hold, reads every
-- backend again. So a change is visible to every worker from the first
-- request that starts after the write returned, with no timer or polling
-- interval in the way. A timer (keep_up) only spares requests work: each
-- worker also applies what it missed every second, so one that sat idle
-- does not read every backend again on a client's request.

local backend = require("causeway.backend")
local json = require("causeway.json")
local stats = require("causeway.stats")

local pairs, ipairs, pcall, type = pairs, ipairs, pcall, type
local log, ERR, INFO = ngx.log, ngx.ERR, ngx.INFO
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

-- causeway.hosts stores its entries the same way.
_M.encode, _M.decode = encode, decode

local LOG_TTL = 120       -- seconds a write's log is kept
local LOG_MAX = 256       -- a worker further behind reads everything
local FULL = "*"          -- the log of a full replace

local function dict()
    return ngx.shared[_M.DICT]
end

local function bkey(key)
    return "b:" .. key
end

-- keyset returns the current set of keys ({key = true}), or nil and an
-- error.
local function keyset(d)
    local blob = d:get("keys")
    if not blob then
        return {}
    end
    local ok, set = pcall(decode, blob)
    if not ok or type(set) ~= "table" then
        return nil, "the key set of the state is corrupt"
    end
    return set
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

-- publish makes write seq visible: its log, then seq itself.
local function publish(d, seq, gen, count, changed)
    local ok, err = d:safe_set("log:" .. seq, changed, LOG_TTL)
    if not ok then
        -- Without its log every worker reads the whole state at seq.
        log(ERR, "causeway: cannot store the log of write ", seq, ": ", err)
    end
    d:safe_set("gen", gen)
    d:safe_set("count", count)
    return d:safe_set("seq", seq)
end

local function write_locked(req, replace, yield)
    local d = dict()
    local cur_gen = d:get("gen") or 0
    local have = d:get("seq") ~= nil
    -- Only an update is ordered by generation: it applies on top of the
    -- current state. A full replace is authoritative whatever its
    -- generation, which is only recorded: a state pushed with a huge
    -- generation (stale, or not the controller's) must never lock out the
    -- controller's later pushes, and a restarted controller whose clock
    -- is behind must converge at once.
    if have and req.generation < cur_gen then
        if not replace then
            return nil, 409, "generation " .. req.generation
                .. " is older than the current generation " .. cur_gen
        end
        log(ngx.NOTICE, "causeway: full state of generation ", req.generation,
            " replaces generation ", cur_gen)
    end
    -- An update with a base applies only on top of exactly that state:
    -- the controller computed it as a difference from what it pushed
    -- last, so on any other state (a foreign push, a reload that loaded
    -- an older file) it would leave a mixture; the controller then sends
    -- a full state instead.
    if not replace and req.base ~= nil then
        local at = have and cur_gen or 0
        if at ~= req.base then
            return nil, 409, "the state is at generation " .. at
                .. ", not the base " .. req.base .. " of this update"
        end
    end
    -- The key set is read only when it may change: for a full replace,
    -- and for an update adding or removing a backend, not for one that
    -- changes backends in place (an endpoint change: the frequent case).
    local keys
    if replace then
        local err
        keys, err = keyset(d)
        if not keys then
            -- Not fatal for a full replace: it rewrites every backend.
            log(ERR, "causeway: replacing unreadable state: ", err)
            keys = {}
        end
    end
    -- The new blobs, and what each key held before (false: nothing), to
    -- put back should the dict run out of room half way.
    local new, old = {}, {}
    local changed = {}
    for i, b in ipairs(req.backends) do
        new[b.key] = encode(b)
        if yield and i % 1000 == 0 then
            yield()
        end
    end
    local del = {}
    if replace then
        for k in pairs(keys) do
            if new[k] == nil then
                del[#del + 1] = k
            end
        end
    else
        for _, k in ipairs(req.delete) do
            if d:get(bkey(k)) ~= nil then
                del[#del + 1] = k
            end
        end
    end
    local count = d:get("count") or 0
    local added = {}
    local failed
    for k, blob in pairs(new) do
        local prev = d:get(bkey(k))
        if prev ~= blob then
            old[k] = prev or false
            local ok, serr = d:safe_set(bkey(k), blob)
            if not ok then
                failed = serr
                break
            end
            changed[#changed + 1] = k
        end
        if prev == nil then
            added[#added + 1] = k
        end
    end
    if not failed and (#added > 0 or #del > 0) then
        if not keys then
            local err
            keys, err = keyset(d)
            if not keys then
                failed = err
            end
        end
        if keys then
            for _, k in ipairs(added) do
                keys[k] = true
            end
            for _, k in ipairs(del) do
                keys[k] = nil
            end
            local ok, serr = d:safe_set("keys", encode(keys))
            if not ok then
                failed = serr
            end
        end
    end
    if failed then
        -- Put back what was written; the current state keeps serving. A
        -- worker that read a new blob meanwhile reads everything again at
        -- the write that follows (its log is FULL).
        for k, prev in pairs(old) do
            if prev then
                if not d:safe_set(bkey(k), prev) then
                    log(ERR, "causeway: cannot restore backend ", k, " after a failed write")
                end
            else
                d:delete(bkey(k))
            end
        end
        -- safe_set never evicts other keys (set would: a backend).
        d:safe_set("dirty", true)
        return nil, 507, "shared dict " .. _M.DICT .. " cannot hold the new state: " .. tostring(failed)
    end
    for _, k in ipairs(del) do
        d:delete(bkey(k))
        changed[#changed + 1] = k
    end
    count = count + #added - #del
    local seq = (d:get("seq") or 0) + 1
    local entry = FULL
    if not replace and not d:get("dirty") then
        entry = encode(changed)
    end
    d:delete("dirty")
    local ok, serr = publish(d, seq, req.generation, count, entry)
    if not ok then
        d:safe_set("dirty", true) -- the next write is read whole
        return nil, 507, "cannot publish the new state: " .. tostring(serr)
    end
    return { generation = req.generation, seq = seq, backends = count }
end

-- write_state is write_locked, but a full state's hosts table (see
-- causeway.validate's state) is staged first and made current only once
-- the backends are stored, so the state applies whole or not at all.
local function write_state(req, replace, yield)
    if not (replace and req.hosts) then
        return write_locked(req, replace, yield)
    end
    local hosts = require("causeway.hosts") -- which requires this module
    local staged, status, msg = hosts.stage(req.hosts, yield)
    if not staged then
        return nil, status, msg
    end
    local res
    res, status, msg = write_locked(req, replace, yield)
    if not res then
        hosts.abort(staged)
        return nil, status, msg
    end
    res.hosts = hosts.commit(staged)
    return res
end

-- write stores a validated request (see causeway.validate): replace=true
-- swaps in exactly req.backends, whatever its generation; otherwise
-- req.backends are upserted and req.delete removed, unless req.generation
-- is older than the current one or req.base is set and is not the current
-- generation (409). It returns a summary table, or nil, an HTTP status and
-- a message. On any failure the previous state stays in force. yield
-- (optional) is called now and then while encoding a large state.
function _M.write(req, replace, yield)
    return _M.exclusive(write_state, req, replace, yield)
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
        local r, _, m = write_state(req, true)
        return r, m
    end)
    unlock()
    if not pok then
        error(res, 0)
    end
    return res, msg
end

-- exclusive runs fn(...) holding the write lock: write's, and a write of
-- another table in the dict (causeway.hosts's) that must be ordered with
-- the state's writes and the state file's load. It returns what fn returns:
-- a result, or nil, an HTTP status and a message; 503 when the lock stays
-- busy.
function _M.exclusive(fn, ...)
    local ok, err = lock()
    if not ok then
        return nil, 503, "state is busy: " .. err
    end
    local pok, res, status, msg = pcall(fn, ...)
    unlock()
    if not pok then
        error(res, 0) -- a bug: nginx logs it and answers 500
    end
    return res, status, msg
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
    local d = dict()
    local keys, err = keyset(d)
    if not keys then
        return nil, err
    end
    local list = {}
    for k in pairs(keys) do
        local blob = d:get(bkey(k))
        if not blob then
            return nil, "backend " .. k .. " of the state is missing"
        end
        list[#list + 1] = decode(blob)
    end
    table.sort(list, function(a, b) return a.key < b.key end)
    return { generation = d:get("gen") or 0, backends = list }
end

---------------------------------------------------------------------------
-- Reader side: this worker's view.

local view_seq = false -- seq last applied; false = never synced
local blobs = {}       -- [key] = backend blob in the applied state
local instances = {}   -- [key] = instance built from blobs[key], or false
                       --         if that blob could not be built

-- refresh makes key's entry of this worker's view the dict's.
local function refresh(d, key)
    local blob = d:get(bkey(key))
    if blobs[key] ~= blob then
        blobs[key], instances[key] = blob, nil
        if blob == nil then
            stats.forget(key)
        end
    end
end

-- reread reads every backend again (a full replace, or a worker too far
-- behind the logs); false when the key set cannot be read.
local function reread(d)
    local keys, err = keyset(d)
    if not keys then
        log(ERR, "causeway: cannot load state: ", err)
        return false
    end
    for key in pairs(keys) do
        refresh(d, key)
    end
    -- Not in the set: gone, whatever b:<key> still holds (a replace over
    -- an unreadable set cannot know which blobs to delete).
    for key in pairs(blobs) do
        if not keys[key] then
            blobs[key], instances[key] = nil, nil
            stats.forget(key)
        end
    end
    return true
end

-- catch_up applies the logs of writes from+1 to to; false when one is
-- missing or a full replace.
local function catch_up(d, from, to)
    if to - from > LOG_MAX then
        return false
    end
    local logs = {}
    for s = from + 1, to do
        local entry = d:get("log:" .. s)
        if entry == nil or entry == FULL then
            return false
        end
        logs[#logs + 1] = entry
    end
    for _, entry in ipairs(logs) do
        local ok, keys = pcall(decode, entry)
        if not ok or type(keys) ~= "table" then
            return false
        end
        for _, key in ipairs(keys) do
            refresh(d, key)
        end
    end
    return true
end

-- sync applies a new state to this worker's view. It only notes which
-- backends changed; each is rebuilt on its first request (lookup), so a
-- push touching 10,000 backends does not stall one request for all of
-- them. Kept out of lookup, which must stay traceable.
local function sync(seq)
    if not seq then
        -- Nothing written yet (fresh shared dict): no backends at all.
        for k in pairs(blobs) do
            stats.forget(k)
        end
        blobs, instances, view_seq = {}, {}, seq
        return
    end
    local d = dict()
    if view_seq and view_seq < seq and catch_up(d, view_seq, seq) then
        view_seq = seq
        return
    end
    if reread(d) then
        log(INFO, "causeway: this worker read the whole state again (write ", seq, ")")
        view_seq = seq
    end -- else keep serving the old view; retry on the next request
end

-- KEEP_UP is how often (seconds) a worker applies the writes it missed
-- without waiting for a request. The request path still compares seq
-- first, so no change waits for this timer; the timer only takes work
-- off requests. Without it, a worker that served nothing for a while
-- (a new worker after a start or a reload, or one whose clients keep
-- their connections on another worker) fell behind the logs (LOG_TTL,
-- LOG_MAX) and paid for reading every backend again on its next
-- request: 15-25 ms at 10,000 backends on a quiet machine, 0.3-0.4 s
-- measured on a busy one (bench/scale/README.md).
local KEEP_UP = 1

local function keep_up(premature)
    if premature then
        return
    end
    local seq = dict():get("seq")
    if seq ~= view_seq then
        sync(seq)
    end
end

-- init_worker brings this worker's view up to date as soon as its event
-- loop runs, before it has taken a request, and keeps it so.
function _M.init_worker()
    local ok, err = ngx.timer.at(0, keep_up)
    if ok then
        ok, err = ngx.timer.every(KEEP_UP, keep_up)
    end
    if not ok then
        log(ERR, "causeway: cannot start the timer that keeps this worker's view current: ", err)
    end
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
