package build

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

var streamOpts = func() Options {
	o := testOpts
	o.GlobalConfiguration, o.StreamAvailable, o.HTTPPort, o.HTTPSPort = "causeway/gc", true, 80, 443
	return o
}()

func mkGlobalConfiguration(listeners ...nicv1.Listener) *nicv1.GlobalConfiguration {
	return &nicv1.GlobalConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "gc", UID: "uid-gc"},
		Spec: nicv1.GlobalConfigurationSpec{Listeners: listeners}}
}

func mkTransportServer(name string, age int, listener, proto, svc string) *nicv1.TransportServer {
	return &nicv1.TransportServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(age) * time.Second))},
		Spec: nicv1.TransportServerSpec{Listener: nicv1.TransportServerListener{Name: listener, Protocol: proto},
			Upstreams: []nicv1.TransportServerUpstream{{Name: "u", Service: svc, Port: 80}},
			Action:    &nicv1.TransportServerAction{Pass: "u"}},
	}
}

// streamWorld is world(2) plus a UDP Service "dns" (port 53, endpoint
// 10.0.1.1:5353) and a GlobalConfiguration with a TCP and a UDP listener.
func streamWorld() *source.Snapshot {
	s := world(2)
	svc := service("default", "dns", 53, "dns")
	svc.Spec.Ports[0].Protocol = corev1.ProtocolUDP
	es := slice("default", "dns", "dns", 5353, ep{addr: "10.0.1.1"})
	es.Ports[0].Protocol = ptr.To(corev1.ProtocolUDP)
	s.Services = append(s.Services, svc)
	s.EndpointSlices = append(s.EndpointSlices, es)
	s.GlobalConfigurations = []*nicv1.GlobalConfiguration{mkGlobalConfiguration(
		nicv1.Listener{Name: "tcp", Port: 5000, Protocol: "TCP"},
		nicv1.Listener{Name: "udp", Port: 5000, Protocol: "UDP"})}
	return s
}

func messagesOf(ps []model.Problem, kind string) string {
	var out []string
	for _, p := range ps {
		if p.Object.Kind == kind {
			out = append(out, p.Reason+": "+p.Message)
		}
	}
	return strings.Join(out, "\n")
}

func TestTransportServers(t *testing.T) {
	snap := streamWorld()
	snap.TransportServers = []*nicv1.TransportServer{
		mkTransportServer("late", 20, "tcp", "TCP", svcName(1)),
		mkTransportServer("first", 10, "tcp", "TCP", svcName(0)),
		mkTransportServer("dns", 10, "udp", "UDP", "dns"),
	}
	snap.TransportServers[2].Spec.Upstreams[0].Port = 53
	m, problems := Build(snap, streamOpts)
	if len(m.Streams) != 2 {
		t.Fatalf("streams %+v", m.Streams)
	}
	tcp, udp := m.Streams[0], m.Streams[1]
	if tcp.Listener != "tcp" || tcp.Port != 5000 || tcp.Protocol != model.StreamTCP || tcp.Source.Name != "first" ||
		tcp.Backend != "default/svc-a/80" || !slices.Equal(tcp.Endpoints, []model.Endpoint{{Address: "10.0.0.1", Port: 8080}}) {
		t.Errorf("tcp %+v", tcp)
	}
	if udp.Listener != "udp" || udp.Protocol != model.StreamUDP || !slices.Equal(udp.Endpoints, []model.Endpoint{{Address: "10.0.1.1", Port: 5353}}) {
		t.Errorf("udp %+v", udp)
	}
	if got := reasonsOf(problems, "TransportServer", "late"); !slices.Equal(got, []string{model.ReasonCollision}) {
		t.Errorf("late: %v", got)
	}
	if msg := messagesOf(problems, "TransportServer"); !strings.Contains(msg, `listener "tcp" belongs to TransportServer default/first, which is older`) {
		t.Errorf("messages: %s", msg)
	}
	// Stream backends are not HTTP backends: nothing is pushed to Lua.
	if len(m.Backends) != 0 {
		t.Errorf("backends %+v", m.Backends)
	}
}

