package integration

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/test/harness"
)

// metricsManifests: two Ingresses in one namespace, one of them carrying
// a location-level redirect, so that series differ by host, path,
// service, status and method.
func metricsManifests(t *testing.T) map[string]string {
	web, api := startBackend(t, "web"), startBackend(t, "api")
	redirect := strings.Replace(ingressYAML("shop", "old", "shop.metrics.test", "Prefix /old web"),
		"metadata: {name: old, namespace: shop}",
		"metadata: {name: old, namespace: shop, annotations: {nginx.ingress.kubernetes.io/permanent-redirect: \"https://example.com/new\"}}", 1)
	return map[string]string{"app.yaml": ingressClass + serviceYAML("shop", "web", 80, web) + serviceYAML("shop", "api", 80, api) +
		ingressYAML("shop", "storefront", "shop.metrics.test", "Prefix / web") +
		ingressYAML("shop", "backend", "api.metrics.test", "Prefix /api api") + redirect}
}

// TestRequestMetricsCountWhatWasSent sends a known mix of requests and
// checks that ingress-nginx's counter and histograms count exactly them,
// with ingress-nginx's labels.
func TestRequestMetricsCountWhatWasSent(t *testing.T) {
	t.Parallel()
	c := startController(t, metricsManifests(t))
	send := func(n int, r harness.Request, want int) {
		t.Helper()
		for range n {
			res := c.do(r)
			if res.Status != want {
				t.Fatalf("%s %s%s: status %d, want %d", r.Method, r.Host, r.Path, res.Status, want)
			}
		}
	}
	send(5, harness.Request{Method: "GET", Host: "shop.metrics.test", Path: "/"}, 200)
	send(2, harness.Request{Method: "GET", Host: "shop.metrics.test", Path: "/_status/503/x"}, 503)
	send(3, harness.Request{Method: "POST", Host: "api.metrics.test", Path: "/api/orders", Body: 1000}, 200)
	send(1, harness.Request{Method: "PATCH", Host: "api.metrics.test", Path: "/api/orders/1"}, 200)
	send(2, harness.Request{Method: "BREW", Host: "api.metrics.test", Path: "/api/pot"}, 200)
	send(4, harness.Request{Method: "GET", Host: "shop.metrics.test", Path: "/old/page"}, 301)
	send(2, harness.Request{Method: "GET", Host: "api.metrics.test", Path: "/elsewhere"}, 404)
	send(3, harness.Request{Method: "GET", Host: "unknown.metrics.test", Path: "/"}, 404)

	const total = 5 + 2 + 3 + 1 + 2 + 4 + 2
	eventually(t, 10*time.Second, func() error {
		if got := c.Metric("nginx_ingress_controller_requests"); got != total {
			return fmt.Errorf("nginx_ingress_controller_requests sums to %v, want %d", got, total)
		}
		return nil
	})
	page := c.scrape()
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"nginx_ingress_controller_requests", []string{`status="200"`, `method="GET"`, `path="/"`, `namespace="shop"`, `ingress="storefront"`, `service="web"`, `host="shop.metrics.test"`, `canary=""`}, 5},
		{"nginx_ingress_controller_requests", []string{`status="503"`, `ingress="storefront"`}, 2},
		{"nginx_ingress_controller_requests", []string{`status="200"`, `method="POST"`, `path="/api"`, `ingress="backend"`, `service="api"`, `host="api.metrics.test"`}, 3},
		{"nginx_ingress_controller_requests", []string{`method="PATCH"`, `ingress="backend"`}, 1},
		// A made-up method is counted, but under one name.
		{"nginx_ingress_controller_requests", []string{`method="OTHER"`, `ingress="backend"`}, 2},
		// A location that answers itself names no service.
		{"nginx_ingress_controller_requests", []string{`status="301"`, `path="/old"`, `ingress="old"`, `service=""`}, 4},
		// A path no rule matches on a defined host: the host's own 404.
		{"nginx_ingress_controller_requests", []string{`status="404"`, `ingress=""`, `host="api.metrics.test"`}, 2},
		// Undefined hosts are not counted (--metrics-per-undefined-host).
		{"nginx_ingress_controller_requests", []string{`host="unknown.metrics.test"`}, 0},
		// Every request has a duration, a request and a response size.
		{"nginx_ingress_controller_request_duration_seconds_count", nil, total},
		{"nginx_ingress_controller_request_size_count", nil, total},
		{"nginx_ingress_controller_response_size_count", nil, total},
		{"nginx_ingress_controller_bytes_sent_count", nil, total},
		{"nginx_ingress_controller_request_duration_seconds_bucket", []string{`le="+Inf"`}, total},
		// Only proxied requests have upstream times: not the redirects
		// nor the host's own 404s.
		{"nginx_ingress_controller_response_duration_seconds_count", nil, total - 4 - 2},
		{"nginx_ingress_controller_connect_duration_seconds_count", nil, total - 4 - 2},
		{"nginx_ingress_controller_header_duration_seconds_count", nil, total - 4 - 2},
		{"nginx_ingress_controller_ingress_upstream_latency_seconds_count", []string{`ingress="backend"`}, 6},
		// POST bodies of 1,000 bytes: each request is larger than the
		// largest default length bucket (100).
		{"nginx_ingress_controller_request_size_bucket", []string{`method="POST"`, `le="100"`}, 0},
		{"nginx_ingress_controller_request_size_bucket", []string{`method="POST"`, `le="+Inf"`}, 3},
		{"causeway_metrics_dropped_requests_total", nil, 0},
	} {
		got, err := harness.SumMetric(page, tc.name, tc.labels...)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	for _, l := range []string{`controller_class="causeway"`, `controller_pod="`, `controller_namespace="`} {
		if !strings.Contains(page, "nginx_ingress_controller_requests{"+l) && !strings.Contains(page, ","+l) {
			t.Errorf("no request metric carries %s", l)
		}
	}
	if sum, _ := harness.SumMetric(page, "nginx_ingress_controller_request_size_sum", `method="POST"`); sum < 3000 {
		t.Errorf("request_size_sum for 3 POSTs of 1,000 bytes = %v, want at least 3000", sum)
	}
}

