-- causeway.vars: nginx variables read without making a Lua string for
-- an empty value.
--
-- text() reads the variable through the same C function ngx.var uses and
-- makes a string only of a value that is not empty: for a variable that
-- is usually empty (the client's X-Request-ID), one read and no garbage.
--
-- Where that function is not what this module expects (a build without
-- resty.core's declaration of it), text() falls back to ngx.var, with
-- the same results.

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

    return { text = text }
end)

-- text returns the value of the variable called name as a string, nil
-- when it has none or it is empty: one read, and no string for an empty
-- value.
if ok then
    _M.text = impl.text
    _M.ffi = true
else
    _M.text = function(name)
        local v = ngx.var[name]
        return v ~= "" and v or nil
    end
    _M.ffi = false
end

return _M
