package integration

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/source/files"
	"github.com/causeway/causeway/test/echo"
	"github.com/causeway/causeway/test/harness"
)

// do sends one request to the controller's HTTP (or HTTPS) port.
func (c *controller) do(r harness.Request) result {
	c.t.Helper()
	if r.Scheme == "" {
		r.Scheme = "http"
	}
	port := c.HTTPPort
	if r.Scheme == "https" {
		port = c.HTTPSPort
	}
	res, err := harness.Do(net.JoinHostPort(c.IP, strconv.Itoa(port)), r)
	if err != nil {
		c.t.Fatalf("%s %s://%s%s: %v", r.Method, r.Scheme, r.Host, r.Path, err)
	}
	return res
}

// padded is a path whose echo reply is well over 1000 bytes (the reply
// repeats the request URI); "/" gives a reply of a few hundred.
var padded = "/?pad=" + strings.Repeat("x", 1200)

// TestCompression: gzip and brotli apply to the listed types above the
// minimum length, for clients that accept them, and nothing else.
func TestCompression(t *testing.T) {
	t.Parallel()
	brotli := optionalModule(t, "ngx_http_brotli_filter_module.so")
	be := startBackend(t, "web")
	cm := map[string]string{"use-gzip": "true", "gzip-min-length": "1000", "gzip-types": "application/json text/css",
		"enable-brotli": strconv.FormatBool(brotli), "brotli-min-length": "1000", "brotli-types": "application/json"}
	c := startController(t, map[string]string{
		"app.yaml":    ingressClass + serviceYAML("default", "web", 80, be) + ingressYAML("default", "web", "gz.test", "Prefix / web"),
		"config.yaml": configMapYAML(cm),
	})
	get := func(path, accept string) result {
		return c.do(harness.Request{Host: "gz.test", Path: path, Header: map[string]string{"Accept-Encoding": accept}})
	}

	big := get(padded, "gzip")
	if enc := big.Header.Get("Content-Encoding"); big.Status != 200 || enc != "gzip" {
		t.Fatalf("a large JSON reply: status %d, Content-Encoding %q; want 200 gzip", big.Status, enc)
	}
	zr, err := gzip.NewReader(strings.NewReader(big.Body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var reply echo.Reply
	if err := json.Unmarshal(plain, &reply); err != nil || reply.URI != padded {
		t.Fatalf("the gzipped reply does not decode to the echo's JSON: %v, URI %.40q", err, reply.URI)
	}
	if v := big.Header.Get("Vary"); !strings.Contains(v, "Accept-Encoding") {
		t.Errorf("Vary %q, want Accept-Encoding", v)
	}
	if small := get("/", "gzip"); small.Status != 200 || small.Header.Get("Content-Encoding") != "" || small.Reply.Service != "web" {
		t.Errorf("a reply below gzip-min-length: status %d, Content-Encoding %q; want 200 and none", small.Status, small.Header.Get("Content-Encoding"))
	}
	if r := get(padded, "identity"); r.Header.Get("Content-Encoding") != "" || r.Reply.URI != padded {
		t.Errorf("a client that does not accept gzip got Content-Encoding %q", r.Header.Get("Content-Encoding"))
	}
	if brotli {
		if r := get(padded, "br"); r.Status != 200 || r.Header.Get("Content-Encoding") != "br" || len(r.Body) >= len(padded) {
			t.Errorf("a large JSON reply for a brotli client: status %d, Content-Encoding %q, %d bytes; want 200, br, compressed",
				r.Status, r.Header.Get("Content-Encoding"), len(r.Body))
		}
		if r := get("/", "br"); r.Header.Get("Content-Encoding") != "" || r.Reply.Service != "web" {
			t.Errorf("a reply below brotli-min-length got Content-Encoding %q", r.Header.Get("Content-Encoding"))
		}
	}

	// A type not listed is not compressed.
	cm["gzip-types"], cm["brotli-types"] = "text/plain", "text/plain"
	c.WriteManifest("config.yaml", configMapYAML(cm))
	eventually(t, 10*time.Second, func() error {
		for _, enc := range []string{"gzip", "br"} {
			if r := get(padded, enc); r.Header.Get("Content-Encoding") != "" || r.Reply.URI != padded {
				return fmt.Errorf("JSON with %s types text/plain: Content-Encoding %q", enc, r.Header.Get("Content-Encoding"))
			}
		}
		return nil
	})
}

// TestBrotliWithoutModule: without the brotli module, enable-brotli is a
// Problem and brotli stays off, while everything else is served.
func TestBrotliWithoutModule(t *testing.T) {
	t.Parallel()
	be := startBackend(t, "web")
	// A modules directory without brotli (and without Lua: plain mode).
	c := startController(t, map[string]string{
		"app.yaml":    ingressClass + serviceYAML("default", "web", 80, be) + ingressYAML("default", "web", "br.test", "Prefix / web"),
		"config.yaml": configMapYAML(map[string]string{"enable-brotli": "true", "brotli-min-length": "0"}),
	}, "--nginx-modules-dir", t.TempDir(), "--dataplane", "plain")
	r := c.do(harness.Request{Host: "br.test", Path: padded, Header: map[string]string{"Accept-Encoding": "br"}})
	if r.Status != 200 || r.Header.Get("Content-Encoding") != "" || r.Reply.Service != "web" {
		t.Fatalf("status %d, Content-Encoding %q; want 200 uncompressed", r.Status, r.Header.Get("Content-Encoding"))
	}
	eventually(t, 5*time.Second, func() error {
		if !strings.Contains(c.log.String(), `enable-brotli`) {
			return fmt.Errorf("no Problem about enable-brotli in the log")
		}
		return nil
	})
}

var requestIDSyntax = regexp.MustCompile(`^[0-9a-f]{32}$`)

// TestRequestHandlingDefaults: ingress-nginx's defaults on the wire.
func TestRequestHandlingDefaults(t *testing.T) {
	t.Parallel()
	be := startBackend(t, "web")
	c := startController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("default", "web", 80, be) + tlsSecretYAML(t, "default", "tls", "rq.test", 0) +
			wwwIngressYAML("rq.test"),
	})
	// Request IDs: generated (32 hex digits) and different per request,
	// or the client's passed on.
	first, second := c.GetTLS("rq.test", "/").Reply.Headers["X-Request-ID"], c.GetTLS("rq.test", "/").Reply.Headers["X-Request-ID"]
	if !requestIDSyntax.MatchString(first) || first == second {
		t.Errorf("X-Request-ID %q then %q; want 32 hex digits, new per request", first, second)
	}
	sent := c.do(harness.Request{Scheme: "https", Host: "rq.test", Path: "/", Header: map[string]string{"X-Request-ID": "client-id-42"}})
	if got := sent.Reply.Headers["X-Request-ID"]; got != "client-id-42" {
		t.Errorf("the client's X-Request-ID reached the backend as %q", got)
	}
	// HTTPS redirects and the www. twin's use 308.
	if r := c.Get("rq.test", "/a"); r.Status != 308 || r.Location != fmt.Sprintf("https://rq.test:%d/a", c.HTTPSPort) {
		t.Errorf("HTTPS redirect: %d %q, want 308", r.Status, r.Location)
	}
	if r := c.Get("www.rq.test", "/a"); r.Status != 308 {
		t.Errorf("www. redirect: %d, want 308", r.Status)
	}
	// No Server header at all (server-tokens false, headers-more), on
	// proxied answers and on nginx's own; without headers-more, the
	// product without its version.
	want := []string(nil)
	if !optionalModule(t, "ngx_http_headers_more_filter_module.so") {
		want = []string{serverProduct()}
	}
	if s := c.GetTLS("rq.test", "/").Header.Values("Server"); !slices.Equal(s, want) {
		t.Errorf("Server %q, want %q", s, want)
	}
	if s := c.Get("nowhere.rq.test", "/").Header.Values("Server"); !slices.Equal(s, want) {
		t.Errorf("nginx's own 404: Server %q, want %q", s, want)
	}
	// A 4k header fits the default 4 8k buffers; 9k does not.
	if r := c.do(harness.Request{Scheme: "https", Host: "rq.test", Path: "/", Header: map[string]string{"X-Big": strings.Repeat("b", 4000)}}); r.Status != 200 {
		t.Errorf("a 4k header: status %d, want 200", r.Status)
	}
	if r := c.do(harness.Request{Scheme: "https", Host: "rq.test", Path: "/", Header: map[string]string{"X-Big": strings.Repeat("b", 9000)}}); r.Status != 400 && r.Status != 494 {
		t.Errorf("a 9k header: status %d, want 400 or 494", r.Status)
	}
}

