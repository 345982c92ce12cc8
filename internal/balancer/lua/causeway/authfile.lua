-- causeway.authfile: the files of validated credentials the controller
-- writes for causeway.digest and causeway.apikey (0600, under the state
-- directory's secrets). Each worker reads a file at most once a second,
-- so a changed Secret applies without waiting for a reload.

local now, log, ERR = ngx.now, ngx.log, ngx.ERR
local io_open = io.open

local _M = {}

local RELOAD_EVERY = 1 -- seconds between reads of a file

local files = {} -- [path] = { at = seconds, data = parsed | false }

-- read returns what parse(line, data) built from the lines of path into
-- a new table, or nil when the file cannot be read; who names the caller
-- in the error log.
function _M.read(path, who, parse)
    local t = now()
    local f = files[path]
    if f and t - f.at < RELOAD_EVERY then
        return f.data or nil
    end
    local fh, err = io_open(path, "rb")
    if not fh then
        log(ERR, "causeway: ", who, ": ", err)
        files[path] = { at = t, data = false }
        return nil
    end
    local data = {}
    for line in fh:lines() do
        parse(line, data)
    end
    fh:close()
    files[path] = { at = t, data = data }
    return data
end

return _M
