package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/dashboard"
	"github.com/causeway/causeway/test/testcert"
)

// TestDashboardMetricsExported: every metric the Grafana dashboard in
// deploy/grafana queries (panels, annotations, variables) has at least
// one sample on a running controller's /metrics page, so that no panel
// of it stays empty for want of a metric Causeway does not export. The
// controller serves a TLS Ingress (for the certificate metrics), a plain
// one, and one whose Service is missing (for causeway_object_problems,
// which has no series while nothing is wrong), in the Lua data plane
// (for causeway_dynamic_updates_total).
func TestDashboardMetricsExported(t *testing.T) {
	t.Parallel()
	queries, err := dashboard.Load("../../deploy/grafana/causeway.json")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{} // metric name -> where the dashboard queries it
	for _, q := range queries {
		names, err := dashboard.MetricNames(q.Expr)
		if err != nil {
			t.Fatalf("%s: %v", q.Where, err)
		}
		for _, n := range names {
			want[n] = append(want[n], q.Where)
		}
	}

	web := startBackend(t, "web")
	crt, key, err := testcert.SelfSigned(0, 48*time.Hour, "secure.dash.test")
	if err != nil {
		t.Fatal(err)
	}
	c := startController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("shop", "web", 80, web) + testcert.SecretYAML("shop", "secure-tls", crt, key) +
			tlsIngressYAML("shop", "secure", "secure.dash.test", "secure-tls", "web") +
			ingressYAML("shop", "plain", "plain.dash.test", "Prefix /app web") +
			ingressYAML("shop", "broken", "broken.dash.test", "Prefix / ghost"),
	}, "--dataplane", "lua")

	for range 3 {
		if r := c.Get("plain.dash.test", "/app/x"); r.Status != 200 {
			t.Fatalf("plain: status %d", r.Status)
		}
		if r := c.GetTLS("secure.dash.test", "/"); r.Status != 200 {
			t.Fatalf("TLS: status %d", r.Status)
		}
	}
	if r := c.Get("plain.dash.test", "/nowhere"); r.Status != 404 {
		t.Fatalf("plain /nowhere: status %d, want 404", r.Status)
	}
	// Batches of counts arrive once a second.
	const total = 3 + 3 + 1
	eventually(t, 10*time.Second, func() error {
		if got := c.Metric("nginx_ingress_controller_requests"); got != total {
			return fmt.Errorf("nginx_ingress_controller_requests sums to %v, want %d", got, total)
		}
		return nil
	})

	types, samples := exposition(c.scrape())
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		family, declared := dashboard.Base(n, types)
		switch {
		case !declared:
			t.Errorf("%s (queried by %s) is not exported", n, strings.Join(want[n], "; "))
		case samples[n] == 0:
			t.Errorf("%s (a %s of %s, queried by %s) is declared but has no sample", n, types[family], family, strings.Join(want[n], "; "))
		default:
			t.Logf("%s: %d series", n, samples[n])
		}
	}
	if len(names) < 25 {
		t.Errorf("the dashboard queries only %d metrics (%q); the extraction misses some", len(names), names)
	}
}

// exposition reads a Prometheus text page: the type of each family its
// # TYPE lines declare, and how many sample lines each sample name has.
func exposition(page string) (types map[string]string, samples map[string]int) {
	types, samples = map[string]string{}, map[string]int{}
	for _, line := range strings.Split(page, "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			if f := strings.Fields(rest); len(f) == 2 {
				types[f[0]] = f[1]
			}
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		end := strings.IndexAny(line, "{ ")
		if end < 0 {
			continue
		}
		samples[line[:end]]++
	}
	return types, samples
}
