-- causeway.requestid: fresh X-Request-ID values, for requests that come
-- without one of their own (generate-request-id).
--
-- A fresh one is what nginx's $request_id is: 16 bytes from OpenSSL's
-- RAND_bytes, as 32 lowercase hex digits. $request_id asks OpenSSL for
-- each request, and OpenSSL 3 spends most of such a call finding its
-- random generator, not making bytes: about 5,000 instructions, the
-- costliest thing a default location did (about 2.5 µs of a 19 µs
-- request, measured). Here each worker asks once for 256 of them.
--
-- Every server block starts its rewrite phase with
--   set_by_lua_block $causeway_request_id { return ...get() }
-- where $causeway_request_id is first a map to the client's X-Request-ID.
-- get keeps what the variable holds: the client's ID, or the one an
-- earlier pass gave. That phase runs again after an internal redirect and
-- for an auth subrequest (which shares the request's variables), and the
-- request keeps the ID it got first. (Not an nginx "if" around it: each
-- server-level if is a location of its own, 216 MB and 2 s more for
-- nginx to load 10,000 servers; and not set_by_lua's own arguments, which
-- crash Angie 1.12's build of the module.)
--
-- Where RAND_bytes cannot be reached through the FFI (an nginx linking
-- OpenSSL statically without exporting it), get falls back to
-- $request_id itself.

local ffi = require("ffi")

local band, rshift = bit.band, bit.rshift
local ffi_string = ffi.string

local _M = {}

-- BATCH is the random bytes asked for at once: 256 IDs.
local BATCH = 4096

local rand_bytes
do
    -- A declaration made before (resty.random's) is as good as ours, so
    -- a failing cdef is no failure; a missing symbol is.
    pcall(ffi.cdef, "int RAND_bytes(unsigned char *buf, int num);")
    local found, fn = pcall(function()
        return ffi.C.RAND_bytes
    end)
    if found and fn ~= nil then
        rand_bytes = fn
    end
end
-- ffi says whether IDs come from the batch (else from $request_id).
_M.ffi = rand_bytes ~= nil

local buf = ffi.new("unsigned char[?]", BATCH)
-- pos is the next unused byte; BATCH means none is left. A worker starts
-- empty (init_worker), so no two workers hand out the bytes a master
-- might have drawn before forking them.
local pos = BATCH
local out = ffi.new("unsigned char[32]")
local HEX = ffi.new("const unsigned char[16]", { 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102 })

-- fresh returns a new ID, or nil when OpenSSL gives no bytes.
local function fresh()
    if pos + 16 > BATCH then
        if rand_bytes == nil or rand_bytes(buf, BATCH) ~= 1 then
            return nil
        end
        pos = 0
    end
    local p = pos
    for i = 0, 15 do
        local b = buf[p + i]
        out[2 * i] = HEX[rshift(b, 4)]
        out[2 * i + 1] = HEX[band(b, 15)]
    end
    pos = p + 16
    return ffi_string(out, 32)
end

local text = require("causeway.vars").text

-- get returns the ID $causeway_request_id holds already, else a fresh one.
function _M.get()
    return text("causeway_request_id") or fresh() or ngx.var.request_id
end

-- init_worker empties the batch, so each worker draws its own.
function _M.init_worker()
    pos = BATCH
end

-- fresh is exported for the tests.
_M.fresh = fresh

return _M
