-- causeway.json: a strict JSON decoder and a small deterministic encoder.
--
-- Debian's nginx Lua module ships without lua-cjson, and the controller's
-- payloads have to be validated strictly anyway, so we parse JSON ourselves:
-- RFC 8259 grammar only, duplicate object keys rejected, nesting bounded.
-- Decoded arrays carry array_mt so that validation can tell [] from {};
-- JSON null decodes to the json.null sentinel, never to nil.

local byte, sub, find, char, format, gsub =
    string.byte, string.sub, string.find, string.char, string.format, string.gsub
local concat, sort = table.concat, table.sort
local type, pairs, setmetatable, getmetatable, tonumber, tostring, pcall, error =
    type, pairs, setmetatable, getmetatable, tonumber, tostring, pcall, error
local floor, huge = math.floor, math.huge

local _M = {}

local array_mt = { __name = "causeway.json.array" }
_M.array_mt = array_mt
_M.null = setmetatable({}, { __name = "causeway.json.null" })
local null = _M.null

-- Nesting deeper than this is never needed by our payloads.
local MAX_DEPTH = 20

-- array marks t as a JSON array (so that an empty one encodes as []).
function _M.array(t)
    return setmetatable(t or {}, array_mt)
end

function _M.is_array(v)
    return type(v) == "table" and getmetatable(v) == array_mt
end

local function fail(pos, msg)
    error({ json_error = format("invalid JSON at byte %d: %s", pos, msg) }, 0)
end

