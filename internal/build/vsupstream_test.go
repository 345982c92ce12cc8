package build

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

func backendByKey(m *model.Model, key string) *model.Backend {
	for _, be := range m.Backends {
		if be.Key == key {
			return be
		}
	}
	return nil
}

// TestVirtualServerUpstreamBackends: lb-method and sessionCookie set the
// backend's balancing like the balancing annotations (oldest object
// wins, a Service's own causeway.io/load-balance beats both), and
// use-cluster-ip proxies to the cluster IP like service-upstream.
func TestVirtualServerUpstreamBackends(t *testing.T) {
	a := "default/" + svcName(0) + "/80"
	for _, tc := range []struct {
		name    string
		set     func(snap *source.Snapshot, vs *nicv1.VirtualServer)
		backend string // the key the route proxies to
		want    model.Balance
		limits  model.PeerLimits
		pool    model.Keepalive
		reasons []string // Problems on the VirtualServer
	}{
		{name: "keepalive sizes the backend's own pool", set: func(_ *source.Snapshot, vs *nicv1.VirtualServer) {
			vs.Spec.Upstreams[0].Keepalive = new(16)
		}, backend: a, want: model.Balance{Method: model.RoundRobin}, pool: model.Keepalive{Set: true, Idle: 16}},
		{name: "keepalive 0 keeps no idle connection", set: func(_ *source.Snapshot, vs *nicv1.VirtualServer) {
			vs.Spec.Upstreams[0].Keepalive = new(0)
		}, backend: a, want: model.Balance{Method: model.RoundRobin}, pool: model.Keepalive{Set: true}},
		{name: "an older VirtualServer's keepalive wins", set: func(s *source.Snapshot, vs *nicv1.VirtualServer) {
			old := mkVirtualServer("older", "older.test", -10, pass("/", "a"))
			old.Spec.Upstreams[0].Keepalive = new(4)
			s.VirtualServers = append(s.VirtualServers, old)
			vs.Spec.Upstreams[0].Keepalive = new(0)
		}, backend: a, want: model.Balance{Method: model.RoundRobin}, pool: model.Keepalive{Set: true, Idle: 4}, reasons: []string{model.ReasonCollision}},
		{name: "lb-method least_conn", set: func(_ *source.Snapshot, vs *nicv1.VirtualServer) { vs.Spec.Upstreams[0].LBMethod = "least_conn" },
			backend: a, want: model.Balance{Method: model.LeastConn}},
		{name: "hash", set: func(_ *source.Snapshot, vs *nicv1.VirtualServer) {
			vs.Spec.Upstreams[0].LBMethod = "hash $remote_addr consistent"
		},
			backend: a, want: model.Balance{Method: model.CHash, HashKey: "$remote_addr"}},
		{name: "sessionCookie is the sticky method", set: func(_ *source.Snapshot, vs *nicv1.VirtualServer) {
			vs.Spec.Upstreams[0].SessionCookie = &nicv1.SessionCookie{Enable: true, Name: "srv"}
		}, backend: a, want: model.Balance{Method: model.Sticky, Sticky: &model.StickyCookie{Name: "srv"}}},
		{name: "no lb-method keeps the ConfigMap's", backend: a, want: model.Balance{Method: model.RoundRobin}},
		{name: "the Service's own annotation wins", set: func(s *source.Snapshot, vs *nicv1.VirtualServer) {
			s.Services[0].Annotations = map[string]string{AnnotationLoadBalance: "ewma"}
			vs.Spec.Upstreams[0].LBMethod = "least_conn"
		}, backend: a, want: model.Balance{Method: model.EWMA}, reasons: []string{model.ReasonUnsupported}},
		{name: "an older VirtualServer's method wins", set: func(s *source.Snapshot, vs *nicv1.VirtualServer) {
			old := mkVirtualServer("older", "older.test", -10, pass("/", "a"))
			old.Spec.Upstreams[0].LBMethod = "ip_hash"
			s.VirtualServers = append(s.VirtualServers, old)
			vs.Spec.Upstreams[0].LBMethod = "least_conn"
		}, backend: a, want: model.Balance{Method: model.CHash, HashKey: "$binary_remote_addr"}, reasons: []string{model.ReasonCollision}},
		{name: "max-fails, fail-timeout and max-conns limit the backend's endpoints", set: func(_ *source.Snapshot, vs *nicv1.VirtualServer) {
			vs.Spec.Upstreams[0].MaxFails, vs.Spec.Upstreams[0].FailTimeout, vs.Spec.Upstreams[0].MaxConns = new(2), "20s", new(50)
		}, backend: a, want: model.Balance{Method: model.RoundRobin}, limits: model.PeerLimits{MaxFails: 2, FailTimeout: 20 * time.Second, MaxConns: 50}},
		{name: "an older VirtualServer's limits win", set: func(s *source.Snapshot, vs *nicv1.VirtualServer) {
			old := mkVirtualServer("older", "older.test", -10, pass("/", "a"))
			old.Spec.Upstreams[0].MaxConns = new(5)
			s.VirtualServers = append(s.VirtualServers, old)
			vs.Spec.Upstreams[0].MaxConns = new(6)
		}, backend: a, want: model.Balance{Method: model.RoundRobin}, limits: model.PeerLimits{MaxConns: 5}, reasons: []string{model.ReasonCollision}},
		{name: "the same limits from two VirtualServers agree", set: func(s *source.Snapshot, vs *nicv1.VirtualServer) {
			old := mkVirtualServer("older", "older.test", -10, pass("/", "a"))
			old.Spec.Upstreams[0].MaxFails = new(3)
			s.VirtualServers = append(s.VirtualServers, old)
			vs.Spec.Upstreams[0].MaxFails = new(3)
		}, backend: a, want: model.Balance{Method: model.RoundRobin}, limits: model.PeerLimits{MaxFails: 3, FailTimeout: 10 * time.Second}},
		{name: "limits do not collide with another object's lb-method", set: func(s *source.Snapshot, vs *nicv1.VirtualServer) {
			old := mkVirtualServer("older", "older.test", -10, pass("/", "a"))
			old.Spec.Upstreams[0].LBMethod = "least_conn"
			s.VirtualServers = append(s.VirtualServers, old)
			vs.Spec.Upstreams[0].MaxConns = new(7)
		}, backend: a, want: model.Balance{Method: model.LeastConn}, limits: model.PeerLimits{MaxConns: 7}},
		{name: "use-cluster-ip", set: func(s *source.Snapshot, vs *nicv1.VirtualServer) {
			s.Services[0].Spec.ClusterIP = "10.96.0.10"
			vs.Spec.Upstreams[0].UseClusterIP = true
		}, backend: a + clusterIPSuffix, want: model.Balance{Method: model.RoundRobin}},
		{name: "use-cluster-ip of a headless Service keeps the endpoints", set: func(s *source.Snapshot, vs *nicv1.VirtualServer) {
			s.Services[0].Spec.ClusterIP = "None"
			vs.Spec.Upstreams[0].UseClusterIP = true
		}, backend: a, want: model.Balance{Method: model.RoundRobin}, reasons: []string{model.ReasonUnsupported}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(2)
			vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"))
			snap.VirtualServers = []*nicv1.VirtualServer{vs}
			if tc.set != nil {
				tc.set(snap, vs)
			}
			m, problems := Build(snap, testOpts)
			l := server(m, "cafe.test").Match("/")
			if l.Backend() != tc.backend {
				t.Fatalf("route proxies to %q, want %q", l.Backend(), tc.backend)
			}
			be := backendByKey(m, tc.backend)
			if be == nil {
				t.Fatalf("no backend %s", tc.backend)
			}
			if be.Balance.Method != tc.want.Method || be.Balance.HashKey != tc.want.HashKey ||
				(tc.want.Sticky == nil) != (be.Balance.Sticky == nil) || tc.want.Sticky != nil && *tc.want.Sticky != *be.Balance.Sticky {
				t.Errorf("balance %+v, want %+v", be.Balance, tc.want)
			}
			if be.Limits != tc.limits {
				t.Errorf("limits %+v, want %+v", be.Limits, tc.limits)
			}
			if be.Keepalive != tc.pool {
				t.Errorf("keepalive %+v, want %+v", be.Keepalive, tc.pool)
			}
			if tc.backend != a && (len(be.Endpoints) != 1 || be.Endpoints[0].Address != "10.96.0.10" || be.Endpoints[0].Port != 80) {
				t.Errorf("cluster-IP endpoints %+v", be.Endpoints)
			}
			got := reasonsOf(problems, "VirtualServer", "cafe")
			if len(got) != len(tc.reasons) || len(got) > 0 && got[0] != tc.reasons[0] {
				t.Errorf("problems %v, want reasons %v", problems, tc.reasons)
			}
		})
	}
}