func TestTransportServerProblems(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   func(*Options)
		snap   func(*source.Snapshot)
		ts     *nicv1.TransportServer
		reason string
		msg    string
		served bool
	}{
		{name: "no --global-configuration", opts: func(o *Options) { o.GlobalConfiguration = "" }, ts: mkTransportServer("a", 0, "tcp", "TCP", svcName(0)),
			reason: model.ReasonInvalid, msg: "no GlobalConfiguration is configured"},
		{name: "the GlobalConfiguration is missing", snap: func(s *source.Snapshot) { s.GlobalConfigurations = nil }, ts: mkTransportServer("a", 0, "tcp", "TCP", svcName(0)),
			reason: model.ReasonInvalid, msg: "does not exist"},
		{name: "no stream module", opts: func(o *Options) { o.StreamAvailable = false }, ts: mkTransportServer("a", 0, "tcp", "TCP", svcName(0)),
			reason: model.ReasonUnsupported, msg: "no stream module"},
		{name: "an unknown listener", ts: mkTransportServer("a", 0, "nope", "TCP", svcName(0)), reason: model.ReasonInvalid, msg: `listener "nope" is not`},
		{name: "the protocol must match the listener's", ts: mkTransportServer("a", 0, "udp", "TCP", svcName(0)), reason: model.ReasonInvalid, msg: "is UDP, not TCP"},
		{name: "a missing Service keeps the listener", ts: mkTransportServer("a", 0, "tcp", "TCP", "gone"), reason: model.ReasonMissingService, msg: "connections to listener \"tcp\" are closed", served: true},
		{name: "a TCP TransportServer needs a TCP port", ts: func() *nicv1.TransportServer {
			ts := mkTransportServer("a", 0, "tcp", "TCP", "dns")
			ts.Spec.Upstreams[0].Port = 53
			return ts
		}(), reason: model.ReasonMissingService, msg: "not TCP", served: true},
		{name: "another class is not ours", ts: func() *nicv1.TransportServer {
			ts := mkTransportServer("a", 0, "tcp", "TCP", svcName(0))
			ts.Spec.IngressClass = "other"
			return ts
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap, opts := streamWorld(), streamOpts
			if tc.opts != nil {
				tc.opts(&opts)
			}
			if tc.snap != nil {
				tc.snap(snap)
			}
			snap.TransportServers = []*nicv1.TransportServer{tc.ts}
			m, problems := Build(snap, opts)
			if served := len(m.Streams) == 1; served != tc.served {
				t.Errorf("served = %v, want %v", served, tc.served)
			}
			if tc.served && (m.Streams[0].Backend != "" || len(m.Streams[0].Endpoints) != 0) {
				t.Errorf("stream %+v", m.Streams[0])
			}
			got := reasonsOf(problems, "TransportServer", "a")
			if tc.reason == "" {
				if len(got) != 0 {
					t.Errorf("problems %v", got)
				}
				return
			}
			if !slices.Equal(got, []string{tc.reason}) || !strings.Contains(messagesOf(problems, "TransportServer"), tc.msg) {
				t.Errorf("problems %s, want %s containing %q", messagesOf(problems, "TransportServer"), tc.reason, tc.msg)
			}
		})
	}
}