// TestRequestHandlingKeys: http-redirect-code, server-tokens,
// large-client-header-buffers and generate-request-id change what nginx
// does on the wire.
func TestRequestHandlingKeys(t *testing.T) {
	t.Parallel()
	be := startBackend(t, "web")
	cm := map[string]string{"http-redirect-code": "301", "server-tokens": "true", "large-client-header-buffers": "2 2k",
		"generate-request-id": "false", "keep-alive": "5", "client-header-timeout": "5", "error-log-level": "warn",
		"upstream-keepalive-timeout": "30", "upstream-keepalive-requests": "100", "max-worker-open-files": "8192"}
	c := startController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("default", "web", 80, be) + tlsSecretYAML(t, "default", "tls", "rq.test", 0) +
			wwwIngressYAML("rq.test"),
		"config.yaml": configMapYAML(cm),
	})
	if r := c.Get("rq.test", "/a"); r.Status != 301 || r.Location != fmt.Sprintf("https://rq.test:%d/a", c.HTTPSPort) {
		t.Errorf("HTTPS redirect: %d %q, want 301", r.Status, r.Location)
	}
	if r := c.Get("www.rq.test", "/a"); r.Status != 301 {
		t.Errorf("www. redirect: %d, want 301", r.Status)
	}
	if s := c.GetTLS("rq.test", "/").Header.Get("Server"); !strings.HasPrefix(s, serverProduct()+"/") {
		t.Errorf("Server %q, want %s/VERSION", s, serverProduct())
	}
	if r := c.GetTLS("rq.test", "/"); r.Reply.Headers["X-Request-ID"] != "" {
		t.Errorf("generate-request-id false: the backend got X-Request-ID %q", r.Reply.Headers["X-Request-ID"])
	}
	sent := c.do(harness.Request{Scheme: "https", Host: "rq.test", Path: "/", Header: map[string]string{"X-Request-ID": "client-id-42"}})
	if got := sent.Reply.Headers["X-Request-ID"]; got != "client-id-42" {
		t.Errorf("the client's X-Request-ID reached the backend as %q", got)
	}
	// 2 2k: a 1.5k header fits, a 3k one does not.
	if r := c.do(harness.Request{Scheme: "https", Host: "rq.test", Path: "/", Header: map[string]string{"X-Big": strings.Repeat("b", 1500)}}); r.Status != 200 {
		t.Errorf("a 1.5k header: status %d, want 200", r.Status)
	}
	if r := c.do(harness.Request{Scheme: "https", Host: "rq.test", Path: "/", Header: map[string]string{"X-Big": strings.Repeat("b", 3000)}}); r.Status != 400 && r.Status != 494 {
		t.Errorf("a 3k header: status %d, want 400 or 494", r.Status)
	}
	// The rendered configuration carries the other keys.
	conf, err := os.ReadFile(filepath.Join(c.StateDir, "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"keepalive_timeout 5s;", "client_header_timeout 5s;", "error_log stderr warn;", "worker_rlimit_nofile 8192;"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
}

// wwwIngressYAML serves host over TLS (secret "tls") with its www. twin
// redirecting to it.
func wwwIngressYAML(host string) string {
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/from-to-www-redirect: "true"}
spec:
  ingressClassName: causeway
  tls: [{hosts: [%[1]q], secretName: tls}]
  rules:
  - host: %[1]q
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
`, host)
}

// TestCompressionAndRequestKeysAtTheirBounds renders the keys of both
// areas at the ends of what they accept, on both data planes with the
// brotli module, and nginx -t must accept each configuration.
func TestCompressionAndRequestKeysAtTheirBounds(t *testing.T) {
	t.Parallel()
	requireModule(t, "ngx_http_brotli_filter_module.so")
	mods := dataPlane.modules
	low := map[string]string{"use-gzip": "true", "gzip-level": "1", "gzip-min-length": "0", "gzip-types": "text/html",
		"enable-brotli": "true", "brotli-level": "0", "brotli-min-length": "0", "brotli-types": "*",
		"keep-alive": "0", "keep-alive-requests": "1", "client-header-buffer-size": "128", "large-client-header-buffers": "1 1k",
		"client-header-timeout": "1ms", "client-body-timeout": "1ms", "http-redirect-code": "302", "server-tokens": "true",
		"generate-request-id": "false", "upstream-keepalive-timeout": "1ms", "upstream-keepalive-requests": "1",
		"max-worker-connections": "64", "max-worker-open-files": "1024", "error-log-level": "debug"}
	high := map[string]string{"use-gzip": "true", "gzip-level": "9", "gzip-min-length": "1g",
		"gzip-types":    "A/B " + strings.Repeat("x", 22) + "/" + strings.Repeat("y", 23) + " application/vnd.a+b-c_d.e^f!g&h",
		"enable-brotli": "true", "brotli-level": "11", "brotli-min-length": "1g", "brotli-types": strings.Join(defaultTypes(100), ","),
		"keep-alive": "24h", "keep-alive-requests": "1073741824", "client-header-buffer-size": "1m", "large-client-header-buffers": "128 1m",
		"client-header-timeout": "24h", "client-body-timeout": "24h", "http-redirect-code": "307",
		"upstream-keepalive-timeout": "24h", "upstream-keepalive-requests": "1073741824",
		"max-worker-connections": "0", "max-worker-open-files": "0", "error-log-level": "emerg"}
	for name, cm := range map[string]map[string]string{"low": low, "high": high} {
		for _, plane := range dataPlanes {
			t.Run(name+"/"+plane, func(t *testing.T) {
				dir := t.TempDir()
				manifests := ingressClass + serviceYAML("ns", "svc", 80, &backend{IP: "127.0.0.2", Port: 8080}) +
					wwwIngressYAML("b.test") + configMapYAML(cm)
				manifests = strings.ReplaceAll(manifests, "namespace: default", "namespace: ns")
				if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(manifests), 0o644); err != nil {
					t.Fatal(err)
				}
				snap, err := files.Load(dir)
				if err != nil {
					t.Fatal(err)
				}
				m, problems := build.Build(snap, build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller"},
					ConfigMap: "causeway/config", BrotliAvailable: true})
				for _, p := range problems {
					if p.Object.Kind == "ConfigMap" {
						t.Fatalf("problem: %v", p)
					}
				}
				params := renderParamsFor(plane)
				params.BrotliModule = filepath.Join(mods, "ngx_http_brotli_filter_module.so")
				params.OpenFilesLimit = 1 << 20
				res, err := render.Render(m, params)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(res.Files["nginx.conf"]), "brotli on;") {
					t.Fatal("brotli is not on")
				}
				nginxTest(t, res.Files, m)
			})
		}
	}
}

// defaultTypes returns n distinct MIME types.
func defaultTypes(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("application/x-type-%d", i)
	}
	return out
}
