package render

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/causeway/causeway/internal/balancer"
)

// SnippetOptions parameterises NginxSnippets: the nginx side of the
// Lua balancer (package balancer holds the Lua side). Zero values take the
// documented defaults.
type SnippetOptions struct {
	// LuaDir is the directory passed to WriteLua. Required, absolute.
	LuaDir string
	// PackagePath is where other Lua modules (lua-resty-core) are found
	// after LuaDir: a value ParseLuaPackagePath returned; "" means
	// DefaultLuaPackagePath.
	PackagePath string
	// SocketPath is the dynamic channel's unix socket. Required, absolute,
	// at most 107 bytes. Its directory should be reachable only by nginx's
	// master and the controller: anyone who can connect can reroute
	// traffic.
	SocketPath string
	// UnavailableSocket is the unix socket of a server that answers every
	// request with 503. Required, absolute, at most 107 bytes. The
	// balancer sends a request there when its backend has no ready
	// endpoint, since a balancer can only pick a peer, not answer.
	UnavailableSocket string
	// NoLiveSocket is the unix socket of a server that answers every
	// request with 502, nginx's status when every server of an upstream
	// is out after failures or at max_conns ("no live upstreams").
	// Required, like UnavailableSocket.
	NoLiveSocket string
	// StateDictSize is the size of the shared dict ("32m"). It must hold
	// two copies of the serialised state (one copy of 10,000 backends with
	// 3 endpoints each is about 2.6 MB); a push that does not fit is
	// refused with 507.
	StateDictSize string
	// Keepalive is the number of idle upstream connections each worker
	// keeps (64).
	Keepalive int
	// KeepaliveTimeout closes idle upstream connections after this time
	// ("60s").
	KeepaliveTimeout string
	// KeepaliveRequests is the number of requests per upstream
	// connection (1000).
	KeepaliveRequests int
	// MaxBodySize bounds one push on the dynamic channel ("32m").
	MaxBodySize string
	// StateFile, when set, is a file holding the last full state the
	// controller pushed (the same JSON as PUT /v1/state). nginx's master
	// loads it, replacing the shared state, whenever it (re)reads its
	// configuration, so a restarted nginx serves the last known endpoints
	// from its first request instead of answering 503 until the
	// controller pushes again, and a reload discards any state that did
	// not come from the controller. The controller must write the file
	// before each push (the master reads it under the same lock as a
	// push, so the later of the two wins). Keep it, like the socket,
	// where only the master and the controller can reach it.
	StateFile string
	// RequestID says that servers assign X-Request-ID with
	// causeway.requestid (requestid.go), whose workers start with no
	// random bytes of the master's.
	RequestID bool
}

// Snippets is the configuration the renderer emits verbatim. Each field
// is one or more complete directives, newline-terminated, without
// indentation.
type Snippets struct {
	// HTTP goes in the http block, once. It holds the only
	// lua_package_path directive nginx allows there: if other Lua code
	// needs a path, extend this one.
	HTTP string
	// Upstream goes in the http block, once.
	Upstream string
	// Location goes in every proxied location, after BackendDirective.
	// It installs the header-filter and log hooks (which only some
	// methods need) and proxies to balancer.UpstreamName. Upstream keepalive also needs
	// "proxy_http_version 1.1;" and "proxy_set_header Connection \"\";",
	// which the renderer sets with its other proxy headers.
	Location string
	// DynamicServer is a complete server block for the http block. It
	// listens on the unix socket only.
	DynamicServer string
	// UnavailableServer is two complete server blocks for the http
	// block: one on UnavailableSocket, one on NoLiveSocket.
	UnavailableServer string
}

var (
	sizeRe = regexp.MustCompile(`^[1-9][0-9]{0,9}[kKmM]?$`)
	timeRe = regexp.MustCompile(`^[1-9][0-9]{0,9}(ms|s|m|h)?$`)
	// Characters that would end or alter a directive or a Lua path entry.
	unsafePathChars = " \t\r\n;{}\"'\\$#?"
)

// maxSocketPath is sun_path's size on Linux less the terminating NUL.
const maxSocketPath = 107

