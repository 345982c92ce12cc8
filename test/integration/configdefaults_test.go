package integration

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/spec"
)

// TestConfigDefaultsTableAgainstNginx sends the rows of ingress-nginx's
// per-location ConfigMap keys (force-ssl-redirect, preserve-trailing-slash,
// custom-http-errors) to nginx, all served by one controller.
func TestConfigDefaultsTableAgainstNginx(t *testing.T) {
	t.Parallel()
	runAnnotationTable(t, spec.ConfigDefaultsTable)
}

// TestConfigDefaultsAgainstNginx: the ConfigMap's proxy-buffering,
// proxy-next-upstream, service-upstream and custom-http-errors take effect
// as defaults on real nginx, and an Ingress's annotation of the same name
// overrides each.
func TestConfigDefaultsAgainstNginx(t *testing.T) {
	t.Parallel()
	app, errs, fallback := startBackend(t, "app"), startBackend(t, "errors"), startBackend(t, "fallback")
	// flaky's two endpoints share a port: one answers 503 to everything.
	good := startBackend(t, "flaky")
	bad := startBackendOn(t, loopbackIP(), good.Port, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	// by-ip listens on the cluster IP and port of Service "ip", whose
	// EndpointSlice lists by-endpoints.
	byIP, byEndpoints := startBackend(t, "by-ip"), startBackend(t, "by-endpoints")

	m := ingressClass + serviceYAML("default", "app", 80, app) + serviceYAML("default", "errors", 80, errs) +
		serviceYAML("default", "fallback", 80, fallback) + flakyServiceYAML(good, bad) + clusterIPServiceYAML(byIP, byEndpoints) +
		ingressYAML("default", "buffered", "buffered.test", "Prefix / app") +
		annotatedIngressYAML("unbuffered", "unbuffered.test", "app", "proxy-buffering", "off") +
		ingressYAML("default", "retried", "retried.test", "Prefix / flaky") +
		annotatedIngressYAML("not-retried", "not-retried.test", "flaky", "proxy-next-upstream", "error timeout") +
		// The cluster IP's port is the Service port, which the Ingresses
		// name.
		strings.ReplaceAll(ingressYAML("default", "via-ip", "via-ip.test", "Prefix / ip")+
			annotatedIngressYAML("via-endpoints", "via-endpoints.test", "ip", "service-upstream", "false"),
			"port: {number: 80}", "port: {name: http}") +
		ingressYAML("default", "pages", "pages.test", "Prefix / app") +
		annotatedIngressYAML("own-pages", "own-pages.test", "app", "custom-http-errors", "503") +
		configMapYAML(map[string]string{
			// limit-rate slows only buffered responses, which shows
			// whether proxy-buffering is on.
			"proxy-buffering": "on", "limit-rate": "2048",
			"proxy-next-upstream": "error timeout http_503",
			"service-upstream":    "true",
			"custom-http-errors":  "404",
		})
	c := startController(t, map[string]string{"defaults.yaml": m}, "--default-backend-service", "default/errors")
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))

	t.Run("proxy-buffering", func(t *testing.T) {
		path := "/?pad=" + strings.Repeat("x", 7000) // the echo's reply repeats the URI
		timed := func(host string) time.Duration {
			start := time.Now()
			if s, err := getFrom("127.0.0.1", addr, host, path, nil); err != nil || s.Status != 200 {
				t.Fatalf("%s: status %d, %v", host, s.Status, err)
			}
			return time.Since(start)
		}
		// 2k a second: about 7k takes seconds when buffered.
		if d := timed("buffered.test"); d < 1500*time.Millisecond {
			t.Errorf("the ConfigMap's proxy-buffering on: about 7k in %v; limit-rate 2048 did not slow it, so it was not buffered", d)
		}
		if d := timed("unbuffered.test"); d > time.Second {
			t.Errorf("proxy-buffering off on the Ingress: about 7k in %v, want under 1s (not buffered, so not slowed)", d)
		}
	})
	t.Run("proxy-next-upstream", func(t *testing.T) {
		count := func(host string) (ok, unavailable int) {
			for range 10 {
				switch r := c.Get(host, "/"); r.Status {
				case 200:
					ok++
				case 503:
					unavailable++
				default:
					t.Fatalf("%s: status %d", host, r.Status)
				}
			}
			return ok, unavailable
		}
		if ok, u := count("retried.test"); u > 0 {
			t.Errorf("the ConfigMap's proxy-next-upstream with http_503: %d of 10 answered 503, want every one retried (%d 200s)", u, ok)
		}
		if ok, u := count("not-retried.test"); u == 0 {
			t.Errorf("proxy-next-upstream \"error timeout\" on the Ingress: none of 10 answered 503 (%d 200s), want the 503 endpoint's answers passed on", ok)
		}
	})
	t.Run("service-upstream", func(t *testing.T) {
		for host, want := range map[string]string{"via-ip.test": "by-ip", "via-endpoints.test": "by-endpoints"} {
			if r := c.Get(host, "/"); r.Status != 200 || r.Reply.Service != want {
				t.Errorf("%s: status %d from %q, want 200 from %s", host, r.Status, r.Reply.Service, want)
			}
		}
	})
	t.Run("custom-http-errors", func(t *testing.T) {
		for _, tc := range []struct {
			name, host, path string
			status           int
			service, code    string
		}{
			{"the ConfigMap's list", "pages.test", "/_status/404/x", 200, "errors", "404"},
			// Not 503, which the ConfigMap's proxy-next-upstream retries:
			// with one endpoint Angie then answers its own 503 where nginx
			// passes the endpoint's (docs/angie.md).
			{"a status it does not list", "pages.test", "/_status/502/x", 502, "app", ""},
			{"the annotation's list replaces it", "own-pages.test", "/_status/404/x", 404, "app", ""},
			{"the annotation's own status", "own-pages.test", "/_status/503/x", 200, "errors", "503"},
			{"the default backend's own 404, for an unknown host", "unknown.test", "/_status/404/x", 200, "errors", "404"},
		} {
			r := c.Get(tc.host, tc.path)
			if r.Status != tc.status || r.Reply.Service != tc.service || r.Reply.Headers["X-Code"] != tc.code {
				t.Errorf("%s: %s%s: status %d from %q with X-Code %q; want %d from %s with %q",
					tc.name, tc.host, tc.path, r.Status, r.Reply.Service, r.Reply.Headers["X-Code"], tc.status, tc.service, tc.code)
			}
		}
	})
}

// startBackendOn runs h on ip:port.
func startBackendOn(t *testing.T, ip string, port int, h http.Handler) *backend {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{IP: ip, Port: port, srv: &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: h}}
	go b.srv.Serve(l)
	t.Cleanup(func() { b.srv.Close() })
	return b
}

// flakyServiceYAML is Service "flaky" with the endpoints good and bad.
func flakyServiceYAML(good, bad *backend) string {
	return serviceYAML("default", "flaky", 80, good, bad)
}

// clusterIPServiceYAML is Service "ip" whose cluster IP and port are
// byIP's, and whose one endpoint is byEndpoints.
func clusterIPServiceYAML(byIP, byEndpoints *backend) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: ip, namespace: default}
spec:
  clusterIP: %s
  ports: [{name: http, port: %d}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: ip-1
  namespace: default
  labels: {kubernetes.io/service-name: ip}
addressType: IPv4
ports: [{name: http, port: %d, protocol: TCP}]
endpoints:
  - addresses: [%q]
    conditions: {ready: true}
---
`, byIP.IP, byIP.Port, byEndpoints.Port, byEndpoints.IP)
}