// TestRequestMetricsFlags: the cardinality flags change the labels and
// what is counted, as ingress-nginx's do.
func TestRequestMetricsFlags(t *testing.T) {
	t.Parallel()
	c := startController(t, metricsManifests(t), "--metrics-per-host=false", "--report-status-classes",
		"--exclude-socket-metrics", "nginx_ingress_controller_bytes_sent,connect_duration_seconds")
	for range 3 {
		c.Get("shop.metrics.test", "/")
	}
	c.Get("unknown.metrics.test", "/")
	eventually(t, 10*time.Second, func() error {
		if got := c.Metric("nginx_ingress_controller_requests"); got != 4 {
			return fmt.Errorf("requests sum to %v, want 4 (without per-host, undefined hosts count too)", got)
		}
		return nil
	})
	page := c.scrape()
	if got, _ := harness.SumMetric(page, "nginx_ingress_controller_requests", `status="2xx"`, `ingress="storefront"`); got != 3 {
		t.Errorf("status class 2xx = %v, want 3", got)
	}
	for _, absent := range []string{"host=", "nginx_ingress_controller_bytes_sent", "nginx_ingress_controller_connect_duration_seconds", "ingress_upstream_latency_seconds"} {
		if strings.Contains(page, absent) {
			t.Errorf("%q appears in the metrics page", absent)
		}
	}
}

