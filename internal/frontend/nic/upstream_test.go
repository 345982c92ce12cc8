package nic

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TestUpstreamFields: a row per upstream field and rule. want is the
// translated upstream (Name, Service and Port are filled in); problems are
// fragments, one per expected Problem.
func TestUpstreamFields(t *testing.T) {
	size := func(n int64) *model.Size { s := model.Size(n); return &s }
	for _, tc := range []struct {
		name     string
		set      func(*nicv1.Upstream)
		want     Upstream
		problems []string
	}{
		{name: "lb-method round_robin", set: func(u *nicv1.Upstream) { u.LBMethod = "round_robin" },
			want: Upstream{Balance: &model.Balance{Method: model.RoundRobin}}},
		{name: "lb-method least_conn", set: func(u *nicv1.Upstream) { u.LBMethod = "least_conn" },
			want: Upstream{Balance: &model.Balance{Method: model.LeastConn}}},
		{name: "random two is p2c", set: func(u *nicv1.Upstream) { u.LBMethod = "random two" },
			want: Upstream{Balance: &model.Balance{Method: model.P2C}}},
		{name: "random two least_conn is p2c", set: func(u *nicv1.Upstream) { u.LBMethod = "random two least_conn" },
			want: Upstream{Balance: &model.Balance{Method: model.P2C}}},
		{name: "ip_hash hashes the client address", set: func(u *nicv1.Upstream) { u.LBMethod = "ip_hash" },
			want: Upstream{Balance: &model.Balance{Method: model.CHash, HashKey: "$binary_remote_addr"}}},
		{name: "hash with a key", set: func(u *nicv1.Upstream) { u.LBMethod = "hash $request_uri" },
			want: Upstream{Balance: &model.Balance{Method: model.CHash, HashKey: "$request_uri"}}},
		{name: "hash consistent", set: func(u *nicv1.Upstream) { u.LBMethod = "hash $http_x_user consistent" },
			want: Upstream{Balance: &model.Balance{Method: model.CHash, HashKey: "$http_x_user"}}},
		{name: "a hash key outside the grammar is dropped", set: func(u *nicv1.Upstream) { u.LBMethod = "hash $request_uri;evil" },
			problems: []string{"lb-method"}},
		{name: "hash with a bad third word", set: func(u *nicv1.Upstream) { u.LBMethod = "hash $uri always" },
			problems: []string{"lb-method"}},
		{name: "random alone is reported", set: func(u *nicv1.Upstream) { u.LBMethod = "random" }, problems: []string{"random two"}},
		{name: "least_time needs Plus", set: func(u *nicv1.Upstream) { u.LBMethod = "least_time header" }, problems: []string{"needs NGINX Plus"}},
		{name: "an unknown method is dropped", set: func(u *nicv1.Upstream) { u.LBMethod = "fastest" }, problems: []string{"lb-method"}},
		{name: "next-upstream", set: func(u *nicv1.Upstream) { u.NextUpstream = "error timeout http_502" },
			want: Upstream{Policy: &model.Policy{Retry: model.Retry{On: []string{"error", "timeout", "http_502"}}}}},
		{name: "next-upstream off stands alone", set: func(u *nicv1.Upstream) { u.NextUpstream = "off error" }, problems: []string{"next-upstream"}},
		{name: "next-upstream unknown condition", set: func(u *nicv1.Upstream) { u.NextUpstream = "http_418" }, problems: []string{"next-upstream"}},
		{name: "next-upstream-timeout", set: func(u *nicv1.Upstream) { u.NextUpstreamTimeout = "10s" },
			want: Upstream{Policy: &model.Policy{Retry: model.Retry{Timeout: 10 * time.Second}}}},
		{name: "next-upstream-timeout 0 is no limit", set: func(u *nicv1.Upstream) { u.NextUpstreamTimeout = "0" }},
		{name: "a bad next-upstream-timeout", set: func(u *nicv1.Upstream) { u.NextUpstreamTimeout = "1x" }, problems: []string{"next-upstream-timeout"}},
		{name: "buffers and buffer-size", set: func(u *nicv1.Upstream) {
			u.Buffers = &nicv1.UpstreamBuffers{Number: 8, Size: "8k"}
			u.BufferSize = "8k"
		}, want: Upstream{Policy: &model.Policy{Buffering: model.Buffering{Buffers: 8, BufferSize: size(8 << 10)}}}},
		{name: "buffers.size alone sizes both", set: func(u *nicv1.Upstream) { u.Buffers = &nicv1.UpstreamBuffers{Number: 4, Size: "16k"} },
			want: Upstream{Policy: &model.Policy{Buffering: model.Buffering{Buffers: 4, BufferSize: size(16 << 10)}}}},
		{name: "buffers.size unlike buffer-size is reported", set: func(u *nicv1.Upstream) {
			u.Buffers = &nicv1.UpstreamBuffers{Number: 4, Size: "16k"}
			u.BufferSize = "4k"
		}, want: Upstream{Policy: &model.Policy{Buffering: model.Buffering{Buffers: 4, BufferSize: size(4 << 10)}}},
			problems: []string{"buffers.size"}},
		{name: "busy-buffers-size within the buffers", set: func(u *nicv1.Upstream) {
			u.Buffers = &nicv1.UpstreamBuffers{Number: 8, Size: "8k"}
			u.BusyBuffersSize = "56k"
		}, want: Upstream{Policy: &model.Policy{Buffering: model.Buffering{Buffers: 8, BufferSize: size(8 << 10), BusyBuffers: size(56 << 10)}}}},
		{name: "busy-buffers-size against the default buffers", set: func(u *nicv1.Upstream) { u.BusyBuffersSize = "4k" },
			want: Upstream{Policy: &model.Policy{Buffering: model.Buffering{BusyBuffers: size(4 << 10)}}}},
		{name: "busy-buffers-size beyond all buffers but one is dropped", set: func(u *nicv1.Upstream) {
			u.Buffers = &nicv1.UpstreamBuffers{Number: 2, Size: "8k"}
			u.BusyBuffersSize = "16k"
		}, want: Upstream{Policy: &model.Policy{Buffering: model.Buffering{Buffers: 2, BufferSize: size(8 << 10)}}},
			problems: []string{"busy-buffers-size \"16k\": want at most all 2 buffers but one, 8k"}},
		{name: "busy-buffers-size below the buffer size is dropped", set: func(u *nicv1.Upstream) {
			u.BufferSize = "16k"
			u.BusyBuffersSize = "8k"
		}, want: Upstream{Policy: &model.Policy{Buffering: model.Buffering{BufferSize: size(16 << 10)}}},
			problems: []string{"busy-buffers-size \"8k\": want at least the buffer size, 16k"}},
		{name: "busy-buffers-size that is no size", set: func(u *nicv1.Upstream) { u.BusyBuffersSize = "lots" },
			problems: []string{"busy-buffers-size"}},
		{name: "one buffer is too few", set: func(u *nicv1.Upstream) { u.Buffers = &nicv1.UpstreamBuffers{Number: 1, Size: "4k"} },
			want: Upstream{Policy: &model.Policy{Buffering: model.Buffering{BufferSize: size(4 << 10)}}}, problems: []string{"buffers.number"}},
		{name: "buffer-size 0 is refused", set: func(u *nicv1.Upstream) { u.BufferSize = "0" }, problems: []string{"buffer-size"}},
		{name: "client-body-buffer-size", set: func(u *nicv1.Upstream) { u.ClientBodyBufferSize = "1m" },
			want: Upstream{Policy: &model.Policy{Buffering: model.Buffering{ClientBodyBuffer: size(1 << 20)}}}},
		{name: "client-body-buffer-size over 1g", set: func(u *nicv1.Upstream) { u.ClientBodyBufferSize = "2g" }, problems: []string{"client-body-buffer-size"}},
		{name: "use-cluster-ip", set: func(u *nicv1.Upstream) { u.UseClusterIP = true }, want: Upstream{ClusterIP: true}},
		{name: "sessionCookie is cookie affinity", set: func(u *nicv1.Upstream) {
			u.SessionCookie = &nicv1.SessionCookie{Enable: true, Name: "srv_id", Path: "/app", Expires: "1h", SameSite: "strict", Secure: true}
		}, want: Upstream{Balance: &model.Balance{Method: model.Sticky,
			Sticky: &model.StickyCookie{Name: "srv_id", Path: "/app", MaxAge: 3600, SameSite: "Strict", Secure: true}}}},
		{name: "sessionCookie expires max", set: func(u *nicv1.Upstream) {
			u.SessionCookie = &nicv1.SessionCookie{Enable: true, Name: "srv_id", Expires: "max"}
		}, want: Upstream{Balance: &model.Balance{Method: model.Sticky, Sticky: &model.StickyCookie{Name: "srv_id", MaxAge: model.MaxCookieAge}}}},
		{name: "sessionCookie replaces lb-method", set: func(u *nicv1.Upstream) {
			u.LBMethod = "least_conn"
			u.SessionCookie = &nicv1.SessionCookie{Enable: true, Name: "srv_id"}
		}, want: Upstream{Balance: &model.Balance{Method: model.Sticky, Sticky: &model.StickyCookie{Name: "srv_id"}}},
			problems: []string{"lb-method: sessionCookie"}},
		{name: "sessionCookie domain and httpOnly are reported", set: func(u *nicv1.Upstream) {
			u.SessionCookie = &nicv1.SessionCookie{Enable: true, Name: "srv_id", Domain: "example.com", HTTPOnly: true}
		}, want: Upstream{Balance: &model.Balance{Method: model.Sticky, Sticky: &model.StickyCookie{Name: "srv_id"}}},
			problems: []string{"domain", "httpOnly"}},
		{name: "sessionCookie needs a name", set: func(u *nicv1.Upstream) { u.SessionCookie = &nicv1.SessionCookie{Enable: true} },
			problems: []string{"name is required"}},
		{name: "sessionCookie with a bad name", set: func(u *nicv1.Upstream) {
			u.SessionCookie = &nicv1.SessionCookie{Enable: true, Name: "a;b"}
		}, problems: []string{"sessionCookie"}},
		{name: "sessionCookie SameSite None needs secure", set: func(u *nicv1.Upstream) {
			u.SessionCookie = &nicv1.SessionCookie{Enable: true, Name: "a", SameSite: "none"}
		}, problems: []string{"requires secure"}},
		{name: "sessionCookie with a bad expiry", set: func(u *nicv1.Upstream) {
			u.SessionCookie = &nicv1.SessionCookie{Enable: true, Name: "a", Expires: "1y"}
		}, problems: []string{"expires"}},
		{name: "a disabled sessionCookie is reported", set: func(u *nicv1.Upstream) { u.SessionCookie = &nicv1.SessionCookie{Name: "a"} },
			problems: []string{"enable is false"}},
		{name: "keepalive", set: func(u *nicv1.Upstream) { u.Keepalive = ptr.To(16) },
			want: Upstream{Keepalive: &model.Keepalive{Set: true, Idle: 16}}},
		{name: "keepalive 0 keeps no idle connection", set: func(u *nicv1.Upstream) { u.Keepalive = ptr.To(0) },
			want: Upstream{Keepalive: &model.Keepalive{Set: true}}},
		{name: "keepalive 0 with TLS", set: func(u *nicv1.Upstream) { u.Keepalive, u.TLS.Enable = ptr.To(0), true },
			want: Upstream{Keepalive: &model.Keepalive{Set: true}, Policy: &model.Policy{Protocol: model.ProtocolHTTPS}}},
		{name: "keepalive of a TLS upstream is reported", set: func(u *nicv1.Upstream) { u.Keepalive, u.TLS.Enable = ptr.To(8), true },
			want:     Upstream{Policy: &model.Policy{Protocol: model.ProtocolHTTPS}},
			problems: []string{"keepalive: connections to TLS upstreams are never pooled"}},
		{name: "negative keepalive is dropped", set: func(u *nicv1.Upstream) { u.Keepalive = ptr.To(-1) },
			problems: []string{"keepalive \"-1\": want 0 to 16384"}},
		{name: "keepalive over the bound is dropped", set: func(u *nicv1.Upstream) { u.Keepalive = ptr.To(16385) },
			problems: []string{"keepalive \"16385\""}},
		{name: "backup needs NGINX Plus", set: func(u *nicv1.Upstream) { u.Backup, u.BackupPort = "tea-external", ptr.To(uint16(80)) },
			problems: []string{"backup and backupPort: needs NGINX Plus"}},
		{name: "subselector", set: func(u *nicv1.Upstream) {
			u.Subselector = map[string]string{"version": "v2", "app.kubernetes.io/tier": "web"}
		},
			want: Upstream{Subselector: map[string]string{"version": "v2", "app.kubernetes.io/tier": "web"}}},
		{name: "max-fails and fail-timeout", set: func(u *nicv1.Upstream) { u.MaxFails, u.FailTimeout = ptr.To(3), "30s" },
			want: Upstream{Limits: &model.PeerLimits{MaxFails: 3, FailTimeout: 30 * time.Second}}},
		{name: "max-fails alone takes NIC's fail-timeout", set: func(u *nicv1.Upstream) { u.MaxFails = ptr.To(2) },
			want: Upstream{Limits: &model.PeerLimits{MaxFails: 2, FailTimeout: 10 * time.Second}}},
		{name: "fail-timeout alone takes NIC's max-fails", set: func(u *nicv1.Upstream) { u.FailTimeout = "2m" },
			want: Upstream{Limits: &model.PeerLimits{MaxFails: 1, FailTimeout: 2 * time.Minute}}},
		{name: "fail-timeout below a second is dropped", set: func(u *nicv1.Upstream) { u.FailTimeout = "500ms" },
			want: Upstream{Limits: &model.PeerLimits{MaxFails: 1, FailTimeout: 10 * time.Second}}, problems: []string{"fail-timeout \"500ms\": want whole seconds"}},
		{name: "max-fails 0 turns passive checks off", set: func(u *nicv1.Upstream) { u.MaxFails, u.FailTimeout = ptr.To(0), "30s" }},
		{name: "fail-timeout 0 turns passive checks off", set: func(u *nicv1.Upstream) { u.MaxFails, u.FailTimeout = ptr.To(3), "0" }},
		{name: "max-conns", set: func(u *nicv1.Upstream) { u.MaxConns = ptr.To(100) },
			want: Upstream{Limits: &model.PeerLimits{MaxConns: 100}}},
		{name: "max-conns 0 is no bound", set: func(u *nicv1.Upstream) { u.MaxConns = ptr.To(0) }},
		{name: "all three", set: func(u *nicv1.Upstream) { u.MaxFails, u.FailTimeout, u.MaxConns = ptr.To(1), "1m", ptr.To(8) },
			want: Upstream{Limits: &model.PeerLimits{MaxFails: 1, FailTimeout: time.Minute, MaxConns: 8}}},
		{name: "negative max-fails is dropped for the default", set: func(u *nicv1.Upstream) { u.MaxFails = ptr.To(-1) },
			want: Upstream{Limits: &model.PeerLimits{MaxFails: 1, FailTimeout: 10 * time.Second}}, problems: []string{"max-fails \"-1\": want 0 to 1000"}},
		{name: "a bad fail-timeout is dropped for the default", set: func(u *nicv1.Upstream) { u.MaxFails, u.FailTimeout = ptr.To(2), "10 s" },
			want: Upstream{Limits: &model.PeerLimits{MaxFails: 2, FailTimeout: 10 * time.Second}}, problems: []string{"fail-timeout"}},
		{name: "fail-timeout over a day", set: func(u *nicv1.Upstream) { u.FailTimeout = "25h" },
			want: Upstream{Limits: &model.PeerLimits{MaxFails: 1, FailTimeout: 10 * time.Second}}, problems: []string{"fail-timeout"}},
		{name: "negative max-conns is dropped", set: func(u *nicv1.Upstream) { u.MaxConns = ptr.To(-5) }, problems: []string{"max-conns"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSpec()
			tc.set(&s.Upstreams[0])
			out, problems, err := TranslateVirtualServer(vs(s), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := *out.Upstreams["tea"]
			tc.want.Name, tc.want.Service, tc.want.Port = "tea", "tea-svc", 80
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("upstream %+v (policy %+v, balance %+v), want %+v", got, got.Policy, got.Balance, tc.want)
			}
			if len(problems) != len(tc.problems) {
				t.Fatalf("problems %v, want %d", problems, len(tc.problems))
			}
			for _, want := range tc.problems {
				found := false
				for _, p := range problems {
					found = found || strings.Contains(p.Message, want)
				}
				if !found {
					t.Errorf("problems %v: none with %q", problems, want)
				}
			}
		})
	}
}
