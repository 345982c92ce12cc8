-- causeway.balancer: the entry points nginx calls.
--
--   init_by_lua           init()          fail fast on a missing dict
--   init_worker_by_lua    init_worker()   seed this worker's RNG, keep its
--                                         view of the state current
--   balancer_by_lua       balance()       choose the peer (and on retries)
--                         balance_auth()  the same for external auth's Services
--   access_by_lua         access()        a split with answers or header
--                                         edits: pick once, answer from a
--                                         named location or set the edited
--                                         headers' variables
--   header_filter_by_lua  header_filter() sticky cookie
--   log_by_lua            log()           in-flight and latency accounting
--
-- The location names its backend with  set $causeway_backend "<key>";
-- Per-request data lives in ngx.ctx.causeway, kept only by methods that
-- need it after the balancer (in-flight counts, latency, sticky cookies)
-- and on retries. Only the balancer runs on every request (an access hook
-- would cost a Lua coroutine per request): a backend without a ready
-- endpoint is sent to a local server that answers 503, because a balancer
-- can pick a peer but not answer. The exception is a split that may
-- pick an answer (a redirect or return) instead of a backend, or a
-- backend with request header edits of its own: only its locations have
-- the access hook, which picks once.

local store = require("causeway.store")
local stats = require("causeway.stats")
local peers = require("causeway.peers")
local text = require("causeway.vars").text
local ngx_balancer = require("ngx.balancer")

local set_current_peer = ngx_balancer.set_current_peer
local set_more_tries = ngx_balancer.set_more_tries
local get_last_failure = ngx_balancer.get_last_failure
local match, gmatch, lower, min, random = string.match, string.gmatch, string.lower, math.min, math.random
local ipairs = ipairs
local re_find = ngx.re.find
local tonumber = tonumber
local log, ERR, WARN = ngx.log, ngx.ERR, ngx.WARN

-- TRIES is balancer.TriesVariable: set by a location with a Gateway API
-- retry, the number of tries of its requests, the first included.
local TRIES = "causeway_tries"

local _M = {}

-- unavailable is the peer ("unix:/path") that answers 503, no_live the
-- one that answers 502.
local unavailable, no_live

-- load_state_file replaces the shared dict's state with the controller's
-- last full push, on every configuration load (in the master): at start
-- it fills the empty dict; at a reload it also undoes any write that did
-- not come from the controller, which rewrites the file before every push
-- (and before every reload, with the backends new locations will need).
-- The file is read under the write lock, so a push racing a reload is
-- never overwritten by an older file (see store.load).
local function load_state_file(path)
    local res, msg = store.load(function()
        local f = io.open(path, "rb")
        if not f then
            return nil -- first start: nothing pushed yet
        end
        local body = f:read("*a")
        f:close()
        local req, err = require("causeway.validate").state(body)
        if not req then
            return nil, "invalid: " .. err
        end
        return req
    end)
    if not res and msg then
        log(ERR, "causeway: state file ", path, " not loaded: ", msg)
    end
end

function _M.init(state_file, unavailable_peer, no_live_peer)
    unavailable, no_live = unavailable_peer, no_live_peer
    if not ngx.shared[store.DICT] then
        error("causeway: lua_shared_dict " .. store.DICT .. " is not configured")
    end
    -- Load every module in the master, before workers drop privileges.
    require("causeway.api")
    require("causeway.certs")
    require("causeway.hosts")
    require("causeway.digest").init()
    if state_file then
        load_state_file(state_file)
    end
end

function _M.init_worker()
    math.randomseed(ngx.worker.pid() * 1000 + ngx.now() * 1000)
    store.init_worker()
end

-- unavailable_peer sends the request to the local server that answers 503:
-- for an unknown backend or one without a ready endpoint. Never retried
-- (proxy_next_upstream does not cover a 503 answer).
local function unavailable_peer()
    local ok, err = set_current_peer(unavailable)
    if not ok then
        log(ERR, "causeway: cannot set the unavailable peer: ", err)
        return ngx.exit(ngx.ERROR)
    end
