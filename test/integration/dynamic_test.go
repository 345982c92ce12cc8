package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/test/echo"
)

// sliceYAML is an EndpointSlice for service with the given endpoints; each
// endpoint is "IP:PORT" optionally followed by " notready" or
// " terminating". All endpoints must share one port.
func sliceYAML(ns, service string, endpoints ...string) string {
	var b strings.Builder
	port := "80"
	for _, e := range endpoints {
		f := strings.Fields(e)
		host, p, _ := net.SplitHostPort(f[0])
		port = p
		cond := "{ready: true}"
		if len(f) > 1 && f[1] == "notready" {
			cond = "{ready: false}"
		} else if len(f) > 1 && f[1] == "terminating" {
			cond = "{ready: false, serving: true, terminating: true}"
		}
		fmt.Fprintf(&b, "  - addresses: [%q]\n    conditions: %s\n", host, cond)
	}
	if len(endpoints) == 0 {
		b.WriteString("  []\n")
	}
	return fmt.Sprintf("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: %s-1\n  namespace: %s\n  labels: {kubernetes.io/service-name: %s}\naddressType: IPv4\nports: [{name: http, port: %s, protocol: TCP}]\nendpoints:\n%s",
		service, ns, service, port, b.String())
}

func svcOnlyYAML(ns, name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\nspec:\n  ports: [{name: http, port: 80}]\n---\n", name, ns)
}

func addr(b *backend) string { return net.JoinHostPort(b.IP, strconv.Itoa(b.Port)) }

// servedBy collects which endpoints answered n requests.
func servedBy(c *controller, host string, n int) map[string]int {
	seen := map[string]int{}
	for i := 0; i < n; i++ {
		r, err := c.get("http", host, "/")
		if err != nil {
			seen["error"]++
			continue
		}
		if r.Status != 200 {
			seen[strconv.Itoa(r.Status)]++
			continue
		}
		seen[r.Reply.Endpoint]++
	}
	return seen
}

func keys(m map[string]int) string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return strings.Join(k, ",")
}

// TestEndpointChangesDoNotReload walks through every change the Lua data
// plane must absorb without a reload, checking traffic and the reload
// counter after each.
func TestEndpointChangesDoNotReload(t *testing.T) {
	t.Parallel()
	ab := startBackends(t, "web", 2)
	a, b := ab[0], ab[1]
	// A second port on b's address stands in for a changed targetPort.
	b2 := &backend{Service: "web", IP: b.IP}
	l, err := net.Listen("tcp", net.JoinHostPort(b.IP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	b2.Port = l.Addr().(*net.TCPAddr).Port
	srv := &http.Server{Handler: echo.Handler("web", l.Addr().String())}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })

	c := startController(t, map[string]string{
		"app.yaml":   ingressClass + svcOnlyYAML("default", "web") + ingressYAML("default", "web", "web.test", "Prefix / web"),
		"slice.yaml": sliceYAML("default", "web", addr(a)),
	})
	if c.Metric("causeway_dataplane_mode", `mode="lua"`) != 1 {
		t.Fatal("the Lua data plane must be in use")
	}
	reloads := c.Metric("causeway_nginx_reloads_total")
	steps := []struct {
		name  string
		slice []string
		want  string // comma-separated endpoints, or a status
	}{
		{"endpoint added", []string{addr(a), addr(b)}, addr(a) + "," + addr(b)},
		{"endpoint removed", []string{addr(b)}, addr(b)},
		{"endpoint not ready", []string{addr(a), addr(b) + " notready"}, addr(a)},
		{"endpoint terminating", []string{addr(b), addr(a) + " terminating"}, addr(b)},
		{"target port changed", []string{addr(b2)}, addr(b2)},
		{"scaled to zero", nil, "503"},
		{"scaled back", []string{addr(a)}, addr(a)},
	}
	for _, s := range steps {
		updates := c.Metric("causeway_dynamic_updates_total", `kind="endpoints"`, `result="success"`)
		start := time.Now()
		c.WriteManifest("slice.yaml", sliceYAML("default", "web", s.slice...))
		eventually(t, 5*time.Second, func() error {
			if got := keys(servedBy(c, "web.test", 8)); got != s.want {
				return fmt.Errorf("%s: served by %s, want %s", s.name, got, s.want)
			}
			return nil
		})
		t.Logf("%s: live in %s", s.name, time.Since(start).Round(time.Millisecond))
		if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
			t.Fatalf("%s: reloads went from %v to %v", s.name, reloads, got)
		}
		if c.Metric("causeway_dynamic_updates_total", `kind="endpoints"`, `result="success"`) <= updates {
			t.Fatalf("%s: no dynamic update counted", s.name)
		}
	}
	if got := c.Metric("causeway_backend_endpoints", `backend="default/web/80"`); got != 1 {
		t.Fatalf("causeway_backend_endpoints = %v, want 1", got)
	}

	// A structural change does reload.
	c.WriteManifest("app.yaml", ingressClass+svcOnlyYAML("default", "web")+ingressYAML("default", "web", "web.test", "Prefix / web", "Exact /new web"))
	eventually(t, 5*time.Second, func() error {
		if c.Metric("causeway_nginx_reloads_total", `reason="config"`) != 1 {
			return fmt.Errorf("no config reload yet")
		}
		return nil
	})
}