// TestRequestMetricsOff: --enable-metrics=false puts no log hook in the
// configuration and exports no request metric.
func TestRequestMetricsOff(t *testing.T) {
	t.Parallel()
	c := startController(t, metricsManifests(t), "--enable-metrics=false")
	c.Get("shop.metrics.test", "/")
	if page := c.scrape(); strings.Contains(page, "nginx_ingress_controller_requests") {
		t.Error("request metrics exported with --enable-metrics=false")
	}
	conf := c.renderedConfig()
	if strings.Contains(conf, "causeway.metrics") || strings.Contains(conf, "causeway_metrics") {
		t.Error("the configuration counts requests with --enable-metrics=false")
	}
}

// renderedConfig is nginx.conf and every server file, concatenated.
func (c *controller) renderedConfig() string {
	c.t.Helper()
	dir := layout.Dir(c.StateDir)
	var b strings.Builder
	names, _ := filepath.Glob(dir.Path(filepath.Join(layout.ServersDir, "*.conf")))
	for _, n := range append([]string{dir.MainConf()}, names...) {
		data, err := os.ReadFile(n)
		if err != nil {
			c.t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// TestRequestMetricsSurviveReload: the lines of workers that a reload
// retires before they flush still arrive (nginx flushes the buffer as a
// worker exits).
func TestRequestMetricsSurviveReload(t *testing.T) {
	t.Parallel()
	m := metricsManifests(t)
	c := startController(t, m)
	const n = 20
	for range n {
		c.Get("shop.metrics.test", "/")
	}
	// At once, before the workers flush their lines: a structural change.
	reloadWithExtraHost(t, c)
	waitStorefront(t, c, n)
}

// reloadWithExtraHost adds an Ingress for a new host, which reloads
// nginx, and waits until it serves.
func reloadWithExtraHost(t *testing.T, c *controller) {
	t.Helper()
	c.WriteManifest("extra.yaml", ingressYAML("shop", "extra", "extra.metrics.test", "Prefix / web"))
	eventually(t, 15*time.Second, func() error {
		if r := c.Get("extra.metrics.test", "/"); r.Status != 200 {
			return fmt.Errorf("extra.metrics.test: %d", r.Status)
		}
		return nil
	})
}

// waitStorefront waits until the storefront Ingress's requests count n.
func waitStorefront(t *testing.T, c *controller, n float64) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		if got := c.Metric("nginx_ingress_controller_requests", `ingress="storefront"`); got != n {
			return fmt.Errorf("storefront requests = %v, want %v", got, n)
		}
		return nil
	})
}