end

-- no_live_peer sends the request to the local server that answers 502,
-- as nginx does when every server of an upstream is out after failures
-- or at max_conns ("no live upstreams"). Never retried.
local function no_live_peer(key, rc)
    rc.peer, rc.no_live = nil, true
    log(ERR, "causeway: ", key, ": no live endpoint: every one is out after failures or at max_conns")
    local ok, err = set_current_peer(no_live)
    if not ok then
        log(ERR, "causeway: cannot set the no-live peer: ", err)
        return ngx.exit(ngx.ERROR)
    end
end

-- route_tries returns the tries a Gateway API retry grants the request
-- ($causeway_tries, whose location also caps them with
-- proxy_next_upstream_tries), nil without one.
local function route_tries()
    local v = text(TRIES)
    local n = v and tonumber(v)
    if n and n >= 1 then
        return n
    end
    return nil
end

-- grant returns the retries of a request's first attempt: a Gateway API
-- retry's, which may go to a peer already tried once every peer was,
-- else the backend's, each on another peer.
local function grant(inst)
    local tries = route_tries()
    if tries then
        return tries - 1
    end
    return min(inst.retries, inst.n - 1)
end

-- commit hands the picked peer to nginx (on the first attempt granting
-- more, the retries) and, for methods that keep per-request state,
-- records it and counts it in flight.
local function commit(key, inst, rc, peer, more)
    if not peer then
        log(ERR, "causeway: ", key, ": no peer to pick")
        return ngx.exit(ngx.ERROR)
    end
    local ok, err = set_current_peer(peer.host, peer.port)
    if not ok then
        log(ERR, "causeway: ", key, ": cannot set peer ", peer.id, ": ", err)
        return ngx.exit(ngx.ERROR)
    end
    if more and more > 0 then
        set_more_tries(more)
    end
    if not rc then
        return
    end
    rc.peer = peer
    if inst.counts_inflight then
        stats.acquire(key, peer.id)
        rc.counted = true
    end
end

-- tried_peers lists the peers this request has been sent to, from
-- $upstream_addr ("10.0.0.1:80, 10.0.0.2:80 : "): nginx formats each as
-- host:port with IPv6 hosts in brackets, exactly like a peer's id.
local function tried_peers()
    local tried = {}
    for a in gmatch(ngx.var.upstream_addr or "", "[^%s,]+") do
        if a ~= ":" then
            tried[a] = true
        end
    end
    return tried
end

-- affinity returns the backend of a canary split (model.Split.Primary)
-- whose peer the request's affinity cookie names, nil otherwise:
-- ingress-nginx keeps an affinitized request where it was, before any
-- rule. The primary is asked first. Only sticky backends have a
-- cookie_var.
local function affinity(s)
    local var = ngx.var
    for _, key in ipairs(s.affine) do
        local b = store.lookup_synced(key)
        if b and b.cookie_var then
            local v = var[b.cookie_var]
            if v and b.by_cookie[v] then
                return key
            end
        end
    end
    return nil
end

-- last_var and last_value keep the variable a decision read last: a
-- canary's rules read the same header (always, then never) and cookie
-- twice in a row, and an nginx variable costs a lookup each time. decide
-- forgets it first; nothing yields within a decision.
local last_var, last_value

local function read(var, name)
    if name ~= last_var then
        last_var, last_value = name, var[name]
    end
    return last_value
end

-- holds reports whether every condition of a split's rule holds: an
-- absent variable reads as "" for an exact or caseless comparison and
-- never matches a regex. nil: a regex failed to run (PCRE refused it;
-- ingress-nginx then keeps the request on the main backend).
local function holds(conds, key)
    local var = ngx.var
    for _, c in ipairs(conds) do
        local v = read(var, c.var)
        local ok
        if c.match == "regex" then
            ok = false
            if v then
                local from, _, err = re_find(v, c.value, "jo")
                if err then
                    log(ERR, "causeway: ", key, ": regex: ", err)
                    return nil
                end
                ok = from ~= nil
            end
        elseif c.match == "caseless" then
            ok = (v and lower(v) or "") == c.value
        else
            ok = (v or "") == c.value
        end
        if ok == c.negate then
            return false
        end
    end
    return true
