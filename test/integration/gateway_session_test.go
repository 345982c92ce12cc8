package integration

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// gatewaySessionManifests: a Gateway with an HTTP listener on port %[1]d
// and a route whose rule /s keeps sessions (a Permanent cookie "sess"),
// whose rule /plain does not, on the same Service, and whose rule /split
// keeps sessions over two Services weighted %[2]d and %[3]d.
const gatewaySessionManifests = gatewayClassYAML + `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  listeners: [{name: http, port: %[1]d, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: default}
spec:
  parentRefs: [{name: gw}]
  hostnames: [app.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /s}}]
    backendRefs: [{name: web, port: 80}]
    sessionPersistence:
      sessionName: sess
      absoluteTimeout: 1h
      cookieConfig: {lifetimeType: Permanent}
  - matches: [{path: {type: PathPrefix, value: /plain}}]
    backendRefs: [{name: web, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /split}}]
    backendRefs: [{name: web, port: 80, weight: %[2]d}, {name: other, port: 80, weight: %[3]d}]
    sessionPersistence: {}
---
`

// TestGatewaySessionPersistence: a rule's sessionPersistence keeps a
// client on one endpoint of a two-endpoint Service while it sends the
// cookie the first answer set (Max-Age from absoluteTimeout, Path the
// rule's); without the cookie, and on a rule of the same Service
// without persistence, requests spread. Over two backendRefs the cookie
// keeps the client on its backendRef after its weight drops to 0, which
// is pushed without a reload.
func TestGatewaySessionPersistence(t *testing.T) {
	t.Parallel()
	web := startBackends(t, "web", 2)
	other := startBackend(t, "other")
	c := startController(t, map[string]string{
		"services.yaml": serviceYAML("default", "web", 80, web...) + serviceYAML("default", "other", 80, other),
	})
	if c.Metric("causeway_dataplane_mode", `mode="lua"`) != 1 {
		t.Skip("session persistence needs the Lua balancer")
	}
	port := freePort(t, c.IP)
	c.WriteManifest("gateway.yaml", fmt.Sprintf(gatewaySessionManifests, port, 1, 1))
	addr := net.JoinHostPort(c.IP, strconv.Itoa(port))
	get := func(path, cookie string) (harness.Result, error) {
		var hdr map[string]string
		if cookie != "" {
			hdr = map[string]string{"Cookie": cookie}
		}
		r, err := harness.Do(addr, harness.Request{Scheme: "http", Host: "app.test", Path: path, Header: hdr})
		if err == nil && r.Status != 200 {
			err = fmt.Errorf("%s: status %d", path, r.Status)
		}
		return r, err
	}
	cookieOf := func(r harness.Result, prefix string) *http.Cookie {
		for _, ck := range (&http.Response{Header: r.Header}).Cookies() {
			if strings.HasPrefix(ck.Name, prefix) {
				return ck
			}
		}
		return nil
	}
	// endpoints counts the endpoints that serve n requests to path.
	endpoints := func(path, cookie string, n int) map[string]int {
		t.Helper()
		seen := map[string]int{}
		for range n {
			r, err := get(path, cookie)
			if err != nil {
				t.Fatal(err)
			}
			seen[r.Reply.Service+" "+r.Reply.Endpoint]++
		}
		return seen
	}
	var first harness.Result
	eventually(t, 20*time.Second, func() error {
		var err error
		first, err = get("/s", "")
		return err
	})
	ck := cookieOf(first, "sess")
	if ck == nil {
		t.Fatalf("no sess cookie: %v", first.Header)
	}
	if ck.MaxAge != 3600 || ck.Path != "/s" || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
		t.Errorf("cookie %q: want Max-Age=3600, Path=/s, HttpOnly, SameSite=Lax", first.Header.Values("Set-Cookie"))
	}
	if got := endpoints("/s", "sess="+ck.Value, 12); len(got) != 1 || got["web "+first.Reply.Endpoint] != 12 {
		t.Errorf("with the cookie: served by %v, want all by %s", got, first.Reply.Endpoint)
	}
	if got := endpoints("/s", "", 12); len(got) != 2 {
		t.Errorf("without the cookie: served by %v, want both endpoints", got)
	}
	// The rule without persistence on the same Service: no cookie, spread.
	if r, err := get("/plain", ""); err != nil || cookieOf(r, "") != nil {
		t.Errorf("/plain: %v, cookies %q", err, r.Header.Values("Set-Cookie"))
	}
	if got := endpoints("/plain", "sess="+ck.Value, 12); len(got) != 2 {
		t.Errorf("/plain with /s's cookie: served by %v, want both endpoints", got)
	}

	// Over two backendRefs: a client on "other" stays there once its
	// weight is 0.
	var onOther *http.Cookie
	for range 40 {
		r, err := get("/split", "")
		if err != nil {
			t.Fatal(err)
		}
		if r.Reply.Service == "other" {
			onOther = cookieOf(r, "causeway-session-")
			break
		}
	}
	if onOther == nil {
		t.Fatal("/split: no request reached other with a causeway-session- cookie")
	}
	reloads := reloadsAfterGateway(t, c)
	c.WriteManifest("gateway.yaml", fmt.Sprintf(gatewaySessionManifests, port, 1, 0))
	eventually(t, 10*time.Second, func() error {
		if got := endpoints("/split", "", 6); len(got) != 2 || got["other "+other.IP+":"+strconv.Itoa(other.Port)] != 0 {
			// Two web endpoints, never other.
			return fmt.Errorf("without a cookie, other at weight 0: served by %v", got)
		}
		return nil
	})
	cookie := onOther.Name + "=" + onOther.Value
	if got := endpoints("/split", cookie, 12); len(got) != 1 || got["other "+other.IP+":"+strconv.Itoa(other.Port)] != 12 {
		t.Errorf("with other's cookie, other at weight 0: served by %v, want all by other", got)
	}
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Errorf("a weight change of a persistent rule reloaded nginx: %v reloads, were %v", got, reloads)
	}
}
