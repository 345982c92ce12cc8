-- causeway.metrics: per-request metrics (ingress-nginx's request counter and
-- histograms), counted in each worker and sent to the controller once a
-- second, as one batch over a unix socket the controller listens on.
--
--   init_by_lua         init(opts)     buckets, socket, flags
--   init_worker_by_lua  init_worker()  the flush timer
--   log_by_lua          observe()      one request (via balancer.log)
--
-- A location that is counted names its series with
--   set $causeway_metrics "<key>";
-- where the key is a digest the controller maps back to the location's
-- labels (namespace, ingress, service, path, host). A key starting with
-- "u" belongs to the catch-all server, whose host label is the request's
-- own Host when the controller asks for undefined hosts.
--
-- The per-request work is a handful of variable reads (as numbers,
-- causeway.vars) and table increments: nothing is locked, nothing leaves
-- the worker. A batch is the counts since the last one that was delivered; a
-- batch that cannot be delivered stays and is merged into the next.

local json = require("causeway.json")
local number = require("causeway.vars").number

local now, start_time = ngx.now, ngx.req.start_time
local get_method = ngx.req.get_method
local byte, pairs = string.byte, pairs
local log, ERR, WARN = ngx.log, ngx.ERR, ngx.WARN

local _M = {}

-- The histograms a batch carries, in this order when enabled; "source"
-- says where each observation comes from.
local HISTOGRAMS = {
    { name = "request_duration_seconds", source = "request_time", buckets = "time" },
    { name = "response_duration_seconds", source = "upstream_response_time", buckets = "time" },
    { name = "connect_duration_seconds", source = "upstream_connect_time", buckets = "time" },
    { name = "header_duration_seconds", source = "upstream_header_time", buckets = "time" },
    { name = "request_size", source = "request_length", buckets = "length" },
    { name = "response_size", source = "bytes_sent", buckets = "length" },
    { name = "bytes_sent", source = "bytes_sent", buckets = "size" },
}

-- Methods outside this list are counted as "OTHER", so that a client
-- cannot make up a series per request.
local METHODS = {
    GET = "GET", HEAD = "HEAD", POST = "POST", PUT = "PUT", DELETE = "DELETE",
    CONNECT = "CONNECT", OPTIONS = "OPTIONS", TRACE = "TRACE", PATCH = "PATCH",
}

local enabled = false
local socket_path
local interval = 1
local host_for_undefined = false
local max_series = 20000

-- hists are the enabled histograms: { name, source, bounds, base }, where
-- base is the index of its count in an entry; then its sum, then one
-- count per bound and one for +Inf.
local hists = {}
local entry_size = 1
-- sources are the distinct values the enabled histograms observe, read
-- once per request into vals; each histogram names its source by index.
local sources = {}
local vals = {}

-- series[key][method][status][host] = entry; entry[1] is the request count.
local series = {}
local nseries = 0
local dropped = 0
local last_error = 0