local function skip_ws(s, pos)
    local c = byte(s, pos)
    -- Compact JSON (what Go's encoder writes) has no whitespace between
    -- tokens; check one byte before running a pattern.
    if c ~= 0x20 and c ~= 0x0A and c ~= 0x0D and c ~= 0x09 then
        return pos
    end
    local _, e = find(s, "^[ \t\r\n]*", pos)
    return e + 1
end

local function utf8_char(cp)
    if cp < 0x80 then
        return char(cp)
    elseif cp < 0x800 then
        return char(0xC0 + floor(cp / 0x40), 0x80 + cp % 0x40)
    elseif cp < 0x10000 then
        return char(0xE0 + floor(cp / 0x1000), 0x80 + floor(cp / 0x40) % 0x40,
                    0x80 + cp % 0x40)
    end
    return char(0xF0 + floor(cp / 0x40000), 0x80 + floor(cp / 0x1000) % 0x40,
                0x80 + floor(cp / 0x40) % 0x40, 0x80 + cp % 0x40)
end

local simple_escapes = {
    [0x22] = '"', [0x5C] = "\\", [0x2F] = "/", [0x62] = "\b",
    [0x66] = "\f", [0x6E] = "\n", [0x72] = "\r", [0x74] = "\t",
}

-- parse_string parses the string whose opening quote is at pos. A byte
-- loop rather than a pattern search: LuaJIT compiles it, while a pattern
-- find drops back to the interpreter on every string.
local function parse_string(s, pos)
    local buf, n = nil, 0
    local i = pos + 1 -- start of the pending unescaped run
    local j = i
    while true do
        local c = byte(s, j)
        if c == 0x22 then
            if not buf then
                return sub(s, i, j - 1), j + 1
            end
            n = n + 1
            buf[n] = sub(s, i, j - 1)
            return concat(buf, "", 1, n), j + 1
        elseif c == 0x5C then
            buf = buf or {}
            n = n + 1
            buf[n] = sub(s, i, j - 1)
            local e = byte(s, j + 1)
            if e == 0x75 then -- \uXXXX, possibly a surrogate pair
                local hex = sub(s, j + 2, j + 5)
                if not find(hex, "^%x%x%x%x$") then
                    fail(j, "bad \\u escape")
                end
                local cp = tonumber(hex, 16)
                j = j + 6
                if cp >= 0xD800 and cp <= 0xDBFF then
                    if not find(s, "^\\u[dD][c-fC-F]%x%x", j) then
                        fail(j, "unpaired surrogate")
                    end
                    local lo = tonumber(sub(s, j + 2, j + 5), 16)
                    cp = 0x10000 + (cp - 0xD800) * 0x400 + (lo - 0xDC00)
                    j = j + 6
                elseif cp >= 0xDC00 and cp <= 0xDFFF then
                    fail(j, "unpaired surrogate")
                end
                n = n + 1
                buf[n] = utf8_char(cp)
            else
                local r = e and simple_escapes[e]
                if not r then
                    fail(j, "bad escape")
                end
                n = n + 1
                buf[n] = r
                j = j + 2
            end
            i = j
        elseif c == nil then
            fail(pos, "unterminated string")
        elseif c < 0x20 then
            fail(j, "control character in string")
        else
            j = j + 1
        end
    end
end

-- parse_number follows the JSON grammar exactly: no leading zeros, no
-- leading '+', no bare '.', no hex, no NaN or Infinity.
local function parse_number(s, pos)
    local p = pos
    if byte(s, p) == 0x2D then
        p = p + 1
    end
    local c = byte(s, p)
    if c == 0x30 then
        p = p + 1
    elseif c and c >= 0x31 and c <= 0x39 then
        local _, e = find(s, "^%d+", p)
        p = e + 1
    else
        fail(pos, "bad number")
    end
    if byte(s, p) == 0x2E then
        local _, e = find(s, "^%d+", p + 1)
        if not e then
            fail(pos, "bad number")
        end
        p = e + 1
    end
    c = byte(s, p)
    if c == 0x65 or c == 0x45 then
        local _, e = find(s, "^[-+]?%d+", p + 1)
        if not e then
            fail(pos, "bad number")
        end
        p = e + 1
    end
    local v = tonumber(sub(s, pos, p - 1))
    if not v or v ~= v or v == huge or v == -huge then
        fail(pos, "number out of range")
    end
    return v, p
end

local parse_value

local function parse_array(s, pos, depth, yield)
    local t, n = setmetatable({}, array_mt), 0
    pos = skip_ws(s, pos + 1)
    if byte(s, pos) == 0x5D then
        return t, pos + 1
    end
    while true do
        local v
        v, pos = parse_value(s, pos, depth, yield)
        n = n + 1
        t[n] = v
        if yield and n % 500 == 0 then
            yield()
        end
        pos = skip_ws(s, pos)
        local c = byte(s, pos)
        if c == 0x5D then
            return t, pos + 1
        elseif c ~= 0x2C then
            fail(pos, "expected ',' or ']'")
        end
        pos = skip_ws(s, pos + 1)
    end
end

local function parse_object(s, pos, depth, yield)
    local t = {}
    pos = skip_ws(s, pos + 1)
    if byte(s, pos) == 0x7D then
        return t, pos + 1
    end
    while true do
        if byte(s, pos) ~= 0x22 then
            fail(pos, "expected a string key")
        end
        local kpos = pos
        local k
        k, pos = parse_string(s, pos)
        if t[k] ~= nil then
            fail(kpos, "duplicate key")
        end
        pos = skip_ws(s, pos)
        if byte(s, pos) ~= 0x3A then
            fail(pos, "expected ':'")
        end
        local v
        v, pos = parse_value(s, skip_ws(s, pos + 1), depth, yield)
        t[k] = v
        pos = skip_ws(s, pos)
        local c = byte(s, pos)
        if c == 0x7D then
            return t, pos + 1
        elseif c ~= 0x2C then
            fail(pos, "expected ',' or '}'")
        end
        pos = skip_ws(s, pos + 1)
    end
end

parse_value = function(s, pos, depth, yield)
    local c = byte(s, pos)
    if c == 0x7B or c == 0x5B then
        if depth >= MAX_DEPTH then
            fail(pos, "nesting too deep")
        end
        if c == 0x7B then
            return parse_object(s, pos, depth + 1, yield)
        end
        return parse_array(s, pos, depth + 1, yield)
    elseif c == 0x22 then
        return parse_string(s, pos)
    elseif c == 0x74 then
        local r, u, e = byte(s, pos + 1, pos + 3)
        if r == 0x72 and u == 0x75 and e == 0x65 then -- "true"
            return true, pos + 4
        end
    elseif c == 0x66 then
        local a, l, s2, e = byte(s, pos + 1, pos + 4)
        if a == 0x61 and l == 0x6C and s2 == 0x73 and e == 0x65 then -- "false"
            return false, pos + 5
        end
    elseif c == 0x6E then
        local u, l, l2 = byte(s, pos + 1, pos + 3)
        if u == 0x75 and l == 0x6C and l2 == 0x6C then -- "null"
            return null, pos + 4
        end
    elseif c == 0x2D or (c and c >= 0x30 and c <= 0x39) then
        return parse_number(s, pos)
    end
    fail(pos, c and "unexpected character" or "unexpected end of input")
end

-- decode parses one JSON text. It returns the value, or nil and an error.
-- yield, if given, is called after every 500 elements of an array, so a
-- caller in nginx can let other requests run during a large document.
function _M.decode(s, yield)
    if type(s) ~= "string" then
        return nil, "invalid JSON: not a string"
    end
    local ok, v, pos = pcall(parse_value, s, skip_ws(s, 1), 0, yield)
    if not ok then
        if type(v) == "table" and v.json_error then
            return nil, v.json_error
        end
        return nil, "invalid JSON: " .. tostring(v)
    end
    pos = skip_ws(s, pos)
    if pos <= #s then
        return nil, format("invalid JSON at byte %d: trailing data", pos)
    end
    return v
end

local encode_value

local encode_escapes = {
    ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t",
}

local function escape_char(c)
    return encode_escapes[c] or format("\\u%04x", byte(c))
end

local function encode_string(s)
    return '"' .. gsub(s, '[%c"\\]', escape_char) .. '"'
end

local function encode_table(t, out, n, depth)
    if depth > MAX_DEPTH then
        error("json: nesting too deep", 0)
    end
    if getmetatable(t) == array_mt or t[1] ~= nil then
        n = n + 1
        out[n] = "["
        for i = 1, #t do
            if i > 1 then
                n = n + 1
                out[n] = ","
            end
            n = encode_value(t[i], out, n, depth + 1)
        end
        n = n + 1
        out[n] = "]"
        return n
    end
    -- Objects are written with sorted keys so equal tables encode equally.
    local keys, k = {}, 0
    for key in pairs(t) do
        if type(key) ~= "string" then
            error("json: object key is not a string", 0)
        end
        k = k + 1
        keys[k] = key
    end
    sort(keys)
    n = n + 1
    out[n] = "{"
    for i = 1, k do
        if i > 1 then
            n = n + 1
            out[n] = ","
        end
        n = n + 1
        out[n] = encode_string(keys[i])
        n = n + 1
        out[n] = ":"
        n = encode_value(t[keys[i]], out, n, depth + 1)
    end
    n = n + 1
    out[n] = "}"
    return n
end

encode_value = function(v, out, n, depth)
    local tv = type(v)
    local s
    if v == nil or v == null then
        s = "null"
    elseif tv == "boolean" then
        s = v and "true" or "false"
    elseif tv == "number" then
        if v ~= v or v == huge or v == -huge then
            error("json: cannot encode NaN or Infinity", 0)
        end
        if v == floor(v) and v > -2^53 and v < 2^53 then
            s = format("%d", v)
        else
            s = format("%.17g", v)
        end
    elseif tv == "string" then
        s = encode_string(v)
    elseif tv == "table" then
        return encode_table(v, out, n, depth)
    else
        error("json: cannot encode a " .. tv, 0)
    end
    n = n + 1
    out[n] = s
    return n
end

-- encode returns the JSON text for v, or nil and an error.
function _M.encode(v)
    local out = {}
    local ok, n = pcall(encode_value, v, out, 0, 0)
    if not ok then
        return nil, n
    end
    return concat(out, "", 1, n)
end

return _M
