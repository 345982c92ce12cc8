-- causeway.certs: host certificates loaded without a reload.
--
-- Each TLS server runs  ssl_certificate_by_lua_block {
--   require("causeway.certs").serve("/state/secrets/ns_name.pem") }
-- next to a static ssl_certificate of the same file (which nginx needs and
-- which covers a failure here). The file is read and parsed once per
-- worker and kept; POST /v1/certificates bumps a counter in the shared
-- dict after the controller rewrote files, and each worker drops its
-- parsed copies when it sees the counter move. A handshake therefore
-- costs one shared-dict read, not a file read and PEM parse: measured at
-- the speed of a static certificate, about twice a variable path's.
--
-- With enable-ocsp the block also names the OCSP response the controller
-- fetched and checked (a DER file beside the certificate, absent until
-- the first one arrives), which is stapled for clients that ask; the
-- controller bumps the counter when it rewrites it too.

local ssl = require("ngx.ssl")
-- ngx.ocsp needs lua-resty-core's FFI; without it nothing is stapled and
-- certificates are served as before.
local has_ocsp, ocsp = pcall(require, "ngx.ocsp")
local store = require("causeway.store")
local hosts = require("causeway.hosts")

local log, ERR = ngx.log, ngx.ERR
local io_open = io.open
local lower = string.lower

local _M = {}

local GEN_KEY = "certgen"
local cache = {}         -- [path] = { cert = cdata, key = cdata, ocsp = string or false }
local cache_gen = false  -- the counter value the cache belongs to

local function read(path)
    local f, err = io_open(path, "rb")
    if not f then
        return nil, err
    end
    local data = f:read("*a")
    f:close()
    return data
end

local function load(path, ocsp_path)
    local pem, err = read(path)
    if not pem then
        return nil, err
    end
    local cert, cerr = ssl.parse_pem_cert(pem)
    if not cert then
        return nil, "certificate: " .. tostring(cerr)
    end
    local key, kerr = ssl.parse_pem_priv_key(pem)
    if not key then
        return nil, "key: " .. tostring(kerr)
    end
    -- No response yet (or none): nothing is stapled.
    local staple = ocsp_path and read(ocsp_path)
    return { cert = cert, key = key, ocsp = staple ~= nil and #staple > 0 and staple }
end

-- serve installs the current certificate of path for this handshake, and
-- the OCSP response of ocsp_path when there is one. On any failure it
-- leaves nginx's static certificate in place.
function _M.serve(path, ocsp_path)
    local gen = ngx.shared[store.DICT]:get(GEN_KEY) or 0
    if gen ~= cache_gen then
        cache, cache_gen = {}, gen
    end
    local e = cache[path]
    if not e then
        local err
        e, err = load(path, ocsp_path)
        if not e then
            log(ERR, "causeway: cannot load ", path, ", serving the certificate loaded at start: ", err)
            return
        end
        cache[path] = e
    end
    local ok, err = ssl.clear_certs()
    if ok then
        ok, err = ssl.set_cert(e.cert)
    end
    if ok then
        ok, err = ssl.set_priv_key(e.key)
    end
    if not ok then
        log(ERR, "causeway: cannot set certificate ", path, ": ", err)
        return ngx.exit(ngx.ERROR)
    end
    if e.ocsp and has_ocsp then
        -- A client that did not ask gets nothing ("no status req").
        local sok, serr = ocsp.set_ocsp_status_resp(e.ocsp)
        if not sok then
            log(ERR, "causeway: cannot staple the OCSP response of ", path, ": ", serr)
        end
    end
end

-- serve_table is serve for the catch-all and wildcard servers, where the
-- handshakes of hosts added since the last reload land: a server name
-- (SNI) in the hosts table (causeway.hosts) with a certificate of its own
-- gets that one instead, without stapling. Other servers' handshakes never
-- pay for the lookup.
function _M.serve_table(path, ocsp_path)
    local name = ssl.server_name()
    local own = name and hosts.cert(lower(name))
    if own then
        path, ocsp_path = own, nil
    end
    return _M.serve(path, ocsp_path)
end

-- bump tells every worker that certificate files changed.
function _M.bump()
    local gen, err = ngx.shared[store.DICT]:incr(GEN_KEY, 1, 0)
    if not gen then
        return nil, err
    end
    return gen
end

return _M
