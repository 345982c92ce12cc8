-- causeway.stats: per-worker load signals used by least_conn, p2c and ewma.
--
-- Both signals live in this worker's Lua memory, not in a shared dict:
--  * no shared-memory lock on the request path;
--  * nothing leaks when a worker dies or old workers drain after a
--    reload, because the counts die with the worker that owned them;
--  * every worker gets a random share of the connections, so its own
--    counts are a fair sample of each endpoint's load.
-- They are keyed by backend key and endpoint id, not by balancer
-- instance, so they survive endpoint updates.

local exp = math.exp
local pairs = pairs

local _M = {}

-- A latency sample counts for about this many seconds.
_M.DECAY_SECONDS = 10
-- Recorded for an attempt that failed (refused, reset, timed out), so an
-- endpoint that fails fast does not look fast.
_M.FAILURE_PENALTY = 1.0

local inflight = {} -- [backend key][endpoint id] = requests in flight
local ewma = {}     -- [backend key][endpoint id] = { value, last update }

function _M.inflight(bkey, id)
    local b = inflight[bkey]
    return b and b[id] or 0
end

-- inflight_of returns the backend's in-flight counts by endpoint id
-- (only endpoints with requests in flight), nil when there are none.
-- Read only.
function _M.inflight_of(bkey)
    return inflight[bkey]
end

function _M.acquire(bkey, id)
    local b = inflight[bkey]
    if not b then
        b = {}
        inflight[bkey] = b
    end
    b[id] = (b[id] or 0) + 1
end

function _M.release(bkey, id)
    local b = inflight[bkey]
    local n = b and b[id]
    if not n then
        return
    end
    if n <= 1 then
        b[id] = nil -- keep the table free of idle entries
    else
        b[id] = n - 1
    end
end

-- observe records one latency sample (seconds) as a peak EWMA: a slower
-- sample takes effect at once, a faster one blends in by elapsed time.
function _M.observe(bkey, id, seconds, now)
    local b = ewma[bkey]
    if not b then
        b = {}
        ewma[bkey] = b
    end
    local e = b[id]
    if not e then
        b[id] = { seconds, now }
        return
    end
    if seconds >= e[1] then
        e[1] = seconds
    else
        local w = exp(-(now - e[2]) / _M.DECAY_SECONDS)
        e[1] = e[1] * w + seconds * (1 - w)
    end
    e[2] = now
end

-- latency returns the EWMA decayed towards zero by the time since the last
-- sample, so an endpoint that was slow (or failing) is tried again later;
-- nil when the endpoint has no sample yet.
function _M.latency(bkey, id, now)
    local b = ewma[bkey]
    local e = b and b[id]
    if not e then
        return nil
    end
    local idle = now - e[2]
    if idle <= 0 then
        return e[1]
    end
    return e[1] * exp(-idle / _M.DECAY_SECONDS)
end

-- seed gives endpoints without a sample the mean latency of the others,
-- so a new endpoint is neither flooded (as a zero would) nor starved.
function _M.seed(bkey, ids, now)
    local b = ewma[bkey]
    if not b then
        return
    end
    local sum, n = 0, 0
    for i = 1, #ids do
        local v = _M.latency(bkey, ids[i], now)
        if v then
            sum, n = sum + v, n + 1
        end
    end
    if n == 0 then
        return
    end
    for i = 1, #ids do
        if not b[ids[i]] then
            b[ids[i]] = { sum / n, now }
        end
    end
end

-- forget drops latency history for endpoints not in keep (a set of ids),
-- or for the whole backend when keep is nil. In-flight counts are left
-- alone: they drain to zero as the requests finish.
function _M.forget(bkey, keep)
    local b = ewma[bkey]
    if not b then
        return
    end
    if not keep then
        ewma[bkey] = nil
        return
    end
    for id in pairs(b) do
        if not keep[id] then
            b[id] = nil
        end
    end
end

return _M
