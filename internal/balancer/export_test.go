package balancer

import "context"

// Do exposes the raw request for the external tests, which send payloads
// the typed methods would never build.
func (c *Client) Do(ctx context.Context, method, path string, body []byte, out any) error {
	return c.do(ctx, method, path, body, out)
}

// LuaLimits names each limit as validate.lua does.
var LuaLimits = luaLimits