// TestCertificateRenewal renews a secret in place. By default the renewal
// needs no reload: with the Lua module, ssl_certificate_by_lua re-reads the
// file once the controller reports it changed; without it, nginx reads the
// file at each handshake. With reload-free-certificates off, it reloads.
func TestCertificateRenewal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		config     string
		args       []string
		wantReload float64
	}{
		{"reload-free by default (ssl_certificate_by_lua)", "", nil, 0},
		{"reload-free without Lua (read per handshake)", "", []string{"--dataplane", "plain"}, 0},
		{"reloads when turned off", `{reload-free-certificates: "false"}`, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			web := startBackend(t, "web")
			m := map[string]string{
				"app.yaml":    ingressClass + serviceYAML("default", "web", 80, web) + tlsIngressYAML("default", "a", "a.tls.test", "a-tls", "web"),
				"secret.yaml": tlsSecretYAML(t, "default", "a-tls", "a.tls.test", 0),
			}
			if tc.config != "" {
				m["config.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config, namespace: causeway}\ndata: " + tc.config + "\n"
			}
			c := startController(t, m, tc.args...)
			if cn := c.GetTLS("a.tls.test", "/").PeerCN; cn != "a.tls.test" {
				t.Fatalf("CN %q", cn)
			}
			reloads := c.Metric("causeway_nginx_reloads_total", `result="success"`)
			// Renew: same secret, new certificate (told apart by its CN).
			c.WriteManifest("secret.yaml", tlsSecretYAML(t, "default", "a-tls", "renewed.a.tls.test", 0))
			eventually(t, 5*time.Second, func() error {
				// Read per handshake, the certificate and the key are two
				// reads of the file: a handshake between them and the
				// renewal's rename fails (docs/configuration.md), and the
				// next one sees the new pair.
				r, err := c.get("https", "a.tls.test", "/")
				if err != nil {
					return err
				}
				if cn := r.PeerCN; cn != "renewed.a.tls.test" {
					return fmt.Errorf("CN %q", cn)
				}
				if got := c.Metric("causeway_nginx_reloads_total", `result="success"`) - reloads; got != tc.wantReload {
					return fmt.Errorf("%v reloads, want %v", got, tc.wantReload)
				}
				return nil
			})
			if tc.wantReload == 0 {
				// Read per handshake, the new certificate serves as soon as
				// its file is renamed, before the Apply that wrote it (and
				// probes it with nginx -t) returns and is counted.
				eventually(t, 5*time.Second, func() error {
					if c.Metric("causeway_dynamic_updates_total", `kind="certificates"`, `result="success"`) < 1 {
						return fmt.Errorf("certificate update not counted")
					}
					return nil
				})
			}
		})
	}
}

