package render

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

type upstreamView struct {
	Name    string
	Servers []string
	// Params are every server's parameters (peerParams).
	Params string
	// Keepalive is the number of idle connections kept (0: none): the
	// backend's own or the ConfigMap's, and none in the variant TLS
	// backends use (see tlsUpstream).
	Keepalive int
}

// planLuaMode prepares the balancer's configuration in dynamic mode, nil
// in plain mode.
func planLuaMode(m *model.Model, p Params) (*luaView, error) {
	if p.Dynamic == nil {
		return nil, nil
	}
	v, err := planLua(SnippetOptions{
		LuaDir:            p.StateDir.LuaDir(),
		PackagePath:       p.Dynamic.LuaPackagePath,
		SocketPath:        p.StateDir.DynamicSocket(),
		UnavailableSocket: p.StateDir.UnavailableSocket(),
		NoLiveSocket:      p.StateDir.NoLiveSocket(),
		StateFile:         p.StateDir.DynamicState(),
		Keepalive:         max(m.Config.UpstreamKeepalive, 1),
		KeepaliveTimeout:  model.FormatDuration(m.Config.UpstreamKeepaliveTimeout),
		KeepaliveRequests: m.Config.UpstreamKeepaliveRequests,
		RequestID:         m.Config.GenerateRequestID,
	})
	if err != nil {
		return nil, fmt.Errorf("lua balancer: %w", err)
	}
	return v, nil
}

// renderUpstreams writes upstreams.conf: in dynamic mode the one
// Lua-balanced upstream (no endpoint appears in any file), else one
// upstream per backend with ready endpoints.
func renderUpstreams(m *model.Model, lua *luaView) ([]byte, error) {
	if lua != nil {
		pools, err := keepaliveUpstreams(m)
		if err != nil {
			return nil, err
		}
		return execute("luaUpstreamsConf", struct {
			Lua   *luaView
			Pools []luaUpstreamView
		}{lua, pools})
	}
	if m.Config.UpstreamKeepaliveTimeout <= 0 || m.Config.UpstreamKeepaliveRequests < 1 {
		return nil, fmt.Errorf("upstream keepalive timeout %s and requests %d must be positive",
			m.Config.UpstreamKeepaliveTimeout, m.Config.UpstreamKeepaliveRequests)
	}
	data := struct {
		KeepaliveTimeout  string
		KeepaliveRequests int
		Upstreams         []upstreamView
	}{KeepaliveTimeout: model.FormatDuration(m.Config.UpstreamKeepaliveTimeout),
		KeepaliveRequests: m.Config.UpstreamKeepaliveRequests}
	tls := tlsBackends(m)
	for _, b := range m.Backends {
		if len(b.Endpoints) == 0 {
			continue
		}
		name, err := upstreamName(b.Key)
		if err != nil {
			return nil, err
		}
		params, err := peerParams(b.Limits)
		if err != nil {
			return nil, fmt.Errorf("backend %s: %w", b.Key, err)
		}
		if err := b.Keepalive.Validate(); err != nil {
			return nil, fmt.Errorf("backend %s: %w", b.Key, err)
		}
		u := upstreamView{Name: name, Params: params, Keepalive: m.Config.UpstreamKeepalive}
		if b.Keepalive.Set {
			u.Keepalive = b.Keepalive.Idle
		}
		for _, e := range b.Endpoints {
			addr, err := listen(e.Address, int(e.Port))
			if err != nil {
				return nil, fmt.Errorf("backend %s: %w", b.Key, err)
			}
			u.Servers = append(u.Servers, addr)
		}
		data.Upstreams = append(data.Upstreams, u)
		if tls[b.Key] {
			data.Upstreams = append(data.Upstreams, upstreamView{Name: tlsUpstream(name), Servers: u.Servers, Params: params})
		}
	}
	return execute("upstreams.conf.tmpl", &data)
}

// keepaliveUpstreams are the Lua-balanced upstreams of the pools that
// backends set for themselves (a VirtualServer upstream's keepalive), one
// per distinct size: nginx keeps idle connections per upstream block, and
// the balancer picks peers alike in every block.
func keepaliveUpstreams(m *model.Model) ([]luaUpstreamView, error) {
	sizes := map[int]bool{}
	for _, b := range m.Backends {
		if err := b.Keepalive.Validate(); err != nil {
			return nil, fmt.Errorf("backend %s: %w", b.Key, err)
		}
		if b.Keepalive.Set {
			sizes[b.Keepalive.Idle] = true
		}
	}
	var out []luaUpstreamView
	timeout := model.FormatDuration(m.Config.UpstreamKeepaliveTimeout)
	for _, n := range slices.Sorted(maps.Keys(sizes)) {
		out = append(out, luaUpstreamView{Name: luaUpstream(&model.Backend{Keepalive: model.Keepalive{Set: true, Idle: n}}),
			Keepalive: n, Timeout: timeout, Requests: m.Config.UpstreamKeepaliveRequests})
	}
	return out, nil
}

// luaUpstream names the Lua-balanced upstream a backend's requests go
// through: the shared one, or the one of the pool size it sets.
func luaUpstream(b *model.Backend) string {
	switch {
	case b == nil || !b.Keepalive.Set:
		return balancer.UpstreamName
	case b.Keepalive.Idle == 0:
		return balancer.UpstreamName + "_no_keepalive"
	}
	return balancer.UpstreamName + "_keepalive_" + strconv.Itoa(b.Keepalive.Idle)
}

// peerParams prints a backend's peer limits as nginx's server
// parameters. Without max_fails nginx would take an endpoint out after
// one failure for 10s; Causeway's default, as ingress-nginx's, never does.
func peerParams(l model.PeerLimits) (string, error) {
	if err := l.Validate(); err != nil {
		return "", err
	}
	out := "max_fails=" + strconv.Itoa(l.MaxFails)
	if l.MaxFails > 0 {
		out += " fail_timeout=" + model.FormatDuration(l.FailTimeout)
	}
	if l.MaxConns > 0 {
		out += " max_conns=" + strconv.Itoa(l.MaxConns)
	}
	return out, nil
}

// tlsBackends are the keys of backends some location speaks TLS to.
func tlsBackends(m *model.Model) map[string]bool {
	out := map[string]bool{}
	for _, srv := range m.Servers {
		for _, l := range srv.Locations {
			if a := l.Policy; a != nil && a.ExternalAuth != nil && a.ExternalAuth.Backend != "" && a.ExternalAuth.TLS != nil {
				out[a.ExternalAuth.Backend] = true
			}
			if p := l.Action.Proxy; p != nil && l.Policy != nil && l.Policy.Protocol.TLS() {
				out[p.Backend] = true
				if p.Fallback != "" {
					out[p.Fallback] = true
				}
			}
		}
	}
	return out
}