func TestGlobalConfigurationListeners(t *testing.T) {
	snap := streamWorld()
	snap.GlobalConfigurations = []*nicv1.GlobalConfiguration{mkGlobalConfiguration(
		nicv1.Listener{Name: "ok", Port: 5000, Protocol: "TCP"},
		nicv1.Listener{Name: "ok", Port: 5001, Protocol: "TCP"},
		nicv1.Listener{Name: "same-port", Port: 5000, Protocol: "TCP"},
		nicv1.Listener{Name: "udp-too", Port: 5000, Protocol: "UDP"},
		nicv1.Listener{Name: "http", Port: 8080, Protocol: "HTTP"},
		nicv1.Listener{Name: "sctp", Port: 5002, Protocol: "SCTP"},
		nicv1.Listener{Name: "zero", Port: 0, Protocol: "TCP"},
		nicv1.Listener{Name: "on-https", Port: 443, Protocol: "TCP"},
		nicv1.Listener{Name: "tls", Port: 5003, Protocol: "TCP", Ssl: true},
		nicv1.Listener{Name: "Bad", Port: 5004, Protocol: "TCP"},
		nicv1.Listener{Name: "pinned", Port: 5005, Protocol: "TCP", IPv4: "10.0.0.1"},
		nicv1.Listener{Name: "http-on-tcp", Port: 5000, Protocol: "HTTP"},
		nicv1.Listener{Name: "http-on-http", Port: 80, Protocol: "HTTP"},
		nicv1.Listener{Name: "http-same", Port: 8080, Protocol: "HTTP", Ssl: true},
		nicv1.Listener{Name: "https", Port: 8443, Protocol: "HTTP", Ssl: true, IPv4: "127.0.0.5", IPv6: "::1"},
		nicv1.Listener{Name: "v6-in-v4", Port: 8444, Protocol: "HTTP", IPv4: "::1"},
		nicv1.Listener{Name: "zoned", Port: 8445, Protocol: "HTTP", IPv6: "fe80::1%eth0"},
		nicv1.Listener{Name: "mapped", Port: 8446, Protocol: "HTTP", IPv6: "::ffff:127.0.0.1"},
		nicv1.Listener{Name: "multicast", Port: 8447, Protocol: "HTTP", IPv4: "224.0.0.1"},
		nicv1.Listener{Name: "zeros", Port: 8448, Protocol: "HTTP", IPv4: "127.000.0.1"},
		nicv1.Listener{Name: "udp-beside-http", Port: 8080, Protocol: "UDP"},
		nicv1.Listener{Name: "pinned-udp", Port: 5006, Protocol: "UDP", IPv4: "127.0.0.6", IPv6: "::1"},
		nicv1.Listener{Name: "tcp-v6-in-v4", Port: 5007, Protocol: "TCP", IPv4: "::1"},
		nicv1.Listener{Name: "udp-zoned", Port: 5008, Protocol: "UDP", IPv6: "fe80::1%eth0"},
		nicv1.Listener{Name: "tcp-mapped", Port: 5009, Protocol: "TCP", IPv6: "::ffff:127.0.0.1"},
		nicv1.Listener{Name: "udp-multicast", Port: 5010, Protocol: "UDP", IPv4: "239.1.1.1"},
	)}
	b := &builder{opts: streamOpts}
	got, http, why := b.globalListeners(snap)
	if why != "" {
		t.Fatal(why)
	}
	var names []string
	for n := range got {
		names = append(names, n)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"ok", "pinned", "pinned-udp", "udp-beside-http", "udp-too"}) {
		t.Errorf("listeners %v", names)
	}
	// TCP and UDP listeners bind their ipv4 and ipv6, checked as HTTP
	// listeners' are.
	if p, u := got["pinned"], got["pinned-udp"]; p.ipv4.String() != "10.0.0.1" || p.ipv6.IsValid() ||
		u.ipv4.String() != "127.0.0.6" || u.ipv6.String() != "::1" || got["ok"].ipv4.IsValid() || got["ok"].ipv6.IsValid() {
		t.Errorf("stream listener addresses: pinned %v %v, pinned-udp %v %v, ok %v %v", p.ipv4, p.ipv6, u.ipv4, u.ipv6, got["ok"].ipv4, got["ok"].ipv6)
	}
	if len(http) != 2 || http["http"] == nil || http["http"].Port != 8080 || http["http"].SSL || http["http"].IPv4.IsValid() ||
		http["https"] == nil || !http["https"].SSL || http["https"].IPv4.String() != "127.0.0.5" || http["https"].IPv6.String() != "::1" {
		t.Errorf("HTTP listeners %v", http)
	}
	msgs := messagesOf(b.problems, "GlobalConfiguration")
	for _, want := range []string{
		"spec.listeners[1] (ok): the name is used by another listener",
		`spec.listeners[2] (same-port): port 5000 TCP is used by listener "ok"`,
		`protocol "SCTP": want HTTP, TCP or UDP`,
		`(http-on-tcp): port 5000 HTTP is used by listener "ok"`,
		"(http-on-http): port 80 is the controller's HTTP port",
		`(http-same): port 8080 HTTP is used by listener "http"`,
		`(v6-in-v4): ipv4 "::1": not a unicast address of that family`,
		`(zoned): ipv6 "fe80::1%eth0"`,
		`(mapped): ipv6 "::ffff:127.0.0.1"`,
		`(multicast): ipv4 "224.0.0.1"`,
		`(zeros): ipv4 "127.000.0.1"`,
		"port 0: want 1 to 65535",
		"port 443 is the controller's HTTPS port",
		"ssl is not supported by Causeway yet",
		"spec.listeners[9] (Bad): name",
		`(tcp-v6-in-v4): ipv4 "::1": not a unicast address of that family; the listener is left out`,
		`(udp-zoned): ipv6 "fe80::1%eth0"`,
		`(tcp-mapped): ipv6 "::ffff:127.0.0.1"`,
		`(udp-multicast): ipv4 "239.1.1.1": not a unicast address of that family`,
	} {
		if !strings.Contains(msgs, want) {
			t.Errorf("no problem %q in:\n%s", want, msgs)
		}
	}
	if strings.Contains(msgs, "not supported by Causeway yet; the listener is bound") {
		t.Errorf("ipv4 and ipv6 still reported as unsupported:\n%s", msgs)
	}
}