func TestDynamicChannelIsUnixOnly(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	c := startController(t, map[string]string{"a.yaml": ingressClass + serviceYAML("default", "web", 80, web) + ingressYAML("default", "a", "a.test", "Prefix / web")})
	out, err := exec.Command("ss", "-ltnpH").CombinedOutput()
	if err != nil {
		t.Fatalf("ss: %v %s", err, out)
	}
	master := strconv.Itoa(c.nginxMasterPID())
	var ports []string
	for _, line := range strings.Split(string(out), "\n") {
		// Only sockets of this controller's nginx (its master or workers
		// share the listening socket; ss lists every holder).
		if !strings.Contains(line, "pid="+master+",") {
			continue
		}
		f := strings.Fields(line)
		_, port, _ := net.SplitHostPort(f[3])
		ports = append(ports, port)
	}
	sort.Strings(ports)
	want := []string{strconv.Itoa(c.HTTPPort), strconv.Itoa(c.HTTPSPort)}
	sort.Strings(want)
	if strings.Join(ports, ",") != strings.Join(want, ",") {
		t.Fatalf("nginx listens on TCP ports %v, want only %v", ports, want)
	}
	// The channel answers on its unix socket, and refuses a malformed
	// payload while the old endpoints keep serving.
	client := unixClient(filepath.Join(c.StateDir, "run", "dynamic.sock"))
	req, _ := http.NewRequest(http.MethodPut, "http://causeway/v1/state", strings.NewReader(`{"version":1,"generation":99999999999999,"backends":[{"key":"default/web/80","endpoints":[{"address":"not-an-ip","port":1,"ready":true}]}]}`))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("malformed payload: status %d, want 400", resp.StatusCode)
	}
	if got := keys(servedBy(c, "a.test", 4)); got != addr(web) {
		t.Fatalf("after a rejected payload: served by %s", got)
	}
}

func unixClient(path string) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}}}
}

func TestRetryOnDeadEndpoint(t *testing.T) {
	t.Parallel()
	live := startBackend(t, "web")
	dead := &backend{IP: loopbackIP(), Port: live.Port} // nothing listens there
	c := startController(t, map[string]string{
		"a.yaml": ingressClass + svcOnlyYAML("default", "web") + ingressYAML("default", "a", "a.test", "Prefix / web") +
			"---\n" + sliceYAML("default", "web", addr(live), addr(dead)),
	})
	if got := servedBy(c, "a.test", 40); got[addr(live)] != 40 {
		t.Fatalf("with one dead endpoint every request must succeed on the other: %v", got)
	}
}

// TestNotReadyEndpointDrains flips an endpoint to not-ready while a slow
// request is in flight on it: that request completes, and new requests go
// to the other endpoint only.
func TestNotReadyEndpointDrains(t *testing.T) {
	t.Parallel()
	ab := startBackends(t, "web", 2)
	a, b := ab[0], ab[1]
	c := startController(t, map[string]string{
		"app.yaml":   ingressClass + svcOnlyYAML("default", "web") + ingressYAML("default", "a", "a.test", "Prefix / web"),
		"slice.yaml": sliceYAML("default", "web", addr(a)),
	})
	var wg sync.WaitGroup
	var slow result
	var slowErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		slow, slowErr = c.get("http", "a.test", "/?sleep=1500ms")
	}()
	time.Sleep(200 * time.Millisecond) // the slow request is on a
	c.WriteManifest("slice.yaml", sliceYAML("default", "web", addr(a)+" notready", addr(b)))
	eventually(t, 5*time.Second, func() error {
		if got := keys(servedBy(c, "a.test", 6)); got != addr(b) {
			return fmt.Errorf("served by %s", got)
		}
		return nil
	})
	wg.Wait()
	if slowErr != nil || slow.Status != 200 || slow.Reply.Endpoint != addr(a) {
		t.Fatalf("in-flight request on the drained endpoint: %+v %v", slow, slowErr)
	}
}