// TestKeepaliveTotal: the backends' own pools together keep at most
// model.MaxKeepaliveTotal idle connections: with the Lua balancer a pool
// per size (two upstreams of one size share it), without it one per
// backend. The youngest ask over the total keeps the ConfigMap's pool,
// reported.
func TestKeepaliveTotal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lua   bool
		sizes []int // one VirtualServer each, oldest first, on its own Service
		kept  []bool
	}{
		{name: "pools by size", lua: true, sizes: []int{16384, 16384, 16383, 16382, 16381, 16380, 1},
			kept: []bool{true, true, true, true, true, false, true}},
		{name: "pools by backend", lua: false, sizes: []int{16384, 16384, 16384, 16384, 1, 16384},
			kept: []bool{true, true, true, true, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(len(tc.sizes))
			for i, n := range tc.sizes {
				vs := mkVirtualServer(fmt.Sprintf("vs%d", i), fmt.Sprintf("h%d.test", i), i, pass("/", "a"))
				vs.Spec.Upstreams[0].Service, vs.Spec.Upstreams[0].Keepalive = svcName(i), new(n)
				snap.VirtualServers = append(snap.VirtualServers, vs)
			}
			opts := testOpts
			opts.LuaAvailable = tc.lua
			m, problems := Build(snap, opts)
			for i, n := range tc.sizes {
				be := backendByKey(m, "default/"+svcName(i)+"/80")
				want := model.Keepalive{}
				if tc.kept[i] {
					want = model.Keepalive{Set: true, Idle: n}
				}
				if be == nil || be.Keepalive != want {
					t.Errorf("vs%d: backend %+v, want keepalive %+v", i, be, want)
				}
				reported := false
				for _, p := range problems {
					reported = reported || p.Object.Name == fmt.Sprintf("vs%d", i) && strings.Contains(p.Message, "would keep over 65536 idle connections")
				}
				if reported == tc.kept[i] {
					t.Errorf("vs%d: reported %v; problems %v", i, reported, problems)
				}
			}
		})
	}
}
