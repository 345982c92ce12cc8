-- causeway.validate: strict validation and normalisation of controller
-- payloads (schema version 1).
--
-- Every rule here has a twin in the Go package (payload.go); a parity test
-- keeps the two in step. A payload either validates completely or is
-- rejected with one message naming the offending field, so a bad push can
-- never leave half of it applied.

local json = require("causeway.json")

local type, pairs, ipairs, tostring, tonumber, error, pcall =
    type, pairs, ipairs, tostring, tonumber, error, pcall
local byte, sub, find, match, gmatch, gsub, format =
    string.byte, string.sub, string.find, string.match, string.gmatch,
    string.gsub, string.format
local floor = math.floor
local sort, concat = table.sort, table.concat
local null, is_array = json.null, json.is_array

local _M = {}

_M.SCHEMA_VERSION = 1

-- Limits. They bound memory and per-request work, and they are generous
-- for anything a Kubernetes Service produces, except MAX_ENDPOINTS, which
-- a very large Service can exceed (the controller then leaves that one
-- backend out). Every MAX_* here has a twin in limits.go; a Go test reads
-- these lines and fails if the two differ, so keep them one per line.
local MAX_BACKENDS = 100000
local MAX_ENDPOINTS = 10000
local MAX_KEY_LEN = 256
local MAX_WEIGHT = 100
local MAX_RETRIES = 5
local MAX_GENERATION = 2 ^ 53 - 1
local MAX_COOKIE_AGE = 10 * 365 * 24 * 3600
local MAX_HASH_KEY_LEN = 256
local MAX_COOKIE_NAME_LEN = 64
local MAX_COOKIE_PATH_LEN = 256
local MAX_ZONE_LEN = 128
local MAX_FAILS = 1000
local MAX_FAIL_TIMEOUT_MS = 24 * 3600 * 1000
local MAX_CONNS = 1000000
local MAX_SPLIT_RULES = 32
local MAX_SPLIT_CONDITIONS = 16
local MAX_SPLIT_TARGETS = 16
local MAX_SPLIT_WEIGHT = 1000000
local MAX_SPLIT_ANSWERS = 16 * 33
local MAX_CONDITION_NAME_LEN = 64
local MAX_CONDITION_REGEX_LEN = 256
local MAX_MATCH_VALUE_LEN = 256
local MAX_HEADER_EDITS = 48
local MAX_HEADER_NAME_LEN = 128
local MAX_HEADER_VALUE_LEN = 1024
local MAX_SPLIT_HEADER_NAMES = 64
-- The hosts table (causeway.hosts; hosts.go).
local MAX_HOSTS = 100000
local MAX_HOST_NAME_LEN = 253
local MAX_HOST_HOP_LEN = 107
local MAX_HOST_CERT_LEN = 4095
local MAX_HOST_VALUE_LEN = 1024

_M.METHODS = {
    round_robin = true, least_conn = true, ewma = true,
    p2c = true, chash = true, sticky = true,
}

-- Plain nginx variables a hash key may use; besides these, only the
-- $http_*, $cookie_* and $arg_* families are allowed.
local HASH_VARS = {
    request_uri = true, uri = true, args = true, host = true, scheme = true,
    remote_addr = true, binary_remote_addr = true, realip_remote_addr = true,
    request_method = true, server_name = true,
}

local SAME_SITE = { Lax = true, Strict = true, None = true }

-- describe renders a decoded JSON value for an error message: printable
-- ASCII only and truncated, so user input cannot garble the reply.
local function describe(v)
    if v == null then
        return "null"
    end
    local t = type(v)
    if t == "string" then
        local s = v
        if #s > 64 then
            s = sub(s, 1, 64) .. "..."
        end
        return '"' .. gsub(s, "[^%w%p ]", "?") .. '"'
    elseif t == "number" then
        if v == floor(v) and v > -2 ^ 53 and v < 2 ^ 53 then
            return format("%d", v)
        end
        return format("%.17g", v)
    elseif t == "boolean" then
        return tostring(v)
    elseif t == "table" then
        return is_array(v) and "an array" or "an object"
    end
    return t
end

-- Paths name the offending field in error messages and are built only
-- when there is an error: a path is a string, or, for an endpoint, the
-- reused table { backend path, index } (validating 10,000 endpoints should
-- not format 10,000 strings nobody reads).
local function where(path, field)
    if type(path) == "table" then
        path = format("%s.endpoints[%d]", path[1], path[2])
    end
    if field then
        return path .. "." .. field
    end
    return path
end

local function bad(path, field, fmt, ...)
    error({ invalid = where(path, field) .. ": " .. format(fmt, ...) }, 0)
end

local function want_object(v, path, field)
    if type(v) ~= "table" or v == null or is_array(v) then
        bad(path, field, "must be an object, got %s", describe(v))
    end
    return v
