package integration

import (
	"slices"
	"strings"
	"testing"
)

const headerInheritManifests = `apiVersion: v1
kind: ConfigMap
metadata: {name: global-headers, namespace: causeway}
data: {X-Global: g}
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: merge, namespace: default}
spec:
  host: merge.test
  server-snippets: add_header X-Server s;
  upstreams: [{name: app, service: app, port: 80}]
  routes:
  - path: /default
    action: {pass: app}
  - path: /own
    action: {proxy: {upstream: app, responseHeaders: {add: [{name: X-Route, value: r}]}}}
  - path: /on
    add-header-inherit: "on"
    action: {proxy: {upstream: app, responseHeaders: {add: [{name: X-Route, value: r}]}}}
  - path: /on-none
    add-header-inherit: "on"
    action: {pass: app}
  - path: /off
    add-header-inherit: "off"
    action: {pass: app}
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: inherit-off, namespace: default}
spec:
  host: off.test
  add-header-inherit: "off"
  server-snippets: add_header X-Server s;
  upstreams: [{name: app, service: app, port: 80}]
  routes:
  - path: /
    action: {pass: app}
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: inherit-on, namespace: default}
spec:
  host: on.test
  add-header-inherit: "on"
  server-snippets: add_header X-Server s;
  upstreams: [{name: app, service: app, port: 80}]
  routes:
  - path: /
    action: {pass: app}
---
`

// TestVirtualServerHeaderInheritAgainstNginx: add-header-inherit of a
// VirtualServer and of its routes decides, on Debian's nginx (which has
// no add_header_inherit), which of the http level's (the ConfigMap's
// add-headers), the server's (server-snippets) and the route's own
// headers reach the client, as nginx 1.29.3's directive would.
func TestVirtualServerHeaderInheritAgainstNginx(t *testing.T) {
	t.Parallel()
	app := startBackend(t, "app")
	c := startController(t, map[string]string{"manifests.yaml": ingressClass + serviceYAML("default", "app", 80, app) + headerInheritManifests +
		configMapYAML(map[string]string{"add-headers": "causeway/global-headers", "allow-snippet-annotations": "true"})})
	for _, tc := range []struct {
		host, path string
		want       []string
	}{
		{"merge.test", "/default", []string{"X-Global", "X-Server"}},
		{"merge.test", "/own", []string{"X-Global", "X-Route", "X-Server"}},
		{"merge.test", "/on", []string{"X-Route"}},
		{"merge.test", "/on-none", []string{"X-Global", "X-Server"}},
		{"merge.test", "/off", nil},
		{"off.test", "/", []string{"X-Server"}},
		{"on.test", "/", []string{"X-Server"}},
	} {
		r := c.Get(tc.host, tc.path)
		if r.Status != 200 {
			t.Errorf("%s%s: status %d", tc.host, tc.path, r.Status)
			continue
		}
		var got []string
		for _, h := range []string{"X-Global", "X-Route", "X-Server", "Causeway-No-Inherit"} {
			if r.Header.Get(h) != "" {
				got = append(got, h)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s%s: headers %v, want %v", tc.host, tc.path, got, tc.want)
		}
	}
	if strings.Contains(c.log.String(), "add-header-inherit") {
		t.Errorf("add-header-inherit was reported:\n%s", c.log.String())
	}
}
