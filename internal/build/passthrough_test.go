package build

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

var passthroughOpts = func() Options {
	o := testOpts
	o.StreamAvailable, o.StreamRealIPAvailable, o.TLSPassthrough, o.HTTPPort, o.HTTPSPort = true, true, true, 80, 443
	return o
}()

func mkPassthroughTS(name string, age int, host, svc string) *nicv1.TransportServer {
	ts := mkTransportServer(name, age, "tls-passthrough", "TLS_PASSTHROUGH", svc)
	ts.Spec.Host = host
	return ts
}

func passthroughIng(name string, age int, value string, rules ...networkingv1.IngressRule) *networkingv1.Ingress {
	ing := mkIngress("default", name, age, rules...)
	ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/ssl-passthrough": value}
	return ing
}

// routesOf lists "host>backend<source" for each passthrough route.
func routesOf(m *model.Model) []string {
	if m.Passthrough == nil {
		return nil
	}
	out := []string{}
	for _, r := range m.Passthrough.Routes {
		out = append(out, r.Host+">"+r.Backend+"<"+r.Source.Name)
	}
	return out
}

// problemsOf lists "Name Reason: message" for every Problem.
func problemsOf(ps []model.Problem) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Object.Name+" "+p.Reason+": "+p.Message)
	}
	return strings.Join(out, "\n")
}

