package build

import (
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestServicesConfigMaps: ingress-nginx's tcp-services and udp-services
// entries, a row per rule.
func TestServicesConfigMaps(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tcp     map[string]string
		udp     map[string]string
		want    []string // "listener port protocol backend accept send"
		problem string   // a fragment of the one Problem, on the ConfigMap
	}{
		{name: "a TCP service", tcp: map[string]string{"9000": "default/svc-a:80"},
			want: []string{"9000-tcp 9000 TCP default/svc-a/80 false false"}},
		{name: "a named Service port", tcp: map[string]string{"9000": "default/svc-a:http"},
			want: []string{"9000-tcp 9000 TCP default/svc-a/http false false"}},
		{name: "PROXY from clients, to the upstream, both", tcp: map[string]string{
			"9001": "default/svc-a:80:PROXY", "9002": "default/svc-a:80::PROXY", "9003": "default/svc-a:80:PROXY:PROXY"},
			want: []string{"9001-tcp 9001 TCP default/svc-a/80 true false", "9002-tcp 9002 TCP default/svc-a/80 false true",
				"9003-tcp 9003 TCP default/svc-a/80 true true"}},
		{name: "a UDP service beside a TCP one on the same port", tcp: map[string]string{"5353": "default/svc-a:80"},
			udp:  map[string]string{"5353": "default/dns:53"},
			want: []string{"5353-tcp 5353 TCP default/svc-a/80 false false", "5353-udp 5353 UDP default/dns/53 false false"}},
		{name: "the PROXY protocol is for TCP", udp: map[string]string{"53": "default/dns:53:PROXY"}, problem: "the PROXY protocol is for TCP"},
		{name: "a port that is no port", tcp: map[string]string{"09000": "default/svc-a:80"}, problem: "want a port from 1 to 65535"},
		{name: "the HTTP port", tcp: map[string]string{"80": "default/svc-a:80"}, problem: "HTTP or HTTPS port"},
		{name: "a GlobalConfiguration listener's port", tcp: map[string]string{"5000": "default/svc-a:80"}, problem: "already served"},
		{name: "a value without a namespace", tcp: map[string]string{"9000": "svc-a:80"}, problem: "want NAMESPACE/SERVICE:PORT"},
		{name: "a suffix other than PROXY", tcp: map[string]string{"9000": "default/svc-a:80:proxy"}, problem: `"proxy" is not PROXY`},
		{name: "nginx syntax in a value", tcp: map[string]string{"9000": "default/svc-a:80;return"}, problem: "not a port number or name"},
		{name: "a missing Service closes connections", tcp: map[string]string{"9000": "default/nope:80"},
			want: []string{"9000-tcp 9000 TCP  false false"}, problem: "connections to port 9000 are closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := streamWorld()
			opts := streamOpts
			for _, c := range []struct {
				name string
				data map[string]string
				opt  *string
			}{{"tcp-services", tc.tcp, &opts.TCPServices}, {"udp-services", tc.udp, &opts.UDPServices}} {
				if c.data != nil {
					*c.opt = "causeway/" + c.name
					snap.ConfigMaps = append(snap.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: c.name}, Data: c.data})
				}
			}
			// The GlobalConfiguration's TCP listener on 5000 is served by a
			// TransportServer.
			snap.TransportServers = append(snap.TransportServers, mkTransportServer("ts", 0, "tcp", "TCP", svcName(0)))
			m, problems := Build(snap, opts)
			var got []string
			for _, s := range m.Streams {
				if s.Source.Kind == "ConfigMap" {
					got = append(got, strings.Join([]string{s.Listener, strconv.Itoa(s.Port), string(s.Protocol), s.Backend,
						strconv.FormatBool(s.Proxy.AcceptProxyProtocol), strconv.FormatBool(s.Proxy.SendProxyProtocol)}, " "))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("streams\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			msgs := messagesOf(problems, "ConfigMap")
			if (tc.problem == "") != (msgs == "") || !strings.Contains(msgs, tc.problem) {
				t.Errorf("ConfigMap problems %q, want one with %q", msgs, tc.problem)
			}
		})
	}
}