end

-- affine_target returns the target of a list with affinity
-- (model.SplitRule.Affinity) whose sticky backend has the peer the
-- request's affinity cookie names, nil when none has.
local function affine_target(affine)
    local var = ngx.var
    for _, t in ipairs(affine) do
        local b = store.lookup_synced(t.backend)
        if b and b.cookie_var then
            local v = var[b.cookie_var]
            if v and b.by_cookie[v] then
                return t
            end
        end
    end
    return nil
end

-- pick_target draws one of weighted targets (in proportion to their
-- weights), unless the request's affinity cookie keeps it on one of
-- them: a table with a backend or an answer.
local function pick_target(targets)
    if targets.affine then
        local t = affine_target(targets.affine)
        if t then
            return t
        end
    end
    local r = random(targets.sum)
    for _, t in ipairs(targets) do
        r = r - t.weight
        if r <= 0 then
            return t
        end
    end
    return targets[#targets]
end

-- decide applies a split: a canary's affinity, then the first rule that
-- holds, else the default targets. A regex that fails to run sends a
-- canary's request to its primary, and does not hold otherwise.
local function decide(s)
    if s.primary then
        local b = affinity(s)
        if b then
            return s.pinned[b]
        end
    end
    last_var = nil
    for _, r in ipairs(s.rules) do
        local h = holds(r.conditions, s.key)
        if h then
            return pick_target(r.targets)
        elseif h == nil and s.primary then
            return s.pinned[s.primary]
        end
    end
    return pick_target(s.targets)
end

-- selected returns the backend a location names and its instance, nil
-- when it has no endpoint. A location may name a fallback backend
-- ($causeway_fallback, ingress-nginx's default-backend annotation) that
-- answers while its own backend has no endpoint. A location may also
-- name a split, which picks the backend per request (a canary's pick
-- without endpoints goes to its primary, as in ingress-nginx). The third
-- result is nil without a split, else whether a canary was picked.
local function selected()
    local key = ngx.var.causeway_backend
    local inst = key and key ~= "" and store.lookup(key)
    local canary = nil
    if inst and inst.split then
        local s = inst
        -- A split with answers or header edits was picked by the access
        -- hook (access).
        local t = s.early and ngx.ctx.causeway_choice or decide(s)
        if not t.backend then
            -- Only when the hook did not run (state newer than the
            -- configuration): there is no backend to pick.
            log(ERR, "causeway: ", key, ": chose answer ", t.answer, " outside the access phase")
            return nil, nil, false
        end
        key = t.backend
        inst = store.lookup_synced(key)
        -- Keep the pick for retries (canary ~= nil).
        canary = false
        if s.primary then
            if key ~= s.primary and not (inst and inst.n > 0) then
                key, inst = s.primary, store.lookup_synced(s.primary)
            end
            canary = key ~= s.primary
        end
    end
    if inst and inst.n > 0 then
        return key, inst, canary
    end
    local fallback = ngx.var.causeway_fallback
    inst = fallback and fallback ~= "" and store.lookup(fallback)
    if inst and inst.n > 0 then
        return fallback, inst, canary
    end
    return nil, nil, canary
end

-- retry picks another peer after nginx gave up on an attempt
-- (proxy_next_upstream). Rare, so it may use ngx.ctx freely.
local function retry(state, code)
    local ctx = ngx.ctx
    local rc = ctx.causeway
    if not rc then
        -- The first attempt kept no per-request state (see balance).
        local key, inst = selected()
        if not inst then
            return unavailable_peer()
        end
        rc = { key = key, inst = inst }
        ctx.causeway = rc
    end
    local key, inst, prev = rc.key, rc.inst, rc.peer
    if rc.no_live then
        -- proxy_next_upstream http_502 moving on from the 502 answer.
        return no_live_peer(key, rc)
    end
    local tried = tried_peers()
    log(WARN, "causeway: ", key, ": attempt on ", prev and prev.id or ngx.var.upstream_addr,
        " failed (", state, " ", code or "", "), retrying elsewhere")
    if prev then
        tried[prev.id] = true
        if rc.counted then
            stats.release(key, prev.id)
            rc.counted = false
        end
        if inst.tracks_latency then
            stats.observe(key, prev.id, stats.FAILURE_PENALTY, ngx.now())
        end
        -- "next" is a 403 or 404 that proxy_next_upstream moves on from,
        -- which nginx does not count as the server failing.
        if inst.max_fails > 0 and state == "failed" then
            peers.failure(inst, prev.id)
        end
    end
    if inst.limited then
        local peer = inst:pick(rc, peers.skipped(inst, tried))
        if not peer and route_tries() then
            -- A Gateway API retry goes to a peer tried before once every
            -- one was, still skipping those out or at max_conns.
            local skip = peers.skipped(inst, nil)
            peer = inst:pick(rc, skip)
        end
        if not peer then
            return no_live_peer(key, rc)
        end
        return commit(key, inst, rc, peer, nil)
    end
    -- When every peer has been tried (a Gateway API retry, or the set
    -- shrank mid-request), reuse one.
    return commit(key, inst, rc, inst:pick(rc, tried) or inst:pick(rc, nil), nil)
end

-- set_var sets nginx variable name (pcall: a variable the configuration
-- does not have raises).
local function set_var(name, value)
    ngx.var[name] = value
end

-- edit_headers sets the variables the location sends the edited request
-- headers from (balancer.HeaderVariable), as the picked target's header
-- set says. The location set each variable before (rewrite phase) to
-- what it sends without the target's edit (the rule's edit, else the
-- client's header): a set replaces that, an add appends to it after a
-- comma (or stands alone when it is empty), a removal empties it (nginx
-- then sends no such header). A variable the configuration does not have
-- (state newer than it) is skipped, and logged.
local function edit_headers(key, edits)
    for _, e in ipairs(edits) do
        local v = e.value
        if e.action == "add" then
            local c = text(e.var)
            if c then
                v = c .. "," .. v
            end
        end
        local ok, err = pcall(set_var, e.var, v)
        if not ok then
            log(ERR, "causeway: ", key, ": cannot set $", e.var, ": ", err)
        end
    end
end

-- access runs in the access phase of a location whose split may pick
-- an answer or a target with header edits, after nginx's own checks
-- (deny, auth_basic, auth_request) and the Lua ones before it in the same
-- block: it picks once, answers from the answer's named location
-- (balancer.AnswerLocation), or keeps a backend for selected and sets
-- its header edits (nginx builds the request to the backend before the
-- balancer runs).
function _M.access()
    local key = ngx.var.causeway_backend
    local inst = key and key ~= "" and store.lookup(key)
    if not (inst and inst.split) then
        return
    end
    local t = decide(inst)
    if t.answer then
        return ngx.exec("@causeway-choice-" .. key .. "-" .. t.answer)
    end
    ngx.ctx.causeway_choice = t
    local edits = t.headers and inst.headers[t.headers]
    if edits then
        edit_headers(key, edits)
    end
end

-- balance runs for every attempt of every request, so its first-attempt
-- path is kept lean: methods without per-request state (round robin,
-- chash) never touch ngx.ctx, whose first use per request costs about as
-- much as the rest of this function.
function _M.balance()
    local state, code = get_last_failure()
    if state then
        return retry(state, code)
    end
    local key, inst, canary = selected()
    if not inst then
        return unavailable_peer()
    end
    local rc
    if inst.per_request or canary ~= nil then
        -- A split request keeps its choice for retries, which would
        -- otherwise draw the weight again.
        rc = { key = key, inst = inst, canary = canary }
        ngx.ctx.causeway = rc
    end
    if inst.limited then
        -- A limited backend is per_request: rc is set.
        local skip = peers.skipped(inst, nil)
        local peer = inst:pick(rc, skip)
        if not peer and skip then
            return no_live_peer(key, rc)
        end
        return commit(key, inst, rc, peer, grant(inst))
    end
    return commit(key, inst, rc, inst:pick(rc, nil), grant(inst))
end

-- balance_subrequest picks the peer of a subrequest to backend key, which
-- the subrequest names in a variable of its own: it shares the variables
-- of its parent request, whose $causeway_backend must stay as it is. A
-- subrequest has no log phase, so nothing is counted in flight (least
-- connections and latency methods pick on the counts of others), and no
-- fallback or split applies. A retry avoids the peers tried.
local function balance_subrequest(key)
    local inst = key and key ~= "" and store.lookup(key)
    if not inst or inst.n == 0 then
        return unavailable_peer()
    end
    local state = get_last_failure()
    local rc = {}
    if not state then
        -- Not grant: the subrequest shares its parent's $causeway_tries.
        return commit(key, inst, nil, inst:pick(rc, nil), min(inst.retries, inst.n - 1))
    end
    return commit(key, inst, nil, inst:pick(rc, tried_peers()) or inst:pick(rc, nil), nil)
end

-- balance_auth picks the peer of an external authentication subrequest
-- to a Service (upstream causeway_auth_balancer), named in
-- $causeway_auth_backend.
function _M.balance_auth()
    return balance_subrequest(ngx.var.causeway_auth_backend)
end

-- balance_mirror picks the peer of a mirror's copy of a request (upstream
-- causeway_mirror_balancer), named in $causeway_mirror_backend. Its
-- location tries once: a retry would read the variable again, which the
-- request's next mirror may have set since.
function _M.balance_mirror()
    return balance_subrequest(ngx.var.causeway_mirror_backend)
end

function _M.header_filter()
    local rc = ngx.ctx.causeway
    local inst = rc and rc.inst
    if inst and inst.header_filter then
        inst:header_filter(rc)
    end
end

-- last_number returns the last entry of an $upstream_* timing list such as
-- "0.001, 0.020" or "0.004 : -"; nil when that attempt has no time.
local function last_number(v)
    return v and tonumber(match(v, "([^%s,:]+)%s*$"))
end

-- outcome records whether the last attempt of a backend with max_fails
-- failed: no response header ("-") with 502 (an error or an invalid
-- header) or 504 (a timeout) is what nginx counts as the server failing
-- (earlier attempts were counted by retry). A client that went away
-- (499) is neither.
local function outcome(rc, peer)
    local var = ngx.var
    if last_number(var.upstream_header_time) then
        peers.success(rc.inst, peer.id)
        return
    end
    local status = last_number(var.upstream_status)
    if status == 502 or status == 504 then
        peers.failure(rc.inst, peer.id)
    end
end

function _M.log()
    local rc = ngx.ctx.causeway
    if rc and rc.canary then
        -- The metrics log, written after this hook, counts the request in
        -- the canary's series (nil: metrics are off).
        local key = ngx.var.causeway_metrics_canary
        if key then
            ngx.var.causeway_metrics = key
        end
    end
    local peer = rc and rc.peer
    if not peer then
        return
    end
    if rc.counted then
        stats.release(rc.key, peer.id)
        rc.counted = false
    end
    if rc.inst.max_fails > 0 then
        outcome(rc, peer)
    end
    if rc.inst.tracks_latency then
        -- Time to response headers: what the endpoint itself costs, without
        -- the time a slow client takes to read the body.
        local t = last_number(ngx.var.upstream_header_time) or stats.FAILURE_PENALTY
        stats.observe(rc.key, peer.id, t, ngx.now())
    end
end

return _M
