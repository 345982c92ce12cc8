package build

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// TestSharedPoolsBound: on the plain data plane each backend's upstream
// keeps the ConfigMap's pool, and those pools together (with the backends'
// own) hold at most model.MaxKeepaliveTotal idle connections: over that,
// each shrinks to its share (at least one), reported on the ConfigMap. The
// Lua data plane has one pool and is left alone; backends without
// endpoints have no upstream and do not count.
func TestSharedPoolsBound(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lua       bool
		config    string // upstream-keepalive-connections; "" for the default (320)
		backends  int    // with an endpoint each
		empty     int    // more backends without endpoints
		own       []int  // VirtualServer upstreams with their own keepalive, on more Services
		want      int
		reported  bool
		noConfMap bool
	}{
		{name: "lua: one shared pool", lua: true, backends: 1000, want: 320},
		{name: "plain: within the total", backends: 204, want: 320},
		{name: "plain: just over", backends: 205, want: 319, reported: true},
		{name: "plain: ten thousand backends", backends: 10000, want: 6, reported: true},
		{name: "plain: empty backends do not count", backends: 204, empty: 50, want: 320},
		{name: "plain: own pools leave less", backends: 100, own: []int{16384, 16384, 16384}, want: 163, reported: true},
		{name: "plain: own pools leave nothing: one each", backends: 3, own: []int{16384, 16384, 16384, 16384}, want: 1, reported: true},
		{name: "plain: pool off", config: "0", backends: 10000, want: 0},
		{name: "plain: a larger pool", config: "1000", backends: 66, want: 992, reported: true},
		{name: "plain: no ConfigMap", noConfMap: true, backends: 10000, want: 6, reported: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := &source.Snapshot{}
			var paths []networkingv1.HTTPIngressPath
			for i := range tc.backends + tc.empty + len(tc.own) {
				name := fmt.Sprintf("s%d", i)
				snap.Services = append(snap.Services, service("default", name, 80, "http"))
				if i < tc.backends || i >= tc.backends+tc.empty {
					snap.EndpointSlices = append(snap.EndpointSlices, slice("default", name, "http", 8080,
						ep{addr: fmt.Sprintf("10.1.%d.%d", i/250, 1+i%250)}))
				}
				if i < tc.backends+tc.empty {
					paths = append(paths, path(fmt.Sprintf("/p%d", i), "Prefix", name, 80))
				}
			}
			snap.Ingresses = append(snap.Ingresses, mkIngress("default", "many", 0, rule("many.test", paths...)))
			for j, n := range tc.own {
				i := tc.backends + tc.empty + j
				vs := mkVirtualServer(fmt.Sprintf("vs%d", j), fmt.Sprintf("own%d.test", j), 1+j, pass("/", "a"))
				vs.Spec.Upstreams[0].Service, vs.Spec.Upstreams[0].Keepalive = fmt.Sprintf("s%d", i), new(n)
				snap.VirtualServers = append(snap.VirtualServers, vs)
			}
			if !tc.noConfMap {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"}, Data: map[string]string{}}
				if tc.config != "" {
					cm.Data["upstream-keepalive-connections"] = tc.config
				}
				snap.ConfigMaps = append(snap.ConfigMaps, cm)
			}
			opts := testOpts
			opts.LuaAvailable = tc.lua
			m, problems := Build(snap, opts)
			if m.Config.UpstreamKeepalive != tc.want {
				t.Errorf("ConfigMap pool per upstream %d, want %d", m.Config.UpstreamKeepalive, tc.want)
			}
			reported := false
			for _, p := range problems {
				if strings.Contains(p.Message, `"upstream-keepalive-connections"`) {
					reported = true
					// The same message at any count: one Event, not one per
					// backend that gains or loses endpoints.
					per := cmp.Or(tc.config, "320")
					for _, n := range regexp.MustCompile(`\d+`).FindAllString(p.Message, -1) {
						if n != per && n != strconv.Itoa(model.MaxKeepaliveTotal) && n != "1" {
							t.Errorf("message names a count (%s): %s", n, p.Message)
						}
					}
					if p.Object.Kind != "ConfigMap" || p.Object.Namespace != "causeway" || p.Object.Name != "config" {
						t.Errorf("problem on %v, want the ConfigMap causeway/config", p.Object)
					}
				}
			}
			if reported != tc.reported {
				t.Errorf("reported %v, want %v; problems %v", reported, tc.reported, problems)
			}
			for j, n := range tc.own {
				if be := backendByKey(m, fmt.Sprintf("default/s%d/80", tc.backends+tc.empty+j)); be == nil || be.Keepalive != (model.Keepalive{Set: true, Idle: n}) {
					t.Errorf("own pool %d: backend %+v", j, be)
				}
			}
		})
	}
}
