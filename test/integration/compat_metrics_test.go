package integration

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/testcert"
)

// scrape returns the controller's /metrics page.
func (c *controller) scrape() string {
	c.t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", c.MetricsPort))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return string(body)
}

// value is harness.SumMetric over page, failing the test on a bad line.
func value(t *testing.T, page, name string, labels ...string) float64 {
	t.Helper()
	v, err := harness.SumMetric(page, name, labels...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestIngressNginxMetrics: the metrics ingress-nginx dashboards read are
// served with live values, from the controller, from /proc and from
// nginx's stub_status.
func TestIngressNginxMetrics(t *testing.T) {
	t.Setenv("POD_NAME", "causeway-it-0")
	t.Setenv("POD_NAMESPACE", "ingress")
	web := startBackend(t, "web")
	crt, key, err := testcert.SelfSigned(0, 48*time.Hour, "a.metrics.test")
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(crt)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	tlsIngress := tlsIngressYAML("shop", "a", "a.metrics.test", "a-tls", "web")
	c := startController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("shop", "web", 80, web) + testcert.SecretYAML("shop", "a-tls", crt, key) +
			ingressYAML("shop", "plain", "plain.metrics.test", "Prefix / web"),
		"tls.yaml": tlsIngress,
	}, "--dataplane", "lua")

	const requests = 5
	for range requests {
		if r := c.Get("plain.metrics.test", "/"); r.Status != 200 {
			t.Fatalf("status %d", r.Status)
		}
	}
	if r := c.GetTLS("a.metrics.test", "/"); r.Status != 200 {
		t.Fatalf("TLS status %d", r.Status)
	}
	page := c.scrape()
	const p = "nginx_ingress_controller_"
	id := `controller_pod="causeway-it-0"`
	for _, tc := range []struct {
		name   string
		labels []string
		ok     func(float64) bool
		want   string
	}{
		{p + "config_last_reload_successful", []string{id, `controller_namespace="ingress"`, `controller_class="causeway"`}, eq(1), "1"},
		{p + "config_hash", []string{id}, func(v float64) bool { return v > 0 }, "> 0"},
		{p + "config_last_reload_successful_timestamp_seconds", []string{id}, recent, "within the last 10 minutes"},
		{p + "success", []string{id}, func(v float64) bool { return v >= 1 }, ">= 1"},
		{p + "errors", []string{id}, eq(0), "0"},
		{p + "build_info", []string{id}, eq(1), "1"},
		{p + "ssl_expire_time_seconds", []string{`host="a.metrics.test"`, `namespace="shop"`, `secret_name="a-tls"`, `class="causeway"`},
			eq(float64(leaf.NotAfter.Unix())), fmt.Sprint(leaf.NotAfter.Unix())},
		{p + "ssl_certificate_info", []string{`host="a.metrics.test"`, `serial_number="` + leaf.SerialNumber.String() + `"`}, eq(1), "1"},
		{p + "nginx_process_num_procs", []string{id}, func(v float64) bool { return v >= 2 }, ">= 2 (master and a worker)"},
		{p + "nginx_process_resident_memory_bytes", []string{id}, func(v float64) bool { return v > 1<<20 }, "> 1 MiB"},
		{p + "nginx_process_virtual_memory_bytes", []string{id}, func(v float64) bool { return v > 1<<20 }, "> 1 MiB"},
		{p + "nginx_process_oldest_start_time_seconds", []string{id}, recent, "within the last 10 minutes"},
		{p + "nginx_process_cpu_seconds_total", []string{id}, func(v float64) bool { return v >= 0 }, ">= 0"},
		{p + "nginx_process_connections_total", []string{`state="accepted"`, id}, func(v float64) bool { return v >= requests+1 }, fmt.Sprintf(">= %d", requests+1)},
		{p + "nginx_process_connections_total", []string{`state="handled"`}, func(v float64) bool { return v >= requests+1 }, fmt.Sprintf(">= %d", requests+1)},
		{p + "nginx_process_requests_total", []string{id}, func(v float64) bool { return v >= requests+1 }, fmt.Sprintf(">= %d", requests+1)},
		// This scrape itself holds a connection to the private server.
		{p + "nginx_process_connections", []string{`state="active"`}, func(v float64) bool { return v >= 1 }, ">= 1"},
		{"causeway_metrics_collect_errors_total", nil, eq(0), "0"},
	} {
		if !strings.Contains(page, tc.name+"{") {
			t.Errorf("%s missing", tc.name)
			continue
		}
		if v := value(t, page, tc.name, tc.labels...); !tc.ok(v) {
			t.Errorf("%s%v = %v, want %s", tc.name, tc.labels, v, tc.want)
		}
	}
	for _, typ := range []string{
		"# TYPE " + p + "nginx_process_connections_total counter",
		"# TYPE " + p + "nginx_process_connections gauge",
		"# TYPE " + p + "ssl_expire_time_seconds gauge",
		"# TYPE " + p + "success counter",
	} {
		if !strings.Contains(page, typ) {
			t.Errorf("%q missing", typ)
		}
	}

	// The certificate's series leave with the last host that used it.
	c.WriteManifest("tls.yaml", "")
	eventually(t, 10*time.Second, func() error {
		page := c.scrape()
		for _, name := range []string{p + "ssl_expire_time_seconds", p + "ssl_certificate_info"} {
			if strings.Contains(page, name+"{") && value(t, page, name, `host="a.metrics.test"`) != 0 {
				return fmt.Errorf("a.metrics.test still has %s", name)
			}
		}
		return nil
	})
}

// TestIngressNginxMetricsPlain: without the Lua data plane, /proc and
// stub_status are still read (the status server is in both planes), and
// requests are counted (the metrics log is nginx's own).
func TestIngressNginxMetricsPlain(t *testing.T) {
	web := startBackend(t, "web")
	c := startController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("shop", "web", 80, web) + ingressYAML("shop", "plain", "plain.metrics.test", "Prefix / web"),
	}, "--dataplane", "plain")
	for range 4 {
		if r := c.Get("plain.metrics.test", "/"); r.Status != 200 {
			t.Fatalf("plain.metrics.test: %d", r.Status)
		}
	}
	eventually(t, 10*time.Second, func() error {
		if got := c.Metric("nginx_ingress_controller_requests", `ingress="plain"`, `service="web"`, `status="200"`); got != 4 {
			return fmt.Errorf("requests = %v, want 4", got)
		}
		if got := c.Metric("nginx_ingress_controller_response_duration_seconds_count", `ingress="plain"`); got != 4 {
			return fmt.Errorf("response_duration_seconds_count = %v, want 4", got)
		}
		return nil
	})
	page := c.scrape()
	if v := value(t, page, "nginx_ingress_controller_nginx_process_num_procs"); v < 2 {
		t.Errorf("num_procs %v, want >= 2", v)
	}
	if v := value(t, page, "nginx_ingress_controller_config_last_reload_successful"); v != 1 {
		t.Errorf("config_last_reload_successful %v, want 1", v)
	}
	if v := value(t, page, "nginx_ingress_controller_nginx_process_requests_total"); v < 1 {
		t.Errorf("nginx_process_requests_total %v in plain mode, want >= 1", v)
	}
	if v := value(t, page, "causeway_metrics_collect_errors_total"); v != 0 {
		t.Errorf("%v collection errors, want 0", v)
	}
}

func eq(want float64) func(float64) bool { return func(v float64) bool { return v == want } }

func recent(v float64) bool {
	now := float64(time.Now().Unix())
	return v <= now+1 && v > now-600
}