-- init validates and keeps the options the controller rendered:
--   socket                 the controller's unix socket path
--   interval               seconds between batches
--   histograms             names of the enabled histograms
--   time, length, size     bucket upper bounds, ascending
--   host_for_undefined     label catch-all requests with their Host
--   max_series             series one worker keeps between batches
function _M.init(opts)
    socket_path = assert(opts.socket, "metrics: socket required")
    interval = opts.interval or 1
    host_for_undefined = opts.host_for_undefined and true or false
    max_series = opts.max_series or max_series
    local on = {}
    for _, n in ipairs(opts.histograms or {}) do
        on[n] = true
    end
    local base = 2
    for _, h in ipairs(HISTOGRAMS) do
        if on[h.name] then
            local bounds = assert(opts[h.buckets], "metrics: buckets " .. h.buckets)
            for i = 2, #bounds do
                assert(bounds[i] > bounds[i - 1], "metrics: buckets must ascend")
            end
            local src
            for i, name in ipairs(sources) do
                if name == h.source then
                    src = i
                end
            end
            if not src then
                sources[#sources + 1] = h.source
                src = #sources
            end
            hists[#hists + 1] = { name = h.name, src = src, bounds = bounds, base = base }
            base = base + 2 + #bounds + 1
        end
    end
    entry_size = base - 1
    enabled = true
end

local function new_entry()
    local e = {}
    for i = 1, entry_size do
        e[i] = 0
    end
    return e
end

local function read_values()
    for i = 1, #sources do
        local src = sources[i]
        if src == "request_time" then
            vals[i] = now() - start_time()
        else
            -- nil when the request has none: no upstream, or several
            -- attempts ("0.004, 0.010"), which ingress-nginx skips too.
            vals[i] = number(src)
        end
    end
end

local function observe_into(e)
    e[1] = e[1] + 1
    read_values()
    for i = 1, #hists do
        local h = hists[i]
        local v = vals[h.src]
        if v then
            local b = h.base
            e[b] = e[b] + 1
            e[b + 1] = e[b + 1] + v
            local bounds = h.bounds
            local n = #bounds
            local j = 1
            while j <= n and v > bounds[j] do
                j = j + 1
            end
            e[b + 1 + j] = e[b + 1 + j] + 1
        end
    end
end

-- lookup returns the entry of a series, creating it (and the tables on
-- the way) unless the worker already holds max_series.
local function lookup(key, method, status, host)
    local by_method = series[key]
    if not by_method then
        by_method = {}
        series[key] = by_method
    end
    local by_status = by_method[method]
    if not by_status then
        by_status = {}
        by_method[method] = by_status
    end
    local by_host = by_status[status]
    if not by_host then
        by_host = {}
        by_status[status] = by_host
    end
    local e = by_host[host]
    if e then
        return e
    end
    if nseries >= max_series then
        return nil
    end
    e = new_entry()
    by_host[host] = e
    nseries = nseries + 1
    return e
end

-- observe counts the request in the location's series; canary (from
-- causeway.balancer.log) says a split sent it to its canary, whose series
-- carries the canary label.
function _M.observe(canary)
    if not enabled then
        return
    end
    local key
    if canary then
        key = ngx.var.causeway_metrics_canary
    else
        key = ngx.var.causeway_metrics
    end
    if not key or key == "" then
        return
    end
    local host = ""
    if host_for_undefined and byte(key, 1) == 117 then -- "u": the catch-all
        host = ngx.var.host or ""
    end
    local e = lookup(key, METHODS[get_method()] or "OTHER", ngx.status, host)
    if not e then
        dropped = dropped + 1
        return
    end
    observe_into(e)
end

-- batch encodes the counts held since the last delivery; nil when there
-- are none.
-- each calls fn(key, method, status, host, entry) for every entry of t.
local function each(t, fn)
    for key, by_method in pairs(t) do
        for method, by_status in pairs(by_method) do
            for status, by_host in pairs(by_status) do
                for host, e in pairs(by_host) do
                    fn(key, method, status, host, e)
                end
            end
        end
    end
end

-- batch encodes the counts of t (and d requests not counted); nil when
-- there are none.
local function batch(t, d)
    local out = {}
    each(t, function(key, method, status, host, e)
        if e[1] > 0 then
            local row = { key, status, method, host }
            for i = 1, entry_size do
                row[4 + i] = e[i]
            end
            out[#out + 1] = json.array(row)
        end
    end)
    if #out == 0 and d == 0 then
        return nil
    end
    local names = {}
    for i, h in ipairs(hists) do
        names[i] = h.name
    end
    return json.encode({
        version = 1,
        pid = ngx.worker.pid(),
        histograms = json.array(names),
        dropped = d,
        series = json.array(out),
    }) .. "\n"
end

-- merge adds counts that could not be delivered back into the current
-- table, so the next batch carries them.
local function merge(t, d)
    dropped = dropped + d
    each(t, function(key, method, status, host, e)
        local cur = lookup(key, method, status, host)
        if not cur then
            dropped = dropped + e[1]
            return
        end
        for i = 1, entry_size do
            cur[i] = cur[i] + e[i]
        end
    end)
end

local function send(payload)
    local sock = ngx.socket.tcp()
    sock:settimeout(1000)
    local ok, err = sock:connect("unix:" .. socket_path)
    if not ok then
        return nil, err
    end
    ok, err = sock:send(payload)
    if not ok then
        sock:close()
        return nil, err
    end
    -- The controller answers one line once it has counted the batch, so
    -- a batch is dropped here only when it was delivered.
    local line
    line, err = sock:receive("*l")
    sock:close()
    if line ~= "ok" then
        return nil, err or line
    end
    return true
end

-- flush sends what was counted since the last delivery. The table is
-- swapped out first: sending yields to other requests, whose counts go
-- to the new one. Undelivered counts are merged back. (A batch counted by
-- the controller whose answer is lost is sent again: counts can then be
-- doubled, never lost, in that rare case.)
function _M.flush()
    local held, held_dropped = series, dropped
    series, nseries, dropped = {}, 0, 0
    local payload = batch(held, held_dropped)
    if not payload then
        return true
    end
    local ok, err = send(payload)
    if not ok then
        merge(held, held_dropped)
        -- Keep the counts for the next batch; say so at most once a minute.
        if now() - last_error >= 60 then
            last_error = now()
            log(WARN, "causeway: metrics not delivered to ", socket_path, ": ", err,
                " (kept for the next batch)")
        end
        return nil, err
    end
    return true
end

-- tick runs every interval, and once more (premature) when the worker
-- shuts down, so that a reload loses no counts.
local function tick()
    local ok, err = pcall(_M.flush)
    if not ok then
        log(ERR, "causeway: metrics flush failed: ", err)
    end
end

function _M.init_worker()
    if not enabled then
        return
    end
    local ok, err = ngx.timer.every(interval, tick)
    if not ok then
        log(ERR, "causeway: metrics timer: ", err)
    end
end

return _M
