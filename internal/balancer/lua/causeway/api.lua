-- causeway.api: the dynamic channel, served on the unix socket only.
--
--   GET  /v1/generation   {"generation":g,"seq":s,"backends":n}
--   GET  /v1/state        the current state, as validated
--   PUT  /v1/state        replace the whole state (any generation)
--   POST /v1/backends     upsert "backends", remove "delete" (not older
--                         than the current generation; with "base", only
--                         on a state of exactly that generation)
--   POST /v1/certificates certificate files changed: drop parsed copies
--   PUT  /v1/hosts        replace the whole hosts table (causeway.hosts),
--                         {"hosts":[...]}; a full state replaces it too
--
-- Errors are {"error": "..."} with 400 (invalid payload), 404, 405,
-- 409 (an update older than the current generation, or not on its base), 503 (busy) or 507
-- (shared dict full); a body over client_max_body_size gets nginx's own
-- 413 page. A rejected write changes nothing.

local json = require("causeway.json")
local store = require("causeway.store")
local hosts = require("causeway.hosts")
local validate = require("causeway.validate")

local io_open = io.open

local _M = {}

local function reply(status, body)
    ngx.status = status
    ngx.header["Content-Type"] = "application/json"
    ngx.header["Cache-Control"] = "no-store"
    ngx.say(json.encode(body))
    return ngx.exit(status)
end

local function fail(status, msg)
    return reply(status, { error = msg })
end

-- read_body returns the request body; bodies larger than
-- client_body_buffer_size were spooled to a file by nginx.
local function read_body()
    ngx.req.read_body()
    local body = ngx.req.get_body_data()
    if body then
        return body
    end
    local path = ngx.req.get_body_file()
    if not path then
        return nil
    end
    local f, err = io_open(path, "rb")
    if not f then
        return nil, err
    end
    body = f:read("*a")
    f:close()
    return body
end

-- yield lets the worker's other requests run during a long push. Not
-- sleep(0): on stock nginx (without OpenResty's delayed-posted-events
-- patch) that resumes us before epoll is polled again, so nothing else
-- would run. A 1 ms timer does return to the event loop.
local function yield()
    ngx.sleep(0.001)
end

local YIELD_ABOVE = 64 * 1024 -- bytes of body

local function write(replace)
    local body, err = read_body()
    if not body then
        return fail(400, err and ("cannot read body: " .. err) or "empty body")
    end
    -- Only a large push yields: each yield is a 1 ms timer, which a
    -- patch of a few backends would otherwise wait for.
    local y = #body > YIELD_ABOVE and yield or nil
    local req
    if replace then
        req, err = validate.state(body, y)
    else
        req, err = validate.update(body, y)
    end
    if not req then
        ngx.log(ngx.WARN, "causeway: push rejected: ", err)
        return fail(400, err)
    end
    local res, status, msg = store.write(req, replace, y)
    if not res then
        ngx.log(ngx.WARN, "causeway: push rejected: ", msg)
        return fail(status, msg)
    end
    return reply(200, res)
end

-- write_hosts replaces the hosts table alone.
local function write_hosts()
    local body, err = read_body()
    if not body then
        return fail(400, err and ("cannot read body: " .. err) or "empty body")
    end
    local y = #body > YIELD_ABOVE and yield or nil
    local tbl
    tbl, err = validate.hosts(body, y)
    if not tbl then
        ngx.log(ngx.WARN, "causeway: hosts push rejected: ", err)
        return fail(400, err)
    end
    local res, status, msg = store.exclusive(hosts.replace, tbl, y)
    if not res then
        ngx.log(ngx.WARN, "causeway: hosts push rejected: ", msg)
        return fail(status, msg)
    end
    return reply(200, res)
end

local function dump()
    local st, err = store.dump()
    if not st then
        return fail(500, err)
    end
    local table_hosts
    table_hosts, err = hosts.dump()
    if not table_hosts then
        return fail(500, err)
    end
    for _, b in ipairs(st.backends) do
        json.array(b.endpoints)
        for _, e in ipairs(b.endpoints) do
            e.v6 = nil -- internal
        end
    end
    -- Left out when empty, as the controller leaves it out.
    return reply(200, {
        version = validate.SCHEMA_VERSION,
        generation = st.generation,
        backends = json.array(st.backends),
        hosts = #table_hosts > 0 and table_hosts or nil,
    })
end

local routes = {
    ["/v1/generation"] = { GET = function() return reply(200, store.status()) end },
    ["/v1/state"] = { GET = dump, PUT = function() return write(true) end },
    ["/v1/backends"] = { POST = function() return write(false) end },
    ["/v1/hosts"] = { PUT = write_hosts },
    ["/v1/certificates"] = { POST = function()
        local gen, err = require("causeway.certs").bump()
        if not gen then
            return fail(507, "cannot record the certificate change: " .. tostring(err))
        end
        return reply(200, { certificates = gen })
    end },
}

-- serve is the content handler of the dynamic server.
function _M.serve()
    local route = routes[ngx.var.uri]
    if not route then
        return fail(404, "no such endpoint")
    end
    local handler = route[ngx.req.get_method()]
    if not handler then
        return fail(405, "method not allowed")
    end
    return handler()
end

return _M
