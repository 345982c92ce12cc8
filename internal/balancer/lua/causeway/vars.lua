-- causeway.vars: nginx variables read as numbers, for the log phase.
--
-- tonumber(ngx.var.x) builds a Lua string for every value, and LuaJIT
-- cannot compile tonumber of a string into a trace: the pair costs about
-- 250 ns a read, twice what nginx spends producing the value. number()
-- reads the variable through the same C function ngx.var uses and
-- parses its bytes where they lie, so no string is made. Measured in
-- nginx's log phase (1.22, Debian's LuaJIT): the metrics' five reads
-- fell from about 1.0 to 0.7 µs a request.
--
-- Where that function is not what this module expects (a build without
-- resty.core's declaration of it), number() falls back to tonumber of
-- ngx.var, with the same results.

local tonumber = tonumber

local _M = {}

local ok, impl = pcall(function()
    local ffi = require("ffi")
    local base = require("resty.core.base")
    require("resty.core.var") -- declares ngx_http_lua_ffi_var_get
    local C = ffi.C
    local var_get = C.ngx_http_lua_ffi_var_get
    local get_request = base.get_request
    local value = ffi.new("unsigned char *[1]")
    local len = ffi.new("size_t[1]")
    local err = ffi.new("char *[1]")
    -- nginx writes the lowercased name here; our names are shorter.
    local lowcase = ffi.new("char[64]")

    -- general parses what the fast path does not take: digits with at
    -- most one dot, anything else (a list of attempts "0.001, 0.002",
    -- "-", an empty value) is nil, as tonumber would have it. v and scale
    -- are exact integers, so v / scale is the double nearest the decimal
    -- value, as tonumber gives.
    local function general(p, n)
        if n == 0 then
            return nil
        end
        local v, scale, dot = 0, 1, false
        for i = 0, n - 1 do
            local c = p[i]
            if c >= 48 and c <= 57 then
                v = v * 10 + (c - 48)
                if dot then
                    scale = scale * 10
                end
            elseif c == 46 and not dot then
                dot = true
            else
                return nil
            end
        end
        if n == 1 and dot then
            return nil -- "."
        end
        return v / scale
    end

    -- text returns the variable's value as a string, nil when it has
    -- none or is empty.
    local ffi_string = ffi.string
    local function text(name)
        local n = #name
        if n > 63 then
            local v = ngx.var[name]
            return v ~= "" and v or nil
        end
        if var_get(get_request(), name, n, lowcase, 0, value, len, err) ~= 0 then
            return nil
        end
        local l = tonumber(len[0])
        if l == 0 then
            return nil
        end
        return ffi_string(value[0], l)
    end

    local function number(name)
        local n = #name
        if n > 63 then
            return tonumber(ngx.var[name])
        end
        if var_get(get_request(), name, n, lowcase, 0, value, len, err) ~= 0 then
            return nil -- not found (declined) or an error: no value
        end
        local p, l = value[0], tonumber(len[0])
        -- The common shape of nginx's times: "S.mmm" ("%T.%03M").
        if l == 5 and p[1] == 46 then
            local s, a, b, c = p[0] - 48, p[2] - 48, p[3] - 48, p[4] - 48
            if s >= 0 and s <= 9 and a >= 0 and a <= 9 and b >= 0 and b <= 9 and c >= 0 and c <= 9 then
                -- One division of exact integers: the double nearest the
                -- decimal value, as tonumber gives.
                return (s * 1000 + a * 100 + b * 10 + c) / 1000
            end
            return nil
        end
        return general(p, l)
    end

    return { number = number, text = text }
end)

-- number returns the value of the variable called name (lower case) as a
-- number when it is one (decimal digits with at most one dot), else nil.
--
-- text returns the value of the variable called name as a string, nil
-- when it has none or it is empty: one read, and no string for an empty
-- value.
if ok then
    _M.number = impl.number
    _M.text = impl.text
    _M.ffi = true
else
    _M.number = function(name)
        return tonumber(ngx.var[name])
    end
    _M.text = function(name)
        local v = ngx.var[name]
        return v ~= "" and v or nil
    end
    _M.ffi = false
end

return _M
