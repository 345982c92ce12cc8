package nic

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

func tsSpec() nicv1.TransportServerSpec {
	return nicv1.TransportServerSpec{
		Listener:  nicv1.TransportServerListener{Name: "dns-tcp", Protocol: "TCP"},
		Upstreams: []nicv1.TransportServerUpstream{{Name: "dns", Service: "coredns", Port: 5353}},
		Action:    &nicv1.TransportServerAction{Pass: "dns"},
	}
}

// passthrough moves a spec to the tls-passthrough listener for host.
func passthrough(host string) func(*nicv1.TransportServerSpec) {
	return func(s *nicv1.TransportServerSpec) {
		s.Listener = nicv1.TransportServerListener{Name: "tls-passthrough", Protocol: "TLS_PASSTHROUGH"}
		s.Host = host
	}
}

// TestTranslateTransportServer: a row per rule. err is a fragment of the
// rejection; problems are fragments, one per expected Problem.
func TestTranslateTransportServer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		change   func(*nicv1.TransportServerSpec)
		err      string
		problems []string
		check    func(*testing.T, *TransportServer)
	}{
		{name: "NIC's defaults are explicit", check: func(t *testing.T, ts *TransportServer) {
			u := ts.Upstream
			if ts.Listener != "dns-tcp" || ts.Protocol != model.StreamTCP || u.Service != "coredns" || u.Port != 5353 {
				t.Errorf("%+v", ts)
			}
			want := model.StreamUpstream{Balance: model.StreamBalance{Method: model.StreamRoundRobin}, MaxFails: 1, FailTimeout: 10 * time.Second}
			if u.Settings != want {
				t.Errorf("upstream settings %+v, want %+v", u.Settings, want)
			}
			if p := ts.Proxy; p.ConnectTimeout != time.Minute || p.Timeout != 10*time.Minute || p.NextUpstream {
				t.Errorf("proxy %+v", p)
			}
		}},
		{name: "the listener is required", change: func(s *nicv1.TransportServerSpec) { s.Listener = nicv1.TransportServerListener{} }, err: "spec.listener.name and spec.listener.protocol are required"},
		{name: "the listener protocol is TCP or UDP", change: func(s *nicv1.TransportServerSpec) { s.Listener.Protocol = "HTTP" }, err: "want TCP, UDP or TLS_PASSTHROUGH"},
		{name: "the listener name is a DNS label", change: func(s *nicv1.TransportServerSpec) { s.Listener.Name = "Dns" }, err: "spec.listener.name"},
		{name: "tls-passthrough with a host", change: passthrough("app.example.com"), check: func(t *testing.T, ts *TransportServer) {
			if !ts.Passthrough || ts.Host != "app.example.com" || ts.Listener != "tls-passthrough" || ts.Protocol != model.StreamTCP || ts.Upstream.Service != "coredns" {
				t.Errorf("%+v", ts)
			}
		}},
		{name: "tls-passthrough with a wildcard host (NIC allows it)", change: passthrough("*.example.com"), check: func(t *testing.T, ts *TransportServer) {
			if !ts.Passthrough || ts.Host != "*.example.com" {
				t.Errorf("%+v", ts)
			}
		}},
		{name: "tls-passthrough needs a host", change: passthrough(""), err: "spec.host is required"},
		{name: "tls-passthrough host is a lower-case DNS name", change: passthrough("App.example.com"), err: "spec.host"},
		{name: "tls-passthrough host is not an IP address", change: passthrough("10.0.0.1"), err: "spec.host"},
		{name: "tls-passthrough host cannot inject", change: passthrough("a.com;}"), err: "spec.host"},
		{name: "the tls-passthrough listener's protocol is TLS_PASSTHROUGH", change: func(s *nicv1.TransportServerSpec) {
			passthrough("app.example.com")(s)
			s.Listener.Protocol = "TCP"
		}, err: "must be TLS_PASSTHROUGH"},
		{name: "TLS_PASSTHROUGH is the tls-passthrough listener's only", change: func(s *nicv1.TransportServerSpec) {
			passthrough("app.example.com")(s)
			s.Listener.Name = "mine"
		}, err: "must be tls-passthrough"},
		{name: "tls-passthrough does not terminate TLS", change: func(s *nicv1.TransportServerSpec) {
			passthrough("app.example.com")(s)
			s.TLS = &nicv1.TransportServerTLS{Secret: "app-tls"}
		}, err: "does not terminate TLS"},
		{name: "tls-passthrough has no UDP parameters", change: func(s *nicv1.TransportServerSpec) {
			passthrough("app.example.com")(s)
			s.UpstreamParameters = &nicv1.UpstreamParameters{UDPRequests: ptr.To(1)}
		}, err: "only allowed on a UDP listener"},
		{name: "a host on a TCP listener is not supported yet", change: func(s *nicv1.TransportServerSpec) { s.Host = "db.example.com" }, err: "spec.host"},
		{name: "TLS termination on a TCP listener", change: func(s *nicv1.TransportServerSpec) {
			s.TLS = &nicv1.TransportServerTLS{Secret: "db-tls"}
		}, check: func(t *testing.T, ts *TransportServer) {
			if ts.TLSSecret != "db-tls" {
				t.Errorf("TLS secret %q", ts.TLSSecret)
			}
		}},
		{name: "TLS on a UDP listener is refused", change: func(s *nicv1.TransportServerSpec) {
			s.Listener.Protocol = "UDP"
			s.TLS = &nicv1.TransportServerTLS{Secret: "db-tls"}
		}, err: "TCP listeners only"},
		{name: "a TLS secret name with nginx syntax is refused", change: func(s *nicv1.TransportServerSpec) {
			s.TLS = &nicv1.TransportServerTLS{Secret: "x;y"}
		}, err: "spec.tls.secret"},
		{name: "snippets are refused", change: func(s *nicv1.TransportServerSpec) { s.ServerSnippets = "deny all;" }, problems: []string{"raw nginx configuration is refused"}},
		{name: "action is required", change: func(s *nicv1.TransportServerSpec) { s.Action = nil }, err: "spec.action.pass is required"},
		{name: "action.pass names a defined upstream", change: func(s *nicv1.TransportServerSpec) { s.Action.Pass = "other" }, err: `spec.action.pass "other" names no upstream`},
		{name: "upstream names are unique", change: func(s *nicv1.TransportServerSpec) {
			s.Upstreams = append(s.Upstreams, nicv1.TransportServerUpstream{Name: "dns", Service: "other", Port: 53})
		}, err: `name "dns" is used by another upstream`},
		{name: "an upstream name is a DNS-1035 label", change: func(s *nicv1.TransportServerSpec) { s.Upstreams[0].Name = "1dns" }, err: "spec.upstreams[0].name"},
		{name: "a service name is a DNS-1035 label", change: func(s *nicv1.TransportServerSpec) { s.Upstreams[0].Service = "a;b" }, err: "spec.upstreams[0].service"},
		{name: "the port is 1 to 65535", change: func(s *nicv1.TransportServerSpec) { s.Upstreams[0].Port = 70000 }, err: "want 1 to 65535"},
		{name: "maxFails is not negative", change: func(s *nicv1.TransportServerSpec) { s.Upstreams[0].MaxFails = ptr.To(-1) }, err: "maxFails -1"},
		{name: "maxConns is not negative", change: func(s *nicv1.TransportServerSpec) { s.Upstreams[0].MaxConns = ptr.To(-1) }, err: "maxConns -1"},
		{name: "failTimeout is a time", change: func(s *nicv1.TransportServerSpec) { s.Upstreams[0].FailTimeout = "10 s" }, err: "failTimeout"},
		{name: "upstream settings", change: func(s *nicv1.TransportServerSpec) {
			u := &s.Upstreams[0]
			u.MaxFails, u.MaxConns, u.FailTimeout, u.LoadBalancingMethod = ptr.To(0), ptr.To(100), "30s", "least_conn"
		}, check: func(t *testing.T, ts *TransportServer) {
			want := model.StreamUpstream{Balance: model.StreamBalance{Method: model.StreamLeastConn}, MaxFails: 0, FailTimeout: 30 * time.Second, MaxConns: 100}
			if ts.Upstream.Settings != want {
				t.Errorf("%+v", ts.Upstream.Settings)
			}
		}},
		{name: "hash on the client address, consistent", change: func(s *nicv1.TransportServerSpec) {
			s.Upstreams[0].LoadBalancingMethod = "hash $remote_addr consistent"
		}, check: func(t *testing.T, ts *TransportServer) {
			if b := ts.Upstream.Settings.Balance; b != (model.StreamBalance{Method: model.StreamHash, HashKey: "$remote_addr", Consistent: true}) {
				t.Errorf("%+v", b)
			}
		}},
		{name: "random two least_conn", change: func(s *nicv1.TransportServerSpec) { s.Upstreams[0].LoadBalancingMethod = "random two least_conn" }},
		{name: "a hash key with another variable is refused", change: func(s *nicv1.TransportServerSpec) {
			s.Upstreams[0].LoadBalancingMethod = "hash $request_uri"
		}, err: "hash key"},
		{name: "a hash key cannot inject", change: func(s *nicv1.TransportServerSpec) {
			s.Upstreams[0].LoadBalancingMethod = `hash a;}`
		}, err: "hash key"},
		{name: "an unknown method is invalid", change: func(s *nicv1.TransportServerSpec) { s.Upstreams[0].LoadBalancingMethod = "ip_hash" }, err: "loadBalancingMethod"},
		{name: "NGINX Plus methods fall back to round_robin", change: func(s *nicv1.TransportServerSpec) {
			s.Upstreams[0].LoadBalancingMethod = "least_time connect"
		}, problems: []string{"needs NGINX Plus"}},
		{name: "healthCheck needs NGINX Plus", change: func(s *nicv1.TransportServerSpec) {
			s.Upstreams[0].HealthCheck = &nicv1.TransportServerHealthCheck{Enable: true}
		}, problems: []string{"healthCheck: needs NGINX Plus"}},
		{name: "backup needs NGINX Plus", change: func(s *nicv1.TransportServerSpec) { s.Upstreams[0].Backup = "fallback" }, problems: []string{"backup and backupPort: needs NGINX Plus"}},
		{name: "upstream and session parameters", change: func(s *nicv1.TransportServerSpec) {
			s.UpstreamParameters = &nicv1.UpstreamParameters{ConnectTimeout: "5s", NextUpstream: true, NextUpstreamTimeout: "0", NextUpstreamTries: 3}
			s.SessionParameters = &nicv1.SessionParameters{Timeout: "2m"}
		}, check: func(t *testing.T, ts *TransportServer) {
			want := model.StreamProxy{ConnectTimeout: 5 * time.Second, Timeout: 2 * time.Minute, NextUpstream: true, NextUpstreamTries: 3}
			if ts.Proxy != want {
				t.Errorf("%+v", ts.Proxy)
			}
		}},
		{name: "connectTimeout is more than 0", change: func(s *nicv1.TransportServerSpec) {
			s.UpstreamParameters = &nicv1.UpstreamParameters{ConnectTimeout: "0s"}
		}, err: "connectTimeout"},
		{name: "session timeout is a time", change: func(s *nicv1.TransportServerSpec) {
			s.SessionParameters = &nicv1.SessionParameters{Timeout: "1d"}
		}, err: "sessionParameters.timeout"},
		{name: "nextUpstreamTries is not negative", change: func(s *nicv1.TransportServerSpec) {
			s.UpstreamParameters = &nicv1.UpstreamParameters{NextUpstreamTries: -1}
		}, err: "nextUpstreamTries"},
		{name: "udpRequests only on UDP", change: func(s *nicv1.TransportServerSpec) {
			s.UpstreamParameters = &nicv1.UpstreamParameters{UDPRequests: ptr.To(1)}
		}, err: "only allowed on a UDP listener"},
		{name: "udpRequests and udpResponses on UDP", change: func(s *nicv1.TransportServerSpec) {
			s.Listener.Protocol = "UDP"
			s.UpstreamParameters = &nicv1.UpstreamParameters{UDPRequests: ptr.To(1), UDPResponses: ptr.To(2)}
		}, check: func(t *testing.T, ts *TransportServer) {
			if p := ts.Proxy; ts.Protocol != model.StreamUDP || p.UDPRequests == nil || *p.UDPRequests != 1 || p.UDPResponses == nil || *p.UDPResponses != 2 {
				t.Errorf("%+v", p)
			}
		}},
		{name: "udpResponses is not negative", change: func(s *nicv1.TransportServerSpec) {
			s.Listener.Protocol = "UDP"
			s.UpstreamParameters = &nicv1.UpstreamParameters{UDPResponses: ptr.To(-2)}
		}, err: "udpResponses -2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tsSpec()
			if tc.change != nil {
				tc.change(&spec)
			}
			ts := &nicv1.TransportServer{ObjectMeta: metav1.ObjectMeta{Namespace: "net", Name: "dns", UID: "u1"}, Spec: spec}
			out, problems, err := TranslateTransportServer(ts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != len(tc.problems) {
				t.Fatalf("problems %v, want %d", problems, len(tc.problems))
			}
			for i, p := range problems {
				if !strings.Contains(p.Message, tc.problems[i]) || p.Object.Kind != "TransportServer" {
					t.Errorf("problem %v, want %q", p, tc.problems[i])
				}
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}
