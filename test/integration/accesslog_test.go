package integration

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/test/harness"
)

// upstreamInfoRE parses a line of ingress-nginx's default log format
// ("upstreaminfo"), as existing log parsers do.
var upstreamInfoRE = regexp.MustCompile(`^(\S+) - (\S+) \[([^\]]+)\] "([^"]*)" (\d{3}) (\d+) "([^"]*)" "([^"]*)" (\d+) ([\d.]+) \[([^\]]*)\] \[([^\]]*)\] (\S+) (\S+) (\S+) (\S+) (\S+)$`)

// accessLogConfig is the controller's ConfigMap with the given keys, each
// value JSON-quoted (which YAML reads as a double-quoted string).
func accessLogConfig(kv ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config, namespace: causeway}\ndata:\n")
	for i := 0; i+1 < len(kv); i += 2 {
		v, _ := json.Marshal(kv[i+1])
		fmt.Fprintf(&b, "  %s: %s\n", kv[i], v)
	}
	return b.String()
}

// do sends one request with headers through the controller's HTTP port.
func (c *controller) getWith(host, path string, header map[string]string) result {
	c.t.Helper()
	return c.do(harness.Request{Host: host, Path: path, Header: header})
}

// logLine waits for the line of the controller's output that contains
// marker and matches ok.
func (c *controller) logLine(marker string, ok func(string) bool) string {
	c.t.Helper()
	var found string
	eventually(c.t, 5*time.Second, func() error {
		for _, l := range strings.Split(c.log.String(), "\n") {
			if strings.Contains(l, marker) && ok(l) {
				found = l
				return nil
			}
		}
		return fmt.Errorf("no access log line with %q", marker)
	})
	return found
}

// notLogged waits for the line of a later request, then a little longer
// (nginx logs after it answers), and fails if any line contains marker.
func (c *controller) notLogged(marker, later string) {
	c.t.Helper()
	c.logLine(later, func(string) bool { return true })
	time.Sleep(300 * time.Millisecond)
	for _, l := range strings.Split(c.log.String(), "\n") {
		if strings.Contains(l, marker) {
			c.t.Errorf("%q was logged: %s", marker, l)
		}
	}
}

func accessLogManifests(t *testing.T, config string) map[string]string {
	b := startBackend(t, "web")
	m := map[string]string{"app.yaml": ingressClass + serviceYAML("shop", "web", 80, b) +
		ingressYAML("shop", "storefront", "log.test", "Prefix / web")}
	if config != "" {
		m["config.yaml"] = config
	}
	return m
}

// TestAccessLogDefaultFormat: with no ConfigMap, each request is logged in
// ingress-nginx's default format, naming the upstream as ingress-nginx
// does and carrying the client's X-Request-ID (else a generated one); the
// controller's own default backend is not logged.
func TestAccessLogDefaultFormat(t *testing.T) {
	t.Parallel()
	c := startController(t, accessLogManifests(t, ""))
	if r := c.getWith("log.test", "/first?q=1", map[string]string{"X-Request-ID": "req-abc-123", "User-Agent": "agent/1", "Referer": "http://r.test/"}); r.Status != 200 {
		t.Fatalf("status %d", r.Status)
	}
	line := c.logLine(`"GET /first?q=1 HTTP/1.1"`, upstreamInfoRE.MatchString)
	m := upstreamInfoRE.FindStringSubmatch(line)
	for i, want := range map[int]string{2: "-", 5: "200", 7: "http://r.test/", 8: "agent/1", 11: "shop-web-80", 12: "", 16: "200", 17: "req-abc-123"} {
		if m[i] != want {
			t.Errorf("field %d = %q, want %q in %s", i, m[i], want, line)
		}
	}
	if !strings.HasPrefix(m[1], "127.") || !strings.HasPrefix(m[13], "127.") {
		t.Errorf("remote or upstream address in %s", line)
	}
	c.getWith("log.test", "/second", nil)
	m = upstreamInfoRE.FindStringSubmatch(c.logLine(`"GET /second HTTP/1.1"`, upstreamInfoRE.MatchString))
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(m[17]) {
		t.Errorf("generated request ID %q, want nginx's $request_id", m[17])
	}
	if r := c.getWith("unknown.test", "/to-the-default", nil); r.Status != 404 {
		t.Fatalf("default: status %d", r.Status)
	}
	c.getWith("log.test", "/after-default", nil)
	c.notLogged("/to-the-default", "/after-default")
}

