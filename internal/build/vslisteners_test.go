package build

import (
	"strings"
	"testing"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TestVirtualServerListeners: a row per rule of spec.listener. A
// VirtualServer naming listeners is served on them instead of the
// controller's ports; a name the GlobalConfiguration lacks, or of the
// wrong kind, is a Problem and that protocol is not served.
func TestVirtualServerListeners(t *testing.T) {
	noGC := streamOpts
	noGC.GlobalConfiguration = ""
	for _, tc := range []struct {
		name        string
		listener    *nicv1.VirtualServerListener
		opts        *Options
		http, https string // the listeners served on; "" for none
		problem     string
		used        []string // Model.HTTPListeners
	}{
		{name: "no listener serves the controller's ports"},
		{name: "an http listener", listener: &nicv1.VirtualServerListener{HTTP: "web"}, http: "web", used: []string{"web"}},
		{name: "http and https listeners", listener: &nicv1.VirtualServerListener{HTTP: "web", HTTPS: "secure"}, http: "web", https: "secure",
			used: []string{"secure", "web"}},
		{name: "an https listener alone", listener: &nicv1.VirtualServerListener{HTTPS: "secure"}, https: "secure", used: []string{"secure"}},
		{name: "a listener the GlobalConfiguration lacks", listener: &nicv1.VirtualServerListener{HTTP: "nope", HTTPS: "secure"}, https: "secure",
			problem: `spec.listener.http "nope": GlobalConfiguration causeway/gc has no usable HTTP listener "nope"; the VirtualServer is not served over plain HTTP`,
			used:    []string{"secure"}},
		{name: "a TCP listener", listener: &nicv1.VirtualServerListener{HTTP: "tcp"}, problem: `listener "tcp" of GlobalConfiguration causeway/gc is TCP, not HTTP`},
		{name: "an ssl listener for http", listener: &nicv1.VirtualServerListener{HTTP: "secure"}, problem: `spec.listener.http "secure": listener "secure" has ssl: true`},
		{name: "a plain listener for https", listener: &nicv1.VirtualServerListener{HTTPS: "web"},
			problem: `spec.listener.https "web": listener "web" has no ssl: true; name it in spec.listener.http; the VirtualServer is not served over HTTPS`},
		{name: "a listener left out of the GlobalConfiguration", listener: &nicv1.VirtualServerListener{HTTP: "on-http-port"}, problem: `no usable HTTP listener "on-http-port"`},
		{name: "no GlobalConfiguration", opts: &noGC, listener: &nicv1.VirtualServerListener{HTTP: "web"},
			problem: "no GlobalConfiguration is configured (--global-configuration)"},
		{name: "a listener naming neither is ignored", listener: &nicv1.VirtualServerListener{}, problem: "spec.listener: names neither"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := streamWorld()
			snap.GlobalConfigurations[0].Spec.Listeners = append(snap.GlobalConfigurations[0].Spec.Listeners,
				nicv1.Listener{Name: "web", Port: 8080, Protocol: "HTTP", IPv4: "127.0.0.5"},
				nicv1.Listener{Name: "secure", Port: 8443, Protocol: "HTTP", Ssl: true},
				nicv1.Listener{Name: "on-http-port", Port: 80, Protocol: "HTTP"})
			vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"))
			vs.Spec.Listener = tc.listener
			snap.VirtualServers = []*nicv1.VirtualServer{vs}
			opts := streamOpts
			if tc.opts != nil {
				opts = *tc.opts
			}
			m, problems := Build(snap, opts)
			msgs := messagesOf(problems, "VirtualServer")
			if tc.problem == "" && msgs != "" || tc.problem != "" && !strings.Contains(msgs, tc.problem) || len(reasonsOf(problems, "VirtualServer", "cafe")) > 1 {
				t.Errorf("problems:\n%s\nwant one with %q", msgs, tc.problem)
			}
			srv := server(m, "cafe.test")
			name := func(l *model.HTTPListener) string {
				if l == nil {
					return ""
				}
				return l.Name
			}
			switch l := srv.Listeners; {
			case tc.listener == nil || tc.listener.HTTP == "" && tc.listener.HTTPS == "":
				if l != nil {
					t.Errorf("listeners %+v, want the controller's ports", l)
				}
			case l == nil:
				t.Errorf("no listeners, want http %q https %q", tc.http, tc.https)
			case name(l.HTTP) != tc.http || name(l.HTTPS) != tc.https:
				t.Errorf("http %q https %q, want %q %q", name(l.HTTP), name(l.HTTPS), tc.http, tc.https)
			}
			var used []string
			for _, l := range m.HTTPListeners {
				used = append(used, l.Name)
			}
			if strings.Join(used, ",") != strings.Join(tc.used, ",") {
				t.Errorf("Model.HTTPListeners %v, want %v", used, tc.used)
			}
			if srv.Listeners != nil && srv.Listeners.HTTP != nil && srv.Listeners.HTTP.IPv4.String() != "127.0.0.5" {
				t.Errorf("listener web binds %v", srv.Listeners.HTTP.IPv4)
			}
		})
	}
}