end

local function want_array(v, path, field, max)
    if not is_array(v) then
        bad(path, field, "must be an array, got %s", describe(v))
    end
    if #v > max then
        bad(path, field, "must have at most %d items, got %d", max, #v)
    end
    return v
end

local function want_string(v, path, field)
    if type(v) ~= "string" then
        bad(path, field, "must be a string, got %s", describe(v))
    end
    return v
end

local function want_int(v, path, field, lo, hi)
    if type(v) ~= "number" or v ~= floor(v) or v < lo or v > hi then
        bad(path, field, "must be an integer from %d to %d, got %s", lo, hi, describe(v))
    end
    return v
end

local function want_bool(v, path, field)
    if type(v) ~= "boolean" then
        bad(path, field, "must be a boolean, got %s", describe(v))
    end
    return v
end

-- only_fields rejects any member not listed; reporting the smallest
-- unknown name keeps the message deterministic.
local function only_fields(obj, path, allowed)
    local unknown
    for k in pairs(obj) do
        if not allowed[k] and (not unknown or k < unknown) then
            unknown = k
        end
    end
    if unknown then
        bad(path, nil, "unknown field %s", describe(unknown))
    end
end

local function set(...)
    local s = {}
    for _, k in ipairs({ ... }) do
        s[k] = true
    end
    return s
end

-- parse_ipv4 accepts dotted-quad with no leading zeros and returns the
-- address as a number.
local function octet(x)
    if #x > 3 or (#x > 1 and byte(x) == 0x30) then
        return nil
    end
    local n = tonumber(x)
    return n <= 255 and n or nil
end

local function parse_ipv4(s)
    local a, b, c, d = match(s, "^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
    if not a then
        return nil
    end
    a, b, c, d = octet(a), octet(b), octet(c), octet(d)
    if not (a and b and c and d) then
        return nil
    end
    return ((a * 256 + b) * 256 + c) * 256 + d
end

-- ipv6_groups parses a run of colon-separated hex groups ("" is none);
-- allow_v4 permits a trailing dotted quad, which fills two groups.
local function ipv6_groups(part, allow_v4, out)
    if part == "" then
        return out
    end
    local fields = {}
    for f in gmatch(part .. ":", "([^:]*):") do
        fields[#fields + 1] = f
    end
    for i, f in ipairs(fields) do
        if allow_v4 and i == #fields and find(f, ".", 1, true) then
            local v4 = parse_ipv4(f)
            if not v4 then
                return nil
            end
            out[#out + 1] = floor(v4 / 65536)
            out[#out + 1] = v4 % 65536
        elseif find(f, "^%x%x?%x?%x?$") then
            out[#out + 1] = tonumber(f, 16)
        else
            return nil
        end
    end
    return out
end

-- format_ipv6 writes the RFC 5952 text form (as Go's netip does):
-- lower-case hex, the longest run of two or more zero groups (the first
-- on ties) as "::", and IPv4-mapped addresses as ::ffff:a.b.c.d.
local function format_ipv6(g)
    if g[1] == 0 and g[2] == 0 and g[3] == 0 and g[4] == 0 and g[5] == 0
        and g[6] == 0xffff then
        return format("::ffff:%d.%d.%d.%d", floor(g[7] / 256), g[7] % 256,
                      floor(g[8] / 256), g[8] % 256)
    end
    local best_at, best_len, at, len = 0, 0, 0, 0
    for i = 1, 8 do
        if g[i] == 0 then
            if len == 0 then
                at = i
            end
            len = len + 1
            if len > best_len then
                best_at, best_len = at, len
            end
        else
            len = 0
        end
    end
    if best_len < 2 then
        best_at = 0
    end
    local out = {}
    local i = 1
    while i <= 8 do
        if i == best_at then
            out[#out + 1] = (i == 1) and "::" or ":"
            i = i + best_len
        else
            out[#out + 1] = format("%x", g[i])
            if i < 8 then
                out[#out + 1] = ":"
            end
            i = i + 1
        end
    end
    return concat(out)
end

-- parse_ipv6 validates IPv6 text (no zone index) and returns its canonical
-- form, or nil.
local function parse_ipv6(s)
    if #s < 2 or #s > 45 or find(s, "[^%x:.]") then
        return nil
    end
    local groups
    local dc = find(s, "::", 1, true)
    if dc then
        if find(s, "::", dc + 1, true) then
            return nil
        end
        local head = ipv6_groups(sub(s, 1, dc - 1), false, {})
        local tail = head and ipv6_groups(sub(s, dc + 2), true, {})
        if not tail or #head + #tail > 7 then
            return nil
        end
        groups = head
        for _ = 1, 8 - #head - #tail do
            groups[#groups + 1] = 0
        end
        for _, v in ipairs(tail) do
            groups[#groups + 1] = v
        end
    else
        groups = ipv6_groups(s, true, {})
        if not groups or #groups ~= 8 then
            return nil
        end
    end
    return format_ipv6(groups)
end

-- parse_address returns the canonical text of an IPv4 or IPv6 address and
-- whether it is IPv6, or nil. For IPv4 a third result is the address as a
-- number.
function _M.parse_address(s)
    if type(s) ~= "string" then
        return nil
    end
    local v4 = parse_ipv4(s)
    if v4 then
        return s, false, v4
    end
    local v6 = parse_ipv6(s)
    if v6 then
        return v6, true
    end
    return nil
end

-- Backend keys are opaque to us but end up inside a double-quoted nginx
-- string in the renderer's output, so the grammar excludes quotes,
-- backslashes, '$', ';', braces and whitespace.
function _M.valid_key(k)
    return type(k) == "string" and #k >= 1 and #k <= MAX_KEY_LEN
        and find(k, "^[%w][%w._:/@-]*$") ~= nil
end

-- parse_hash_key checks a chash key expression: one or more nginx
-- variables written back to back, e.g. "$host$request_uri". It returns
-- the list of variable names, or nil and a reason.
function _M.parse_hash_key(s)
    if type(s) ~= "string" or #s < 2 or #s > MAX_HASH_KEY_LEN then
        return nil, format("must be 2 to %d characters of nginx variables", MAX_HASH_KEY_LEN)
    end
    if not find(s, "^%$[%w_]+") or find(s, "[^%w_$]") or find(s, "%$%$")
        or byte(s, #s) == 0x24 then
        return nil, "must be nginx variables such as $request_uri or $http_x_user"
    end
    local names = {}
    for name in gmatch(s, "%$([%w_]+)") do
        local ok = HASH_VARS[name]
            or find(name, "^http_[a-z0-9_]+$")
            or find(name, "^cookie_[%w_]+$")
            or find(name, "^arg_[%w_]+$")
        if not ok then
            return nil, "variable $" .. name .. " is not allowed" -- name is [%w_]+
        end
        names[#names + 1] = name
    end
    return names
end

local function valid_cookie_name(s)
    return type(s) == "string" and #s >= 1 and #s <= MAX_COOKIE_NAME_LEN
        and find(s, "^[%w_.-]+$") ~= nil
end

local function valid_cookie_path(s)
    return type(s) == "string" and #s >= 1 and #s <= MAX_COOKIE_PATH_LEN
        and find(s, "^/[%w._~!$&'()*+,=:@%%/-]*$") ~= nil
end

local function valid_zone(s)
    return #s >= 1 and #s <= MAX_ZONE_LEN and find(s, "^[%w._:/-]+$") ~= nil
end

local ENDPOINT_FIELDS = set("address", "port", "weight", "ready", "zone")

local function endpoint_less(a, c)
    if a.address ~= c.address then
        return a.address < c.address
    end
    return a.port < c.port
end

-- endpoint validates one endpoint; path is the reused { backend path,
-- index } table. It also returns a key identifying address and port.
local function endpoint(v, path)
    want_object(v, path)
    only_fields(v, path, ENDPOINT_FIELDS)
    if v.address == nil then
        bad(path, "address", "is required")
    end
    local addr, is6, v4 = _M.parse_address(want_string(v.address, path, "address"))
    if not addr then
        bad(path, "address", "must be an IPv4 or IPv6 address, got %s", describe(v.address))
    end
    if v.port == nil then
        bad(path, "port", "is required")
    end
    local port = want_int(v.port, path, "port", 1, 65535)
    local e = { address = addr, port = port, weight = 1, ready = true }
    if v.weight ~= nil then
        e.weight = want_int(v.weight, path, "weight", 1, MAX_WEIGHT)
    end
    if v.ready ~= nil then
        e.ready = want_bool(v.ready, path, "ready")
    end
    if v.zone ~= nil then
        local z = want_string(v.zone, path, "zone")
        if not valid_zone(z) then
            bad(path, "zone", "must be 1 to %d of [A-Za-z0-9._:/-], got %s", MAX_ZONE_LEN, describe(z))
        end
        e.zone = z
    end
    if is6 then
        e.v6 = true
        return e, addr .. "|" .. port
    end
    return e, v4 * 65536 + port -- exact: below 2^48
end

local STICKY_FIELDS = set("cookie", "path", "max_age", "same_site", "secure", "http_only")

local function sticky(v, path)
    local s = {
        cookie = "causeway_affinity", path = "/", max_age = 0,
        secure = false, http_only = true,
    }
    if v == nil then
        return s
    end
    want_object(v, path)
    only_fields(v, path, STICKY_FIELDS)
    if v.cookie ~= nil then
        if not valid_cookie_name(v.cookie) then
            bad(path, "cookie", "must be 1 to %d of [A-Za-z0-9_.-], got %s", MAX_COOKIE_NAME_LEN,
                describe(v.cookie))
        end
        s.cookie = v.cookie
    end
    if v.path ~= nil then
        if not valid_cookie_path(v.path) then
            bad(path, "path", "must be an absolute URL path without ';' or spaces, got %s",
                describe(v.path))
        end
        s.path = v.path
    end
    if v.max_age ~= nil then
        s.max_age = want_int(v.max_age, path, "max_age", 0, MAX_COOKIE_AGE)
    end
    if v.secure ~= nil then
        s.secure = want_bool(v.secure, path, "secure")
    end
    if v.http_only ~= nil then
        s.http_only = want_bool(v.http_only, path, "http_only")
    end
    if v.same_site ~= nil then
        if not SAME_SITE[v.same_site] then
            bad(path, "same_site", 'must be "Lax", "Strict" or "None", got %s',
                describe(v.same_site))
        end
        if v.same_site == "None" and not s.secure then
            bad(path, "same_site", 'is "None", which browsers accept only with secure: true')
        end
        s.same_site = v.same_site
    end
    return s
end

-- want_chars checks an optional string against a Lua pattern class.
local function want_chars(v, path, field, max, class, what)
    if v == nil then
        return nil
    end
    if type(v) ~= "string" or #v < 1 or #v > max or not find(v, "^[" .. class .. "]+$") then
        bad(path, field, "must be 1 to %d of %s, got %s", max, what, describe(v))
    end
    return v
end

-- SPLIT_NAMES is the name grammar of each condition kind but variable
-- (model.Condition.Validate): a Lua class and how to say it.
local SPLIT_NAMES = {
    header = { "%w_-", "[A-Za-z0-9_-]" },
    cookie = { "%w_.-", "[A-Za-z0-9_.-]" },
    argument = { "%w_", "[A-Za-z0-9_]" },
}
local SPLIT_VARS = set("args", "http2", "https", "remote_addr", "remote_port", "query_string",
    "request", "request_body", "request_uri", "request_method", "scheme")
local SPLIT_MATCHES = set("exact", "caseless", "regex")
local SPLIT_CONDITION_FIELDS = set("kind", "name", "match", "value", "negate")
local SPLIT_TARGET_FIELDS = set("backend", "answer", "weight", "headers")
local SPLIT_RULE_FIELDS = set("conditions", "targets", "affinity")
local SPLIT_FIELDS = set("rules", "targets", "answers", "primary", "affinity", "headers")
local HEADER_EDIT_FIELDS = set("name", "action", "value")
local HEADER_ACTIONS = set("set", "add", "remove")
local HEADER_VAR_ESCAPES = { ["-"] = "_h", ["_"] = "_u", ["."] = "_d" }

-- header_var is balancer.HeaderVariable: the variable the location sends
-- request header name from (model.Split.Headers). Letters are lowered,
-- digits kept, and each of - _ . is written as _ and a letter, so that
-- two names never share a variable.
function _M.header_var(name)
    return "causeway_header_" .. gsub(name:lower(), "[-_.]", HEADER_VAR_ESCAPES)
end

-- header_edits validates a split's header sets (model.Split.Headers): each
-- 1 to MAX_HEADER_EDITS edits of distinct names, a value of
-- model.ParseHeaderValue's grammar (a removal has none). Each edit keeps
-- the variable it sets.
local function header_edits(v, path)
    want_array(v, path, "headers", MAX_SPLIT_ANSWERS)
    local out, names, n = {}, {}, 0
    for i, hv in ipairs(v) do
        local hpath = format("%s.headers[%d]", path, i - 1)
        want_array(hv, hpath, nil, MAX_HEADER_EDITS)
        if #hv == 0 then
            bad(hpath, nil, "must have at least one edit")
        end
        local edits, seen = {}, {}
        for j, ev in ipairs(hv) do
            local epath = format("%s[%d]", hpath, j - 1)
            want_object(ev, epath)
            only_fields(ev, epath, HEADER_EDIT_FIELDS)
            local name = want_chars(ev.name, epath, "name", MAX_HEADER_NAME_LEN, "%w_.-", "[A-Za-z0-9_.-]")
            if name == nil then
                bad(epath, "name", "is required")
            end
            local lname = name:lower()
            if seen[lname] then
                bad(epath, "name", "one edit per name, got %s twice", describe(name))
            end
            seen[lname] = true
            if not names[lname] then
                names[lname] = true
                n = n + 1
            end
            if not HEADER_ACTIONS[ev.action] then
                bad(epath, "action", "must be set, add or remove, got %s", describe(ev.action))
            end
            local val = ""
            if ev.action == "remove" then
                if ev.value ~= nil and ev.value ~= "" then
                    bad(epath, "value", "a removal has no value")
                end
            else
                -- An empty value is left out of the JSON.
                val = ev.value == nil and "" or want_string(ev.value, epath, "value")
                if #val > MAX_HEADER_VALUE_LEN or find(val, "[^\t -~]") or find(val, '[$"\\{}]')
                    or find(val, "^[ \t]") or find(val, "[ \t]$") then
                    bad(epath, "value", "must be at most %d visible ASCII characters, spaces and tabs inside, "
                        .. "other than $ \" \\ { and }, got %s", MAX_HEADER_VALUE_LEN, describe(val))
                end
            end
            edits[j] = { var = _M.header_var(name), action = ev.action, value = val }
        end
        out[i] = edits
    end
    if n > MAX_SPLIT_HEADER_NAMES then
        bad(path, "headers", "edit %d names, at most %d", n, MAX_SPLIT_HEADER_NAMES)
    end
    return out
end

-- split_condition validates a condition (model.Condition). A regex is
-- checked here for its alphabet only: its full grammar, which PCRE and
-- Go's RE2 read alike, is the controller's (model.ParseHeaderRegex).
local function split_condition(v, path)
    want_object(v, path)
    only_fields(v, path, SPLIT_CONDITION_FIELDS)
    local c = { kind = v.kind, match = v.match }
    if v.kind == "variable" then
        if not SPLIT_VARS[v.name] then
            bad(path, "name", "must be a variable a condition may read, got %s", describe(v.name))
        end
        c.name = v.name
    elseif SPLIT_NAMES[v.kind] then
        local g = SPLIT_NAMES[v.kind]
        c.name = want_chars(v.name, path, "name", MAX_CONDITION_NAME_LEN, g[1], g[2])
        if c.name == nil then
            bad(path, "name", "is required")
        end
    else
        bad(path, "kind", "must be header, cookie, argument or variable, got %s", describe(v.kind))
    end
    if not SPLIT_MATCHES[v.match] then
        bad(path, "match", "must be exact, caseless or regex, got %s", describe(v.match))
    end
    if v.match == "regex" then
        c.value = want_chars(v.value, path, "value", MAX_CONDITION_REGEX_LEN,
            "%w/._~!*()+,=:@&?|%[%]^\\{} -", "the header regex alphabet")
        if c.value == nil then
            bad(path, "value", "is required")
        end
    else
        local val = want_string(v.value, path, "value")
        if #val > MAX_MATCH_VALUE_LEN or find(val, '[^ -~]') or find(val, '["\\]') then
            bad(path, "value", 'must be 0 to %d printable ASCII characters other than " and \\, got %s',
                MAX_MATCH_VALUE_LEN, describe(val))
        end
        c.value = val
    end
    c.negate = v.negate ~= nil and want_bool(v.negate, path, "negate") or false
    return c
end

-- split_targets validates weighted targets: each a backend key, or an
-- answer (1 to answers) given by the named location
-- @causeway-choice-<key>-<answer> (balancer.AnswerLocation). The weights
-- sum to 1 or more; backends collects the backend keys.
local function split_targets(v, key, path, answers, backends, headers)
    want_array(v, path, nil, MAX_SPLIT_TARGETS)
    if #v == 0 then
        bad(path, nil, "must have at least one target")
    end
    local out, sum = {}, 0
    for i, tv in ipairs(v) do
        local tpath = format("%s[%d]", path, i - 1)
        want_object(tv, tpath)
        only_fields(tv, tpath, SPLIT_TARGET_FIELDS)
        local w = want_int(tv.weight, tpath, "weight", 0, MAX_SPLIT_WEIGHT)
        sum = sum + w
        if tv.answer ~= nil then
            if tv.headers ~= nil then
                bad(tpath, "headers", "an answer has no header edits")
            end
            if tv.backend ~= nil then
                bad(tpath, "answer", "a target is a backend or an answer, not both")
            end
            if answers == 0 then
                bad(tpath, "answer", "the split has no answers")
            end
            out[i] = { answer = want_int(tv.answer, tpath, "answer", 1, answers), weight = w }
        else
            if not _M.valid_key(tv.backend) or tv.backend == key then
                bad(tpath, "backend", "must be a backend key other than the split's, got %s", describe(tv.backend))
            end
            out[i] = { backend = tv.backend, weight = w }
            backends[tv.backend] = true
            if tv.headers ~= nil and tv.headers ~= 0 then
                out[i].headers = want_int(tv.headers, tpath, "headers", 1, #headers)
            end
        end
    end
    if sum < 1 then
        bad(path, nil, "weights must sum to at least 1, got %d", sum)
    end
    return out
end

-- split validates a split (model.Split): ordered rules of conditions,
-- each with weighted targets, the default targets, how many answers, and
-- a canary's primary backend.
local function split(v, key, path)
    want_object(v, path)
    only_fields(v, path, SPLIT_FIELDS)
    local s, backends = { rules = {}, answers = 0, headers = {} }, {}
    if v.answers ~= nil then
        s.answers = want_int(v.answers, path, "answers", 0, MAX_SPLIT_ANSWERS)
    end
    if v.headers ~= nil then
        s.headers = header_edits(v.headers, path)
    end
    if v.rules ~= nil then
        want_array(v.rules, path, "rules", MAX_SPLIT_RULES)
        for i, rv in ipairs(v.rules) do
            local rpath = format("%s.rules[%d]", path, i - 1)
            want_object(rv, rpath)
            only_fields(rv, rpath, SPLIT_RULE_FIELDS)
            want_array(rv.conditions, rpath, "conditions", MAX_SPLIT_CONDITIONS)
            if #rv.conditions == 0 then
                bad(rpath, "conditions", "must have at least one condition")
            end
            local conds = {}
            for j, cv in ipairs(rv.conditions) do
                conds[j] = split_condition(cv, format("%s.conditions[%d]", rpath, j - 1))
            end
            s.rules[i] = { conditions = conds,
                targets = split_targets(rv.targets, key, rpath .. ".targets", s.answers, backends, s.headers) }
            if rv.affinity ~= nil then
                s.rules[i].affinity = want_bool(rv.affinity, rpath, "affinity")
            end
        end
    end
    s.targets = split_targets(v.targets, key, path .. ".targets", s.answers, backends, s.headers)
    if v.affinity ~= nil then
        s.affinity = want_bool(v.affinity, path, "affinity")
    end
    if v.primary ~= nil then
        local n = 0
        for _ in pairs(backends) do
            n = n + 1
        end
        if not _M.valid_key(v.primary) or not backends[v.primary] or n ~= 2 or s.answers > 0 or #s.headers > 0 then
            bad(path, "primary", "must be one of the split's two backends, with no answers or headers, got %s",
                describe(v.primary))
        end
        s.primary = v.primary
    end
    return s
end

local BACKEND_FIELDS = set("key", "method", "retries", "hash_key", "sticky", "endpoints", "split",
    "max_fails", "fail_timeout_ms", "max_conns")

-- owns_peers reports whether v sets anything only a backend with
-- endpoints may set.
local function owns_peers(v)
    return v.method ~= nil or v.retries ~= nil or v.hash_key ~= nil or v.sticky ~= nil
        or v.max_fails ~= nil or v.fail_timeout_ms ~= nil or v.max_conns ~= nil
        or (v.endpoints ~= nil and (not is_array(v.endpoints) or #v.endpoints > 0))
end

local function backend(v, path)
    want_object(v, path)
    only_fields(v, path, BACKEND_FIELDS)
    if v.key == nil then
        bad(path, "key", "is required")
    end
    if not _M.valid_key(v.key) then
        bad(path, "key", "must be 1 to %d of [A-Za-z0-9._:/@-] starting with a letter or digit, got %s",
            MAX_KEY_LEN, describe(v.key))
    end
    if v.split ~= nil then
        if owns_peers(v) then
            bad(path, "split", "a split has no method, retries, hash_key, sticky, limits or endpoints of its own")
        end
        return { key = v.key, split = split(v.split, v.key, path .. ".split"), endpoints = {} }
    end
    local b = { key = v.key, method = "round_robin", retries = 1 }
    if v.method ~= nil then
        if not _M.METHODS[v.method] then
            bad(path, "method", "must be one of round_robin, least_conn, ewma, p2c, chash, sticky; got %s",
                describe(v.method))
        end
        b.method = v.method
    end
    if v.retries ~= nil then
        b.retries = want_int(v.retries, path, "retries", 0, MAX_RETRIES)
    end
    b.max_fails = v.max_fails ~= nil and want_int(v.max_fails, path, "max_fails", 0, MAX_FAILS) or 0
    b.fail_timeout_ms = v.fail_timeout_ms ~= nil
        and want_int(v.fail_timeout_ms, path, "fail_timeout_ms", 0, MAX_FAIL_TIMEOUT_MS) or 0
    if b.max_fails > 0 and b.fail_timeout_ms == 0 then
        bad(path, "fail_timeout_ms", "is required with max_fails")
    end
    b.max_conns = v.max_conns ~= nil and want_int(v.max_conns, path, "max_conns", 0, MAX_CONNS) or 0
    if b.method == "chash" then
        if v.hash_key == nil then
            bad(path, "hash_key", "is required when method is chash")
        end
        local _, err = _M.parse_hash_key(v.hash_key)
        if err then
            bad(path, "hash_key", "%s, got %s", err, describe(v.hash_key))
        end
        b.hash_key = v.hash_key
    elseif v.hash_key ~= nil then
        bad(path, "hash_key", "is only allowed when method is chash")
    end
    if b.method == "sticky" then
        b.sticky = sticky(v.sticky, path .. ".sticky") -- once per backend
    elseif v.sticky ~= nil then
        bad(path, "sticky", "is only allowed when method is sticky")
    end
    if v.endpoints == nil then
        bad(path, "endpoints", "is required (use [] for none)")
    end
    want_array(v.endpoints, path, "endpoints", MAX_ENDPOINTS)
    local eps, seen = {}, {}
    local epath = { path, 0 }
    for i, ev in ipairs(v.endpoints) do
        epath[2] = i - 1
        local e, id = endpoint(ev, epath)
        if seen[id] then
            bad(epath, nil, "duplicates endpoints[%d] (%s port %d)", seen[id] - 1, e.address, e.port)
        end
        seen[id] = i
        eps[i] = e
    end
    -- A canonical order makes equal endpoint sets encode to equal bytes,
    -- so workers rebuild only backends that really changed.
    sort(eps, endpoint_less)
    b.endpoints = eps
    return b
end

local function header(doc, allowed)
    want_object(doc, "payload")
    only_fields(doc, "payload", allowed)
    if doc.version == nil then
        bad("version", nil, "is required")
    end
    if doc.version ~= _M.SCHEMA_VERSION then
        bad("version", nil, "must be %d, got %s", _M.SCHEMA_VERSION, describe(doc.version))
    end
    if doc.generation == nil then
        bad("generation", nil, "is required")
    end
    return want_int(doc.generation, "generation", nil, 0, MAX_GENERATION)
end

-- yield, when set, is called every YIELD_EVERY backends so that a large
-- push does not hold the worker's event loop for its whole validation.
local YIELD_EVERY = 500

local function backends(list, seen, yield)
    local out = {}
    for i, bv in ipairs(list) do
        if yield and i % YIELD_EVERY == 0 then
            yield()
        end
        local path = format("backends[%d]", i - 1)
        local b = backend(bv, path)
        if seen[b.key] then
            bad(path, "key", "duplicates %s", seen[b.key])
        end
        seen[b.key] = path
        out[i] = b
    end
    return out
end

-- host_name reports whether s is an exact host as model.ValidateHost
-- reads one: a lower-case DNS-1123 subdomain, at most MAX_HOST_NAME_LEN
-- long, that is not an IPv4 address. Labels are non-empty and begin and
-- end with a letter or digit.
local function host_name(s)
    return type(s) == "string" and #s >= 1 and #s <= MAX_HOST_NAME_LEN
        and find(s, "^[a-z0-9.-]+$") ~= nil
        and find(s, "^[a-z0-9]") ~= nil and find(s, "[a-z0-9]$") ~= nil
        and not find(s, "..", 1, true) and not find(s, ".-", 1, true)
        and not find(s, "-.", 1, true)
        and _M.parse_address(s) == nil
end

-- host_var checks a variable's name: causeway_route_<id>_<n> or
-- causeway_log_<id>_<n>, a map variable of the shared servers (<id>: 12
-- hex digits, their family's or a shape's).
local function host_var(s)
    local kind, shape = match(s, "^causeway_([a-z]+)_([0-9a-f]+)_[0-9]+$")
    return (kind == "route" or kind == "log") and #shape == 12
end

local HOST_FIELDS = set("name", "shape", "hop", "cert", "vars")

-- host validates one entry of the hosts table (balancer.Host). The name
-- is the table's key and stays out of the entry.
local function host(v, path)
    want_object(v, path)
    only_fields(v, path, HOST_FIELDS)
    if v.name == nil then
        bad(path, "name", "is required")
    end
    if not host_name(v.name) then
        bad(path, "name", "must be an exact lower-case DNS name of at most %d characters, got %s",
            MAX_HOST_NAME_LEN, describe(v.name))
    end
    local s = v.shape
    if type(s) ~= "string" or #s ~= 12 or find(s, "[^0-9a-f]") then
        bad(path, "shape", "must be 12 lower-case hex digits, got %s", describe(s))
    end
    local hop = v.hop
    if type(hop) ~= "string" or #hop > MAX_HOST_HOP_LEN or not find(hop, "^/[%w._/-]*%.sock$") then
        bad(path, "hop", "must be an absolute path of [A-Za-z0-9._/-] ending in .sock, at most %d bytes, got %s",
            MAX_HOST_HOP_LEN, describe(hop))
    end
    local e = { shape = s, hop = hop, vars = {} }
    if v.cert ~= nil and v.cert ~= "" then
        local c = v.cert
        if type(c) ~= "string" or #c > MAX_HOST_CERT_LEN or not find(c, "^/[%w._/-]+$") then
            bad(path, "cert", "must be an absolute path of [A-Za-z0-9._/-], at most %d bytes, got %s",
                MAX_HOST_CERT_LEN, describe(c))
        end
        e.cert = c
    end
    if v.vars == nil then
        bad(path, "vars", "is required (use {} for none)")
    end
    want_object(v.vars, path, "vars")
    for name, value in pairs(v.vars) do
        if not host_var(name) then
            bad(path, "vars", "variable %s must be causeway_route_<id>_<n> or causeway_log_<id>_<n>",
                describe(name))
        end
        if type(value) ~= "string" or #value > MAX_HOST_VALUE_LEN
            or find(value, "[^ -~]") or find(value, '[$"\\]') then
            bad(path, "vars", 'value of %s must be at most %d printable ASCII characters other than " \\ and $, got %s',
                name, MAX_HOST_VALUE_LEN, describe(value))
        end
        e.vars[name] = value
    end
    return v.name, e
end

-- hosts validates the list of a hosts table: it returns the entries as
-- { name = entry } and their names in order.
local function hosts(list, path, yield)
    want_array(list, path, nil, MAX_HOSTS)
    local entries, names, seen = {}, {}, {}
    for i, hv in ipairs(list) do
        if yield and i % YIELD_EVERY == 0 then
            yield()
        end
        local hpath = format("%s[%d]", path, i - 1)
        local name, e = host(hv, hpath)
        if seen[name] then
            bad(hpath, "name", "duplicates %s (%s)", seen[name], name)
        end
        seen[name] = hpath
        entries[name] = e
        names[i] = name
    end
    return { entries = entries, names = names }
end

local STATE_FIELDS = set("version", "generation", "backends", "hosts")
local UPDATE_FIELDS = set("version", "generation", "base", "backends", "delete")

local function state(doc, yield)
    local gen = header(doc, STATE_FIELDS)
    if doc.backends == nil then
        bad("backends", nil, "is required")
    end
    want_array(doc.backends, "backends", nil, MAX_BACKENDS)
    local list = backends(doc.backends, {}, yield)
    -- A full state replaces the hosts table too: absent is empty.
    local tbl = hosts(doc.hosts == nil and json.array() or doc.hosts, "hosts", yield)
    return { generation = gen, backends = list, delete = {}, hosts = tbl }
end

local HOSTS_FIELDS = set("hosts")

local function hosts_doc(doc, yield)
    want_object(doc, "payload")
    only_fields(doc, "payload", HOSTS_FIELDS)
    if doc.hosts == nil then
        bad("hosts", nil, "is required")
    end
    return hosts(doc.hosts, "hosts", yield)
end

local function update(doc, yield)
    local gen = header(doc, UPDATE_FIELDS)
    -- base, when set, is the generation the update was computed against:
    -- the store applies it only on exactly that state (see store.write).
    local base
    if doc.base ~= nil then
        base = want_int(doc.base, "base", nil, 0, MAX_GENERATION)
    end
    local seen = {}
    local list = {}
    if doc.backends ~= nil then
        list = backends(want_array(doc.backends, "backends", nil, MAX_BACKENDS), seen, yield)
    end
    local del = {}
    if doc.delete ~= nil then
        want_array(doc.delete, "delete", nil, MAX_BACKENDS)
        for i, k in ipairs(doc.delete) do
            local path = format("delete[%d]", i - 1)
            if not _M.valid_key(k) then
                bad(path, nil, "must be a backend key, got %s", describe(k))
            end
            if seen[k] then
                bad(path, nil, "%s is also in %s", describe(k), seen[k])
            end
            seen[k] = path
            del[i] = k
        end
    end
    return { generation = gen, base = base, backends = list, delete = del }
end

local function run(fn, body, yield)
    local doc, err = json.decode(body, yield)
    if doc == nil then
        return nil, err
    end
    if yield then
        yield()
    end
    local ok, res = pcall(fn, doc, yield)
    if ok then
        return res
    end
    if type(res) == "table" and res.invalid then
        return nil, res.invalid
    end
    error(res, 0) -- a bug, not bad input: let nginx log it and answer 500
end

-- state validates a full-state document (PUT /v1/state). It returns
-- { generation, backends, delete = {} }, or nil and a message naming the
-- offending field. yield is optional (see YIELD_EVERY).
function _M.state(body, yield)
    return run(state, body, yield)
end

-- update validates a partial update (POST /v1/backends): upserts in
-- "backends", removals in "delete", and optionally the "base" generation
-- it applies to.
function _M.update(body, yield)
    return run(update, body, yield)
end

-- hosts validates a hosts table (PUT /v1/hosts): {"hosts": [...]}. It
-- returns { entries = { name = { shape, hop, cert, vars } }, names }, or
-- nil and a message naming the offending entry. A full state carries the
-- same table in its "hosts" (state(...).hosts).
function _M.hosts(body, yield)
    return run(hosts_doc, body, yield)
end

return _M