func checkPath(what, p string) error {
	if p == "" || !filepath.IsAbs(p) {
		return fmt.Errorf("%s %q must be an absolute path", what, p)
	}
	if strings.ContainsAny(p, unsafePathChars) {
		return fmt.Errorf("%s %q must not contain spaces or any of ;{}\"'\\$#?", what, p)
	}
	return nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// planLua validates o and prepares the view the templates print.
func planLua(o SnippetOptions) (*luaView, error) {
	if err := checkPath("lua dir", o.LuaDir); err != nil {
		return nil, err
	}
	extra, err := ParseLuaPackagePath(o.PackagePath)
	if err != nil {
		return nil, fmt.Errorf("lua package path: %w", err)
	}
	dictSize := orDefault(o.StateDictSize, "32m")
	bodySize := orDefault(o.MaxBodySize, "32m")
	timeout := orDefault(o.KeepaliveTimeout, "60s")
	keepalive := orDefault(o.Keepalive, 64)
	requests := orDefault(o.KeepaliveRequests, 1000)
	for _, s := range []struct{ name, v string }{{"state dict size", dictSize}, {"max body size", bodySize}} {
		if !sizeRe.MatchString(s.v) {
			return nil, fmt.Errorf("%s %q must look like 512k or 32m", s.name, s.v)
		}
	}
	if !timeRe.MatchString(timeout) {
		return nil, fmt.Errorf("keepalive timeout %q must look like 60s", timeout)
	}
	if keepalive < 1 || requests < 1 {
		return nil, fmt.Errorf("keepalive (%d) and keepalive requests (%d) must be positive", keepalive, requests)
	}

	v := &luaView{StateDict: balancer.StateDict, DictSize: dictSize, StateFile: "nil", RequestID: o.RequestID, BodySize: bodySize,
		Shared: luaUpstreamView{Name: balancer.UpstreamName, Keepalive: keepalive, Timeout: timeout, Requests: requests},
		TLS:    luaUpstreamView{Name: balancer.UpstreamTLSName}}
	if v.PackagePath, err = Quote(luaPackagePath(filepath.Clean(o.LuaDir), extra)); err != nil {
		return nil, err
	}
	sockets := []struct {
		what, path string
		to         *string
	}{{"socket path", o.SocketPath, &v.Socket}, {"unavailable socket", o.UnavailableSocket, &v.UnavailableSocket},
		{"no-live socket", o.NoLiveSocket, &v.NoLiveSocket}}
	for _, sock := range sockets {
		if err := checkPath(sock.what, sock.path); err != nil {
			return nil, err
		}
		if len(sock.path) > maxSocketPath {
			return nil, fmt.Errorf("%s %q is longer than %d bytes", sock.what, sock.path, maxSocketPath)
		}
		if *sock.to, err = quotedPathBody(filepath.Clean(sock.path)); err != nil {
			return nil, fmt.Errorf("%s: %w", sock.what, err)
		}
	}
	if o.StateFile != "" {
		if err := checkPath("state file", o.StateFile); err != nil {
			return nil, err
		}
		// A Lua string: the path needs no escaping there either.
		path, err := quotedPathBody(filepath.Clean(o.StateFile))
		if err != nil {
			return nil, fmt.Errorf("state file: %w", err)
		}
		v.StateFile = `"` + path + `"`
	}
	return v, nil
}

// luaView feeds templates/lua.conf.tmpl. Every string is validated or
// quoted: paths need no quoting (quotedPathBody), sizes and times passed
// sizeRe and timeRe.
type luaView struct {
	// PackagePath is lua_package_path's quoted value.
	PackagePath         string
	StateDict, DictSize string
	// StateFile is the balancer's first argument in Lua: nil, or the
	// state file as a Lua string.
	StateFile string
	// Socket, UnavailableSocket and NoLiveSocket are the unix sockets of
	// the dynamic channel and of the 503 and 502 servers.
	Socket, UnavailableSocket, NoLiveSocket string
	// BodySize bounds one push on the dynamic channel.
	BodySize string
	// RequestID starts causeway.requestid in every worker.
	RequestID bool
	// Shared is the upstream every location proxies to; TLS its twin
	// without keepalive for TLS backends.
	Shared, TLS luaUpstreamView
}

// luaUpstreamView is an upstream whose every peer the Lua balancer
// picks, keeping up to Keepalive idle connections per worker (none when
// 0) for Timeout and Requests.
type luaUpstreamView struct {
	Name      string
	Keepalive int
	Timeout   string
	Requests  int
}

// NginxSnippets returns the configuration fragments for the given paths.
// It fails only on options that would produce an invalid or unsafe
// configuration.
func NginxSnippets(o SnippetOptions) (Snippets, error) {
	v, err := planLua(o)
	if err != nil {
		return Snippets{}, err
	}
	return v.snippets()
}

// snippets prints the fragments of v.
func (v *luaView) snippets() (Snippets, error) {
	var s Snippets
	for _, part := range []struct {
		to   *string
		name string
	}{{&s.HTTP, "luaHTTP"}, {&s.Upstream, "luaBalancerUpstreams"}, {&s.Location, "luaLocation"},
		{&s.DynamicServer, "luaDynamicServer"}, {&s.UnavailableServer, "luaUnavailableServers"}} {
		b, err := execute(part.name, v)
		if err != nil {
			return Snippets{}, err
		}
		*part.to = string(b)
	}
	return s, nil
}

// BackendDirective returns the line that names a location's backend, e.g.
// `set $causeway_backend "default/web/80";`. The key grammar (see
// balancer.ValidateKey) admits nothing nginx would interpret inside the quotes.
func BackendDirective(key string) (string, error) {
	if err := balancer.ValidateKey(key); err != nil {
		return "", err
	}
	q, err := Quote(key)
	if err != nil {
		return "", err
	}
	b, err := execute("backendDirective", q)
	return string(b), err
}
