-- causeway.apikey: API key authentication, NGINX Ingress Controller's
-- apiKey Policy. A location with it runs
--
--   set $causeway_apikey_file "/state/secrets/ns_name_apikey.htpasswd";
--   set $causeway_apikey_vars "http_x_api_key arg_apikey";
--   access_by_lua_block { require("causeway.apikey").check() }
--
-- The path and the variable names reach Lua through nginx variables,
-- quoted by the renderer, never through Lua source. The supplied key is
-- the values of those variables joined in order, as NGINX Ingress
-- Controller joins them: none supplied answers 401; a key whose SHA-256
-- matches no client's answers 403. The file holds "client:sha256hex"
-- lines the controller validated (never a key), read by causeway.authfile.
-- Every client's hash is compared, in constant time, whatever matched
-- first. A file that cannot be read answers 500: never open. Keys are
-- never logged.

local ngx = ngx
local var = ngx.var
local log, ERR = ngx.log, ngx.ERR
local byte, gmatch, concat = string.byte, string.gmatch, table.concat
local authfile = require("causeway.authfile")
local bit = require("bit")
local bor, bxor = bit.bor, bit.bxor
local ffi = require("ffi")

-- SHA-256 from the OpenSSL nginx links with (EVP, not deprecated in 3.x).
-- Each declaration on its own: another module may have declared it.
pcall(ffi.cdef, "typedef struct evp_md_st EVP_MD;")
pcall(ffi.cdef, "const EVP_MD *EVP_sha256(void);")
pcall(ffi.cdef, "int EVP_Digest(const void *data, size_t count, unsigned char *md, unsigned int *size, const EVP_MD *type, void *impl);")
local C = ffi.C
local digest = ffi.new("unsigned char[32]")
local digest_len = ffi.new("unsigned int[1]")

local _M = {}

local function sha256(s)
    if C.EVP_Digest(s, #s, digest, digest_len, C.EVP_sha256(), nil) ~= 1 or digest_len[0] ~= 32 then
        return nil
    end
    return ffi.string(digest, 32)
end

local function unhex(h)
    return (h:gsub("%x%x", function(x) return string.char(tonumber(x, 16)) end))
end

-- hashes_of reads the "client:sha256hex" lines into a list of 32-byte
-- digests; nil when the file cannot be read.
local function hashes_of(path)
    return authfile.read(path, "apikey", function(line, hashes)
        local h = line:match("^[%w%.%-_]+:(%x+)$")
        if h and #h == 64 then
            hashes[#hashes + 1] = unhex(h)
        end
    end)
end

-- matches compares sum with every hash, without stopping at a match.
local function matches(sum, hashes)
    local found = 0
    for i = 1, #hashes do
        local h, diff = hashes[i], 0
        for j = 1, 32 do
            diff = bor(diff, bxor(byte(sum, j), byte(h, j)))
        end
        found = bor(found, diff == 0 and 1 or 0)
    end
    return found == 1
end

function _M.check()
    local parts = {}
    for name in gmatch(var.causeway_apikey_vars or "", "%S+") do
        local v = var[name]
        if v and v ~= "" then
            parts[#parts + 1] = v
        end
    end
    if #parts == 0 then
        return ngx.exit(401)
    end
    local hashes = hashes_of(var.causeway_apikey_file or "")
    if not hashes then
        return ngx.exit(500)
    end
    local sum = sha256(concat(parts))
    if not sum then
        log(ERR, "causeway: apikey: SHA-256 failed")
        return ngx.exit(500)
    end
    if not matches(sum, hashes) then
        return ngx.exit(403)
    end
end

return _M