// TestStreamUDPPortOfSameNumber: a Service with a TCP and a UDP port of
// the same number gives each TransportServer the right one.
func TestStreamUDPPortOfSameNumber(t *testing.T) {
	snap := streamWorld()
	svc := snap.Services[2]
	svc.Spec.Ports = []corev1.ServicePort{{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}
	snap.EndpointSlices = append(snap.EndpointSlices, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: "dns-tcp", Labels: map[string]string{discoveryv1.LabelServiceName: "dns"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("dns-tcp"), Port: ptr.To(int32(5454)), Protocol: ptr.To(corev1.ProtocolTCP)}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.1.1"}}},
	})
	tcp, udp := mkTransportServer("t", 0, "tcp", "TCP", "dns"), mkTransportServer("u", 0, "udp", "UDP", "dns")
	tcp.Spec.Upstreams[0].Port, udp.Spec.Upstreams[0].Port = 53, 53
	snap.TransportServers = []*nicv1.TransportServer{tcp, udp}
	m, problems := Build(snap, streamOpts)
	if len(m.Streams) != 2 || m.Streams[0].Endpoints[0].Port != 5454 || m.Streams[1].Endpoints[0].Port != 5353 {
		t.Fatalf("streams %+v %+v; problems %v", m.Streams[0], m.Streams[1], problems)
	}
}

// TestTransportServerTLS: a TCP listener terminates TLS with the
// TransportServer's Secret, which then reaches the model's Secrets; with
// a missing Secret the listener closes connections instead of serving
// them in the clear or with the default certificate.
func TestTransportServerTLS(t *testing.T) {
	crt, key := selfSigned(t, "db.test")
	for _, tc := range []struct {
		name   string
		secret bool
		want   string // stream TLS secret, "" for none (closed)
		reason string
	}{
		{"with its Secret", true, "default/db-tls", ""},
		{"without it", false, "", model.ReasonMissingSecret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := streamWorld()
			ts := mkTransportServer("db", 0, "tcp", "TCP", svcName(0))
			ts.Spec.TLS = &nicv1.TransportServerTLS{Secret: "db-tls"}
			snap.TransportServers = []*nicv1.TransportServer{ts}
			if tc.secret {
				snap.Secrets = append(snap.Secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db-tls"},
					Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}})
			}
			m, problems := Build(snap, streamOpts)
			if len(m.Streams) != 1 {
				t.Fatalf("streams %+v", m.Streams)
			}
			s := m.Streams[0]
			switch {
			case tc.want != "" && (s.TLS == nil || s.TLS.Secret != tc.want || len(m.Secrets) != 1 || m.Secrets[0].Key() != tc.want):
				t.Errorf("stream TLS %+v, secrets %v", s.TLS, m.Secrets)
			case tc.want == "" && (s.TLS != nil || len(s.Endpoints) != 0 || s.Backend != ""):
				t.Errorf("stream %+v, want closed", s)
			}
			if got := reasonsOf(problems, "TransportServer", "db"); tc.reason != "" && !slices.Equal(got, []string{tc.reason}) || tc.reason == "" && len(got) != 0 {
				t.Errorf("reasons %v (%v), want %q", got, problems, tc.reason)
			}
		})
	}
}