// TestPassthrough: a row per rule of TLS passthrough by server name.
// routes are routesOf the Model (nil: passthrough is off); problems are
// fragments, each of which some Problem must contain; servers are hosts
// that must (or, prefixed by "!", must not) have an http server.
func TestPassthrough(t *testing.T) {
	cm := func(data map[string]string) func(*source.Snapshot) {
		return func(s *source.Snapshot) {
			s.ConfigMaps = append(s.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"}, Data: data})
		}
	}
	for _, tc := range []struct {
		name     string
		opts     func(*Options)
		snap     func(*source.Snapshot)
		tss      []*nicv1.TransportServer
		ings     []*networkingv1.Ingress
		vss      []*nicv1.VirtualServer
		routes   []string
		problems []string
		rejected []string // objects with a Rejected Problem
		servers  []string
	}{
		{name: "flag off: a passthrough TransportServer is Invalid, saying how to turn it on",
			opts:     func(o *Options) { o.TLSPassthrough = false },
			tss:      []*nicv1.TransportServer{mkPassthroughTS("ts", 0, "app.example.com", svcName(0))},
			problems: []string{`ts Invalid: listener "tls-passthrough": TLS passthrough is off: start the controller with --enable-tls-passthrough (or --enable-ssl-passthrough)`},
			rejected: []string{"ts"}},
		{name: "flag off: an ssl-passthrough Ingress is served as HTTP, with a Problem",
			opts:     func(o *Options) { o.TLSPassthrough = false },
			ings:     []*networkingv1.Ingress{passthroughIng("ing", 0, "true", rule("app.example.com", path("/", "Prefix", svcName(0), 80)))},
			problems: []string{`ing UnsupportedAnnotation: annotation "nginx.ingress.kubernetes.io/ssl-passthrough": TLS passthrough is off: start the controller with --enable-tls-passthrough`},
			servers:  []string{"app.example.com"}},
		{name: "flag on, nothing asks: the stream server still takes the HTTPS port", routes: []string{}},
		{name: "a TransportServer's host goes to its upstream",
			tss:    []*nicv1.TransportServer{mkPassthroughTS("ts", 0, "app.example.com", svcName(0))},
			routes: []string{"app.example.com>default/svc-a/80<ts"}, servers: []string{"!app.example.com"}},
		{name: "a wildcard host",
			tss:    []*nicv1.TransportServer{mkPassthroughTS("ts", 0, "*.example.com", svcName(0))},
			routes: []string{"*.example.com>default/svc-a/80<ts"}},
		{name: "a missing host is Invalid",
			tss:    []*nicv1.TransportServer{mkPassthroughTS("ts", 0, "", svcName(0))},
			routes: []string{}, problems: []string{"ts Invalid: spec.host is required"}, rejected: []string{"ts"}},
		{name: "an invalid host is Invalid",
			tss:    []*nicv1.TransportServer{mkPassthroughTS("ts", 0, "App.Example.com", svcName(0))},
			routes: []string{}, problems: []string{"ts Invalid: spec.host"}, rejected: []string{"ts"}},
		{name: "a missing Service keeps the host, its connections closed",
			tss:    []*nicv1.TransportServer{mkPassthroughTS("ts", 0, "app.example.com", "nope")},
			routes: []string{"app.example.com><ts"}, problems: []string{`ts MissingService: upstream "u"`}},
		{name: "two TransportServers for one host: the oldest wins",
			tss: []*nicv1.TransportServer{mkPassthroughTS("young", 20, "app.example.com", svcName(1)),
				mkPassthroughTS("old", 10, "app.example.com", svcName(0))},
			routes:   []string{"app.example.com>default/svc-a/80<old"},
			problems: []string{`young Collision: host "app.example.com" belongs to TransportServer default/old, which is older`}},
		{name: "an older Ingress keeps the host from a TransportServer",
			ings:     []*networkingv1.Ingress{mkIngress("default", "ing", 0, rule("app.example.com", path("/", "Prefix", svcName(1), 80)))},
			tss:      []*nicv1.TransportServer{mkPassthroughTS("ts", 10, "app.example.com", svcName(0))},
			routes:   []string{},
			problems: []string{`ts Collision: host "app.example.com" belongs to Ingress default/ing, which is older`},
			servers:  []string{"app.example.com"}},
		{name: "an older TransportServer keeps the host from an Ingress",
			ings:     []*networkingv1.Ingress{mkIngress("default", "ing", 10, rule("app.example.com", path("/", "Prefix", svcName(1), 80)))},
			tss:      []*nicv1.TransportServer{mkPassthroughTS("ts", 0, "app.example.com", svcName(0))},
			routes:   []string{"app.example.com>default/svc-a/80<ts"},
			problems: []string{`ing Collision: host "app.example.com" belongs to TransportServer default/ts, which is older`},
			servers:  []string{"!app.example.com"}},
		{name: "an older VirtualServer keeps the host from a TransportServer",
			vss:      []*nicv1.VirtualServer{mkVirtualServer("vs", "app.example.com", 0, pass("/", "a"))},
			tss:      []*nicv1.TransportServer{mkPassthroughTS("ts", 10, "app.example.com", svcName(0))},
			routes:   []string{},
			problems: []string{`ts Collision: host "app.example.com" belongs to VirtualServer default/vs, which is older`},
			servers:  []string{"app.example.com"}},
		{name: "an older TransportServer keeps the host from a VirtualServer",
			vss:      []*nicv1.VirtualServer{mkVirtualServer("vs", "app.example.com", 10, pass("/", "a"))},
			tss:      []*nicv1.TransportServer{mkPassthroughTS("ts", 0, "app.example.com", svcName(0))},
			routes:   []string{"app.example.com>default/svc-a/80<ts"},
			problems: []string{`vs Collision: host "app.example.com" belongs to TransportServer default/ts, which is older`},
			servers:  []string{"!app.example.com"}},
		{name: "an ssl-passthrough Ingress passes its host to the Service of /",
			ings: []*networkingv1.Ingress{passthroughIng("ing", 0, "true", rule("app.example.com",
				path("/api", "Prefix", svcName(1), 80), path("/", "Prefix", svcName(0), 80)))},
			routes: []string{"app.example.com>default/svc-a/80<ing"}, servers: []string{"app.example.com"}},
		{name: "without /, spec.defaultBackend",
			ings: []*networkingv1.Ingress{func() *networkingv1.Ingress {
				ing := passthroughIng("ing", 0, "true", rule("app.example.com", path("/api", "Prefix", svcName(1), 80)))
				ing.Spec.DefaultBackend = svcBackend(svcName(0), 80)
				return ing
			}()},
			routes: []string{"app.example.com>default/svc-a/80<ing"}},
		{name: "without / or spec.defaultBackend the host's connections are closed",
			ings:     []*networkingv1.Ingress{passthroughIng("ing", 0, "true", rule("app.example.com", path("/api", "Prefix", svcName(1), 80)))},
			routes:   []string{"app.example.com><ing"},
			problems: []string{`ing MissingService: annotation "nginx.ingress.kubernetes.io/ssl-passthrough": host "app.example.com": the rule has no path /`}},
		{name: "ssl-passthrough false is plain HTTPS",
			ings:   []*networkingv1.Ingress{passthroughIng("ing", 0, "false", rule("app.example.com", path("/", "Prefix", svcName(0), 80)))},
			routes: []string{}, servers: []string{"app.example.com"}},
		{name: "ssl-passthrough with an invalid value is not applied",
			ings:     []*networkingv1.Ingress{passthroughIng("ing", 0, "yes", rule("app.example.com", path("/", "Prefix", svcName(0), 80)))},
			routes:   []string{},
			problems: []string{`ing InvalidAnnotation: annotation nginx.ingress.kubernetes.io/ssl-passthrough: value "yes"`}},
		{name: "a rule without a host is not passed through",
			ings:     []*networkingv1.Ingress{passthroughIng("ing", 0, "true", rule("", path("/", "Prefix", svcName(0), 80)))},
			routes:   []string{},
			problems: []string{"ing InvalidAnnotation: annotation \"nginx.ingress.kubernetes.io/ssl-passthrough\": a rule without a host is not passed through"}},
		{name: "an ssl-passthrough Ingress owns its host: a younger Ingress collides",
			ings: []*networkingv1.Ingress{passthroughIng("pass", 0, "true", rule("app.example.com", path("/", "Prefix", svcName(0), 80))),
				mkIngress("default", "plain", 10, rule("app.example.com", path("/other", "Prefix", svcName(1), 80)))},
			routes:   []string{"app.example.com>default/svc-a/80<pass"},
			problems: []string{`plain Collision: host "app.example.com" belongs to Ingress default/pass, which is older`}},
		{name: "an older Ingress on the host keeps a younger one from passing it through",
			ings: []*networkingv1.Ingress{mkIngress("default", "plain", 0, rule("app.example.com", path("/other", "Prefix", svcName(1), 80))),
				passthroughIng("pass", 10, "true", rule("app.example.com", path("/", "Prefix", svcName(0), 80)))},
			routes:   []string{},
			problems: []string{`pass Collision: host "app.example.com" belongs to Ingress default/plain, which is older; annotation "nginx.ingress.kubernetes.io/ssl-passthrough" needs the host alone`}},
		{name: "an ssl-passthrough Ingress and a younger TransportServer",
			ings:     []*networkingv1.Ingress{passthroughIng("pass", 0, "true", rule("app.example.com", path("/", "Prefix", svcName(0), 80)))},
			tss:      []*nicv1.TransportServer{mkPassthroughTS("ts", 10, "app.example.com", svcName(1))},
			routes:   []string{"app.example.com>default/svc-a/80<pass"},
			problems: []string{`ts Collision: host "app.example.com" belongs to Ingress default/pass, which is older`}},
		{name: "an older VirtualServer keeps the host from an ssl-passthrough Ingress",
			vss:      []*nicv1.VirtualServer{mkVirtualServer("vs", "app.example.com", 0, pass("/", "a"))},
			ings:     []*networkingv1.Ingress{passthroughIng("pass", 10, "true", rule("app.example.com", path("/", "Prefix", svcName(0), 80)))},
			routes:   []string{},
			problems: []string{`pass Collision: host "app.example.com" belongs to VirtualServer default/vs, which is older`}},
		{name: "a client address from a header turns passthrough off, with Problems",
			snap:     cm(map[string]string{"use-forwarded-headers": "true"}),
			tss:      []*nicv1.TransportServer{mkPassthroughTS("ts", 0, "app.example.com", svcName(0))},
			problems: []string{"config InvalidConfig: TLS passthrough (--enable-tls-passthrough (or --enable-ssl-passthrough)) is not served", "ts Invalid: listener \"tls-passthrough\": the ConfigMap takes the client address from X-Forwarded-For"},
			rejected: []string{"ts"}},
		{name: "use-proxy-protocol is served",
			snap:   cm(map[string]string{"use-proxy-protocol": "true"}),
			tss:    []*nicv1.TransportServer{mkPassthroughTS("ts", 0, "app.example.com", svcName(0))},
			routes: []string{"app.example.com>default/svc-a/80<ts"}},
		{name: "use-proxy-protocol needs the stream realip module",
			snap:     cm(map[string]string{"use-proxy-protocol": "true"}),
			opts:     func(o *Options) { o.StreamRealIPAvailable = false },
			tss:      []*nicv1.TransportServer{mkPassthroughTS("ts", 0, "app.example.com", svcName(0))},
			problems: []string{"ts Invalid: listener \"tls-passthrough\": with use-proxy-protocol, TLS passthrough needs nginx's stream realip module"},
			rejected: []string{"ts"}},
		{name: "no stream module",
			opts:     func(o *Options) { o.StreamAvailable = false },
			tss:      []*nicv1.TransportServer{mkPassthroughTS("ts", 0, "app.example.com", svcName(0))},
			problems: []string{"ts Invalid: listener \"tls-passthrough\": nginx has no stream module"},
			rejected: []string{"ts"}},
		{name: "routes are sorted by host",
			tss: []*nicv1.TransportServer{mkPassthroughTS("b", 0, "b.example.com", svcName(0)),
				mkPassthroughTS("a", 1, "a.example.com", svcName(1))},
			routes: []string{"a.example.com>default/svc-b/80<a", "b.example.com>default/svc-a/80<b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(2)
			if tc.snap != nil {
				tc.snap(snap)
			}
			snap.TransportServers, snap.Ingresses, snap.VirtualServers = tc.tss, tc.ings, tc.vss
			opts := passthroughOpts
			if tc.opts != nil {
				tc.opts(&opts)
			}
			m, problems := Build(snap, opts)
			if got := routesOf(m); !slices.Equal(got, tc.routes) || (got == nil) != (tc.routes == nil) {
				t.Errorf("routes %q, want %q", got, tc.routes)
			}
			all := problemsOf(problems)
			for _, want := range tc.problems {
				if !strings.Contains(all, want) {
					t.Errorf("no Problem with %q in\n%s", want, all)
				}
			}
			if len(tc.problems) == 0 && all != "" {
				t.Errorf("unexpected Problems:\n%s", all)
			}
			var rejected []string
			for _, p := range problems {
				if p.Rejected {
					rejected = append(rejected, p.Object.Name)
				}
			}
			if !slices.Equal(rejected, tc.rejected) {
				t.Errorf("rejected %q, want %q", rejected, tc.rejected)
			}
			for _, h := range tc.servers {
				want := !strings.HasPrefix(h, "!")
				if has := server(m, strings.TrimPrefix(h, "!")) != nil; has != want {
					t.Errorf("http server for %s: %v, want %v", h, has, want)
				}
			}
			// Passthrough Services are stream upstreams, not HTTP backends.
			for _, be := range m.Backends {
				if tc.ings == nil && tc.vss == nil {
					t.Errorf("backend %s", be.Key)
				}
			}
		})
	}
}