// TestAccessLogJSON: a JSON format with escape=json gives lines that parse
// as JSON even when the client sends quotes and backslashes; the
// ingress-nginx variables name the Ingress, Service and path;
// skip-access-log-urls drops exactly the listed paths; and the default
// backend is logged when enable-access-log-for-default-backend is true.
func TestAccessLogJSON(t *testing.T) {
	t.Parallel()
	format := `{"uri":"$uri","ua":"$http_user_agent","ns":"$namespace","ing":"$ingress_name","svc":"$service_name","port":"$service_port","path":"$location_path","up":"$proxy_upstream_name","id":"$req_id","status":$status}`
	m := accessLogManifests(t, accessLogConfig(
		"log-format-upstream", format,
		"log-format-escape-json", "true",
		"skip-access-log-urls", "/healthz,/ready",
		"enable-access-log-for-default-backend", "true"))
	// log2.test shares log.test's server block (the variables come from
	// maps on $host); quiet.test turns its log off by annotation.
	m["more.yaml"] = ingressYAML("shop", "other", "log2.test", "Prefix / web") +
		strings.Replace(ingressYAML("shop", "quiet", "quiet.test", "Prefix / web"), "metadata: {name: quiet, namespace: shop}",
			"metadata: {name: quiet, namespace: shop, annotations: {nginx.ingress.kubernetes.io/enable-access-log: \"false\"}}", 1) +
		strings.Replace(ingressYAML("shop", "regex", "regex.test", "ImplementationSpecific /v[0-9]+/items$ web"), "metadata: {name: regex, namespace: shop}",
			"metadata: {name: regex, namespace: shop, annotations: {nginx.ingress.kubernetes.io/use-regex: \"true\"}}", 1)
	c := startController(t, m)
	ua := `evil" \"agent\\ "}, {"x": 1` + "\t\u00e9"
	c.getWith("log.test", "/json", map[string]string{"User-Agent": ua, "X-Request-ID": `id"\`})
	type entry struct{ URI, UA, NS, Ing, Svc, Port, Path, Up, ID string }
	var e entry
	c.logLine(`/json`, func(l string) bool {
		e = entry{}
		return json.Unmarshal([]byte(l), &e) == nil && e.URI == "/json"
	})
	want := entry{URI: "/json", UA: ua, NS: "shop", Ing: "storefront", Svc: "web", Port: "80", Path: "/", Up: "shop-web-80", ID: `id"\`}
	if e != want {
		t.Errorf("entry %+v, want %+v", e, want)
	}
	if shared, _ := filepath.Glob(layout.Dir(c.StateDir).Path(filepath.Join(layout.ServersDir, "_shared-*.conf"))); len(shared) != 1 {
		t.Errorf("shared server files %v, want log.test and log2.test in one", shared)
	}
	c.getWith("log2.test", "/json", nil)
	c.logLine(`"uri":"/json"`, func(l string) bool {
		e = entry{}
		return json.Unmarshal([]byte(l), &e) == nil && e.Ing == "other"
	})
	if want := (entry{URI: "/json", UA: "Go-http-client/1.1", NS: "shop", Ing: "other", Svc: "web", Port: "80", Path: "/", Up: "shop-web-80", ID: e.ID}); e != want || len(e.ID) != 32 {
		t.Errorf("log2.test entry %+v, want %+v", e, want)
	}
	c.getWith("regex.test", "/v2/items", nil)
	if l := c.logLine(`"uri":"/v2/items"`, func(string) bool { return true }); !strings.Contains(l, `"path":"/v[0-9]+/items$"`) {
		t.Errorf("regex location: %s", l)
	}
	c.getWith("quiet.test", "/quiet", nil)
	c.getWith("log.test", "/healthz", nil)
	c.getWith("log.test", "/ready", nil)
	c.getWith("log.test", "/healthz/deep", nil)
	c.getWith("other.test", "/default-logged", nil)
	c.logLine(`"uri":"/healthz/deep"`, func(string) bool { return true })
	def := c.logLine(`"uri":"/default-logged"`, func(string) bool { return true })
	if !strings.Contains(def, `"up":"upstream-default-backend"`) || !strings.Contains(def, `"status":404`) {
		t.Errorf("default backend line %s", def)
	}
	c.getWith("log.test", "/marker", nil)
	c.notLogged(`"uri":"/healthz"`, `"uri":"/marker"`)
	c.notLogged(`"uri":"/ready"`, `"uri":"/marker"`)
	c.notLogged(`"uri":"/quiet"`, `"uri":"/marker"`)
}

// TestAccessLogEveryVariable: a format that prints every variable the
// list allows (docs/configuration.md) is taken without a Problem, nginx
// accepts the configuration, and a request is logged with it.
func TestAccessLogEveryVariable(t *testing.T) {
	t.Parallel()
	names := slices.Sorted(maps.Keys(model.LogVariables))
	format := "every"
	for _, n := range names {
		format += " " + n + "=$" + n
	}
	c := startController(t, accessLogManifests(t, accessLogConfig("log-format-upstream", format)))
	c.getWith("log.test", "/every-variable", nil)
	line := c.logLine("/every-variable", func(l string) bool { return strings.HasPrefix(l, "every ") })
	for _, want := range []string{"pid=", "uri=/every-variable ", "host=log.test ", "namespace=shop ", "status=200 "} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
	if strings.Contains(c.log.String(), "log-format-upstream") {
		t.Errorf("a Problem for log-format-upstream:\n%s", c.log.String())
	}
}

// TestAccessLogRefusedFormats: a format with a variable outside the list,
// or one that tries to end nginx's quoted format, is a Problem on the
// ConfigMap and the default format stays (nginx accepts the result).
func TestAccessLogRefusedFormats(t *testing.T) {
	t.Parallel()
	c := startController(t, accessLogManifests(t, ""))
	for i, bad := range []string{
		`$remote_addr $http_cookie`,
		`$remote_addr ${status}`,
		`x'; access_log /tmp/causeway-pwned; '`,
		`a\' b`,
		"a\n$status",
		`$remote_addr "$request" $ssl_client_raw_cert`,
	} {
		c.WriteManifest("config.yaml", accessLogConfig("log-format-upstream", bad))
		eventually(t, 5*time.Second, func() error {
			if n := strings.Count(c.log.String(), "log-format-upstream"); n < i+1 {
				return fmt.Errorf("%q: %d Problems for log-format-upstream, want %d", bad, n, i+1)
			}
			return nil
		})
		path := fmt.Sprintf("/refused-%d", i)
		c.getWith("log.test", path, nil)
		m := upstreamInfoRE.FindStringSubmatch(c.logLine(`"GET `+path+` HTTP/1.1"`, upstreamInfoRE.MatchString))
		if m[11] != "shop-web-80" {
			t.Errorf("%q: upstream %q", bad, m[11])
		}
	}
	if strings.Contains(c.log.String(), "pwned\" ") || c.Metric("causeway_nginx_reloads_total", `result="failure"`) != 0 {
		t.Errorf("a refused format reached nginx")
	}
}

// TestAccessLogParams: with access-log-params, lines wait in a buffer and
// still arrive, at the latest after flush.
func TestAccessLogParams(t *testing.T) {
	t.Parallel()
	c := startController(t, accessLogManifests(t, accessLogConfig("access-log-params", "buffer=64k flush=1s")))
	if !strings.Contains(c.renderedConfig(), "access_log /dev/stderr causeway buffer=64k flush=1s;") {
		t.Fatal("access_log without the buffer")
	}
	c.getWith("log.test", "/buffered-line", nil)
	c.logLine("/buffered-line", func(string) bool { return true })
}
