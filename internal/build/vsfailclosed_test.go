package build

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
)

// TestConfigSnippetClosesVirtualServers: the ConfigMap's location-snippet
// and server-snippet, and its block lists, apply to VirtualServers as to
// Ingresses, so a refused snippet that denies, or a refused block list,
// closes their routes, the subroutes of their VirtualServerRoutes
// included, with every Ingress path; a refused snippet that does not deny,
// or another fail-closed key that only Ingresses obey, closes none of
// them.
func TestConfigSnippetClosesVirtualServers(t *testing.T) {
	const deny = `if ($http_x_bad) { return 403; }`
	for _, tc := range []struct {
		name   string
		config map[string]string
		closed bool
	}{
		{"a refused location-snippet that denies", map[string]string{"location-snippet": deny}, true},
		{"a refused server-snippet that denies", map[string]string{"server-snippet": `deny all;`}, true},
		{"a refused location-snippet that does not deny", map[string]string{"location-snippet": `add_header X y;`}, false},
		{"an allowed location-snippet", map[string]string{"allow-snippet-annotations": "true", "location-snippet": `add_header X y;`}, false},
		{"an invalid global-auth-url closes only Ingresses", map[string]string{"global-auth-url": "http://$host/auth"}, false},
		{"an invalid block-cidrs", map[string]string{"block-cidrs": "evil.example"}, true},
		{"an invalid block-user-agents", map[string]string{"block-user-agents": "~bad$"}, true},
		{"an invalid block-referers", map[string]string{"block-referers": "~bad$"}, true},
		{"an invalid whitelist-source-range closes only Ingresses", map[string]string{"whitelist-source-range": "10.0.0.1/8"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(3)
			snap.ConfigMaps = []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"}, Data: tc.config}}
			snap.VirtualServers = []*nicv1.VirtualServer{mkVirtualServer("cafe", "cafe.test", 0, pass("/a", "a"),
				nicv1.Route{Path: "/coffee", Route: "coffee"}, nicv1.Route{Path: "/tea", Action: &nicv1.Action{Return: &nicv1.ActionReturn{Body: "tea"}}})}
			snap.VirtualServerRoutes = []*nicv1.VirtualServerRoute{mkVSR("coffee", "cafe.test", pass("/coffee", "c"))}
			m, _ := Build(snap, testOpts)
			srv := server(m, "cafe.test")
			for _, p := range []string{"/a", "/coffee", "/tea"} {
				l := srv.Match(p)
				closed := l.Action.Return != nil && l.Action.Return.Status == 503 && l.Policy == nil
				if closed != tc.closed {
					t.Errorf("%s: %+v, want closed %v (FailClosed %v)", p, l.Action, tc.closed, m.Config.FailClosed)
				}
			}
			if tc.closed && !slices.ContainsFunc(m.Config.FailClosed, func(k string) bool { _, ok := tc.config[k]; return ok }) {
				t.Errorf("FailClosed %v, want the key", m.Config.FailClosed)
			}
		})
	}
}
