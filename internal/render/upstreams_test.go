package render

import (
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// TestPeerParams: a backend's peer limits as nginx's server parameters;
// limits outside the model's bounds are refused.
func TestPeerParams(t *testing.T) {
	for _, tc := range []struct {
		l    model.PeerLimits
		want string
		err  bool
	}{
		{l: model.PeerLimits{}, want: "max_fails=0"},
		{l: model.PeerLimits{MaxFails: 1, FailTimeout: 10 * time.Second}, want: "max_fails=1 fail_timeout=10s"},
		{l: model.PeerLimits{MaxFails: 2, FailTimeout: 90 * time.Second, MaxConns: 4}, want: "max_fails=2 fail_timeout=90s max_conns=4"},
		{l: model.PeerLimits{MaxFails: 2, FailTimeout: 1500 * time.Millisecond}, err: true},
		{l: model.PeerLimits{MaxConns: 1}, want: "max_fails=0 max_conns=1"},
		{l: model.PeerLimits{MaxFails: 1}, err: true},
		{l: model.PeerLimits{MaxConns: -1}, err: true},
	} {
		got, err := peerParams(tc.l)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("peerParams(%+v) = %q, %v; want %q (error %v)", tc.l, got, err, tc.want, tc.err)
		}
	}
}

// TestUpstreamsKeepalive: a backend's own pool size, in both data planes;
// one outside the model's bounds is refused rather than printed.
func TestUpstreamsKeepalive(t *testing.T) {
	lua, err := planLua(SnippetOptions{LuaDir: "/lua", SocketPath: "/run/d.sock", UnavailableSocket: "/run/u.sock", NoLiveSocket: "/run/n.sock"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		k         model.Keepalive
		lua, want []string // substrings of upstreams.conf, Lua and plain
		err       bool
	}{
		{k: model.Keepalive{}, lua: []string{"upstream causeway_balancer {\n"}, want: []string{"keepalive 320;"}},
		{k: model.Keepalive{Set: true, Idle: 8}, lua: []string{"upstream causeway_balancer_keepalive_8 {", "keepalive 8;"}, want: []string{"keepalive 8;"}},
		{k: model.Keepalive{Set: true}, lua: []string{"upstream causeway_balancer_no_keepalive {\n    server 0.0.0.1:1;"}, want: []string{"max_fails=0;\n}"}},
		{k: model.Keepalive{Set: true, Idle: model.MaxKeepalive + 1}, err: true},
		{k: model.Keepalive{Set: true, Idle: -1}, err: true},
		{k: model.Keepalive{Idle: 4}, err: true},
	} {
		m := &model.Model{Config: model.DefaultConfig(), Backends: []*model.Backend{{Key: "ns/svc/80", Namespace: "ns", Service: "svc", Port: "80",
			Endpoints: []model.Endpoint{{Address: "10.0.0.1", Port: 8080}}, Keepalive: tc.k}}}
		for _, mode := range []struct {
			s    *luaView
			want []string
		}{{lua, tc.lua}, {nil, tc.want}} {
			out, err := renderUpstreams(m, mode.s)
			if (err != nil) != tc.err {
				t.Errorf("%+v (lua %v): error %v, want %v", tc.k, mode.s != nil, err, tc.err)
				continue
			}
			for _, w := range mode.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("%+v (lua %v): no %q in\n%s", tc.k, mode.s != nil, w, out)
				}
			}
		}
	}
}