var modeRE = regexp.MustCompile(`falling back to plain upstreams`)

// TestFallbackWithoutLua runs with the Lua module missing (an empty
// modules directory): the controller falls back to plain upstreams, says
// so once, and endpoint changes then reload with reason "endpoints".
func TestFallbackWithoutLua(t *testing.T) {
	t.Parallel()
	ab := startBackends(t, "web", 2)
	a, b := ab[0], ab[1]
	c := startController(t, map[string]string{
		"app.yaml":   ingressClass + svcOnlyYAML("default", "web") + ingressYAML("default", "a", "a.test", "Prefix / web"),
		"slice.yaml": sliceYAML("default", "web", addr(a)),
	}, "--nginx-modules-dir", t.TempDir())
	if c.Metric("causeway_dataplane_mode", `mode="plain"`) != 1 {
		t.Fatal("causeway_dataplane_mode must say plain")
	}
	if n := len(modeRE.FindAllString(c.log.String(), -1)); n != 1 {
		t.Fatalf("the fallback must be logged exactly once, got %d", n)
	}
	c.WriteManifest("slice.yaml", sliceYAML("default", "web", addr(b)))
	eventually(t, 5*time.Second, func() error {
		if got := keys(servedBy(c, "a.test", 4)); got != addr(b) {
			return fmt.Errorf("served by %s", got)
		}
		if c.Metric("causeway_nginx_reloads_total", `reason="endpoints"`) != 1 {
			return fmt.Errorf("no endpoints reload counted")
		}
		return nil
	})
}

// TestMethodsThroughGeneratedConfig checks, through the rendered config,
// that a Service annotation picks the method and that the hooks each
// method needs are in place: sticky pins a client by cookie; switching to
// least_conn adds the log hook (one reload) and traffic keeps flowing.
// The methods' distributions are tested in internal/balancer.
func TestMethodsThroughGeneratedConfig(t *testing.T) {
	t.Parallel()
	ab := startBackends(t, "web", 2)
	a, b := ab[0], ab[1]
	svc := func(annotations string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: default\n  annotations: {%s}\nspec:\n  ports: [{name: http, port: 80}]\n---\n", annotations)
	}
	c := startController(t, map[string]string{
		"app.yaml":   ingressClass + ingressYAML("default", "a", "a.test", "Prefix / web"),
		"svc.yaml":   svc(`causeway.io/load-balance: sticky, causeway.io/sticky-cookie: route`),
		"slice.yaml": sliceYAML("default", "web", addr(a), addr(b)),
	})
	// Sticky: the first answer sets the cookie; with it, every request
	// lands on the same endpoint.
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort)))
		}}}
	req, _ := http.NewRequest(http.MethodGet, "http://a.test/", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "route" {
			cookie = ck
		}
	}
	if cookie == nil {
		t.Fatal("sticky backend did not set the route cookie")
	}
	pinned := resp.Header.Get("X-Echo-Endpoint")
	for i := 0; i < 10; i++ {
		req, _ := http.NewRequest(http.MethodGet, "http://a.test/", nil)
		req.AddCookie(cookie)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Echo-Endpoint"); got != pinned {
			t.Fatalf("request %d with the cookie went to %s, pinned to %s", i, got, pinned)
		}
	}

	// least_conn: with one endpoint slow, concurrent requests avoid it.
	c.WriteManifest("svc.yaml", svc(`causeway.io/load-balance: least_conn`))
	eventually(t, 5*time.Second, func() error {
		if c.Metric("causeway_nginx_reloads_total", `reason="config"`) < 1 {
			return fmt.Errorf("switching to least_conn adds the log hook, which reloads")
		}
		return nil
	})
	// With the log hook in place, in-flight counts are released and
	// requests keep flowing to both endpoints.
	if got := servedBy(c, "a.test", 30); got[addr(a)] == 0 || got[addr(b)] == 0 || got[addr(a)]+got[addr(b)] != 30 {
		t.Fatalf("least_conn: served %v, want all 30 on the two endpoints", got)
	}
}