// TestRequestMetricsLogRotates: past its size, the metrics log is renamed
// before a reload and started again, empty and private; the old workers'
// last lines in the renamed file and the new workers' in the new one are
// all counted, none dropped.
func TestRequestMetricsLogRotates(t *testing.T) {
	t.Parallel()
	c := startController(t, metricsManifests(t), "--metrics-log-rotate-size=1")
	path := layout.Dir(c.StateDir).MetricsLog()
	for range 5 {
		c.Get("shop.metrics.test", "/")
	}
	waitStorefront(t, c, 5)
	// Two more, and at once, before the workers flush them, a structural
	// change reloads.
	c.Get("shop.metrics.test", "/")
	c.Get("shop.metrics.test", "/")
	reloadWithExtraHost(t, c)
	for range 3 {
		c.Get("shop.metrics.test", "/")
	}
	waitStorefront(t, c, 10)
	if rotated, _ := filepath.Glob(path + ".*"); len(rotated) == 0 {
		t.Error("the metrics log was not rotated at the reload")
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() == 0 {
		t.Error("the new workers do not write the new metrics log")
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.Errorf("metrics log mode %o", st.Mode().Perm())
	}
	if got := c.Metric("causeway_metrics_dropped_requests_total"); got != 0 {
		t.Errorf("%v requests dropped", got)
	}
}

// TestRequestMetricsSharedServers: alike hosts share one server block, in
// which a location has one series key for all of them; the collector
// tells them apart by the request's host. Each host's requests count
// under its own Ingress and Service, also through an alias and with a
// Host header in another case, with a port or a trailing dot.
func TestRequestMetricsSharedServers(t *testing.T) {
	t.Parallel()
	web, api := startBackend(t, "web"), startBackend(t, "api")
	alias := func(y, name string) string {
		return strings.Replace(y, "metadata: {name: "+name+", namespace: shop}",
			"metadata: {name: "+name+", namespace: shop, annotations: {nginx.ingress.kubernetes.io/server-alias: \"www."+name+".shared.test\"}}", 1)
	}
	c := startController(t, map[string]string{"app.yaml": ingressClass + serviceYAML("shop", "web", 80, web) + serviceYAML("shop", "api", 80, api) +
		alias(ingressYAML("shop", "a", "a.shared.test", "Prefix / web"), "a") +
		alias(ingressYAML("shop", "b", "b.shared.test", "Prefix / api"), "b")})
	shared, err := filepath.Glob(filepath.Join(c.StateDir, "servers", "_shared-*.conf"))
	if err != nil || len(shared) != 1 {
		t.Fatalf("shared server files %v (%v), want one", shared, err)
	}
	if conf, _ := os.ReadFile(shared[0]); !strings.Contains(string(conf), `"a.shared.test"`) || !strings.Contains(string(conf), `"b.shared.test"`) ||
		strings.Contains(string(conf), "set $causeway_metrics $") {
		t.Fatalf("a.shared.test and b.shared.test do not share a server with one series key:\n%s", conf)
	}
	for host, n := range map[string]int{"a.shared.test": 3, "www.a.shared.test": 2, "B.Shared.Test:80": 4, "b.shared.test.": 1} {
		for range n {
			if r := c.Get(host, "/"); r.Status != 200 {
				t.Fatalf("%s: status %d", host, r.Status)
			}
		}
	}
	eventually(t, 10*time.Second, func() error {
		if got := c.Metric("nginx_ingress_controller_requests"); got != 10 {
			return fmt.Errorf("nginx_ingress_controller_requests sums to %v, want 10", got)
		}
		return nil
	})
	for labels, want := range map[[3]string]float64{
		{`ingress="a"`, `service="web"`, `host="a.shared.test"`}: 5,
		{`ingress="b"`, `service="api"`, `host="b.shared.test"`}: 5,
	} {
		if got := c.Metric("nginx_ingress_controller_requests", labels[:]...); got != want {
			t.Errorf("requests%v = %v, want %v", labels, got, want)
		}
	}
	if got := c.Metric("causeway_metrics_dropped_requests_total"); got != 0 {
		t.Errorf("%v lines dropped", got)
	}
}

// TestRequestMetricsLogStaysSmall: between reloads, what the controller
// read is removed from the start of the metrics log (ext4, the file
// system of the tests), and the workers' appends carry on at its new end:
// after more than a MiB of lines, every request is counted once and the
// file holds less than a MiB.
func TestRequestMetricsLogStaysSmall(t *testing.T) {
	t.Parallel()
	c := startController(t, metricsManifests(t))
	path := layout.Dir(c.StateDir).MetricsLog()
	reloads := c.Metric("causeway_nginx_reloads_total")
	const workers, each = 8, 2500
	addr := "http://" + net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort)) + "/"
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			for range each {
				req, _ := http.NewRequest("GET", addr, nil)
				req.Host = "shop.metrics.test"
				resp, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	waitStorefront(t, c, workers*each)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() >= 1<<20 {
		t.Errorf("the metrics log is %d bytes after %d requests; what was read must be gone", st.Size(), workers*each)
	}
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Errorf("reloads %v, want %v", got, reloads)
	}
	if got := c.Metric("causeway_metrics_dropped_requests_total"); got != 0 {
		t.Errorf("%v requests dropped", got)
	}
	// More requests after the collapse are counted too.
	for range 5 {
		c.Get("shop.metrics.test", "/")
	}
	waitStorefront(t, c, workers*each+5)
}
