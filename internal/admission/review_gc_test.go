package admission

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/source"
)

// TestReviewGlobalConfiguration: the GlobalConfiguration
// --global-configuration names has the Problems of its listeners, a row
// per rule, exactly those the full build (of a world with TransportServers
// on its listeners) raises on it; any other has none.
func TestReviewGlobalConfiguration(t *testing.T) {
	opts := testOpts
	opts.GlobalConfiguration, opts.HTTPPort, opts.HTTPSPort = "causeway/gc", 80, 443
	gc := func(name string, ls ...nicv1.Listener) *nicv1.GlobalConfiguration {
		return &nicv1.GlobalConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: name},
			Spec: nicv1.GlobalConfigurationSpec{Listeners: ls}}
	}
	tcp := func(name string, port int) nicv1.Listener {
		return nicv1.Listener{Name: name, Protocol: "TCP", Port: port}
	}
	svc, es := service("ns1", "svc-0")
	for _, tc := range []struct {
		name string
		gc   *nicv1.GlobalConfiguration
		want []string // a fragment of each Problem's message, in order
	}{
		{name: "valid listeners of each protocol; TCP and UDP may share a port",
			gc: gc("gc", tcp("tcp-a", 5000), nicv1.Listener{Name: "udp", Protocol: "UDP", Port: 5000},
				nicv1.Listener{Name: "http", Protocol: "HTTP", Port: 8080})},
		{name: "a name that is no DNS label", gc: gc("gc", tcp("Tcp_A", 5000)), want: []string{"spec.listeners[0] (Tcp_A): name:"}},
		{name: "a name used twice", gc: gc("gc", tcp("tcp-a", 5000), tcp("tcp-a", 5001)),
			want: []string{"spec.listeners[1] (tcp-a): the name is used by another listener"}},
		{name: "an unknown protocol", gc: gc("gc", nicv1.Listener{Name: "x", Protocol: "SCTP", Port: 5000}), want: []string{`protocol "SCTP"`}},
		{name: "a port out of range", gc: gc("gc", tcp("tcp-a", 70000)), want: []string{"port 70000: want 1 to 65535"}},
		{name: "the HTTP port", gc: gc("gc", tcp("tcp-a", 80)), want: []string{"port 80 is the controller's HTTP port"}},
		{name: "the HTTPS port", gc: gc("gc", nicv1.Listener{Name: "h", Protocol: "HTTP", Port: 443}), want: []string{"port 443 is the controller's HTTPS port"}},
		{name: "a port two TCP listeners share", gc: gc("gc", tcp("tcp-a", 5000), tcp("tcp-b", 5000)),
			want: []string{`port 5000 TCP is used by listener "tcp-a"`}},
		{name: "an HTTP listener on a TCP listener's port", gc: gc("gc", tcp("tcp-a", 5000), nicv1.Listener{Name: "h", Protocol: "HTTP", Port: 5000}),
			want: []string{`port 5000 HTTP is used by listener "tcp-a"`}},
		{name: "ssl on a TCP listener", gc: gc("gc", nicv1.Listener{Name: "tcp-a", Protocol: "TCP", Port: 5000, Ssl: true}),
			want: []string{"ssl is not supported"}},
		{name: "another GlobalConfiguration is not read", gc: gc("other", tcp("tcp-a", 80), tcp("tcp-a", 80))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			world := &source.Snapshot{
				TransportServers:     []*nicv1.TransportServer{mkTransportServer("ns1", "owner", 0, "tcp-a", "svc-0")},
				GlobalConfigurations: []*nicv1.GlobalConfiguration{gc("gc", tcp("tcp-a", 5000)), gc("other")},
				Services:             []*corev1.Service{svc}, EndpointSlices: []*discoveryv1.EndpointSlice{es},
			}
			r := NewReviewer(opts, nil, nil)
			r.Update(world)
			got, ours, err := r.ReviewGlobalConfiguration(context.Background(), tc.gc)
			if err != nil || !ours {
				t.Fatalf("ours %v err %v", ours, err)
			}
			var msgs []string
			for _, p := range got {
				msgs = append(msgs, p.Reason+": "+p.Message)
			}
			if len(msgs) != len(tc.want) {
				t.Fatalf("problems %q, want %d: %q", msgs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(msgs[i], w) {
					t.Errorf("problem %q, want one with %q", msgs[i], w)
				}
			}
			// The full build of the world where it replaces its namesake.
			world.GlobalConfigurations = replaced(world.GlobalConfigurations, tc.gc)
			_, all := build.Build(world, opts)
			if want := problemsOfKind(all, "GlobalConfiguration", "causeway", tc.gc.Name); !slices.Equal(problemsOfKind(got, "GlobalConfiguration", "causeway", tc.gc.Name), want) {
				t.Errorf("review %q\nbuild  %q", msgs, want)
			}
		})
	}
}
