package dashboard

import (
	"slices"
	"testing"
)

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`nginx_ingress_controller_requests{status!~"[45]..", ingress=~"$ingress"}`, []string{"nginx_ingress_controller_requests"}},
		// Functions, aggregations with by before or after, durations,
		// Grafana's interval variables.
		{`sum by (le, ingress) (rate(a_bucket{x="y"}[$__rate_interval]))`, []string{"a_bucket"}},
		{`sum(rate(a[5m])) by (controller_pod) / sum(irate(b{c="d"}[1h30m])) without (instance)`, []string{"a", "b"}},
		{`histogram_quantile(0.99, sum(rate(x_bucket[2m])) by (le))`, []string{"x_bucket"}},
		{`histogram_quantile(.5, sum by(le)(increase(x_bucket[5m])))`, []string{"x_bucket"}},
		// Label names in on/ignoring/group_left lists are not metrics.
		{`a * on (job, instance) group_left (controller_pod) max by (job, instance) (b{c=~"$c"})`, []string{"a", "b"}},
		{`a / ignoring(code) group_right b`, []string{"a", "b"}},
		{`a * on(instance) group_left c`, []string{"a", "c"}},
		// Set operators, bool, numbers, time(), vector().
		{`count(a == 0) or vector(0)`, []string{"a"}},
		{`a > bool 1e3 and b < 0x1F unless c != -2.5e-3`, []string{"a", "b", "c"}},
		{`min(ssl_expire{host="h"}) by (host) - time()`, []string{"ssl_expire"}},
		{`time() - max(ts)`, []string{"ts"}},
		// String parameters, quoted text containing what looks like names
		// and brackets.
		{`count(count_values("hash", config_hash))`, []string{"config_hash"}},
		{`label_replace(a, "dst", "$1", "src", "(.*) rate(b[5m]) }")`, []string{"a"}},
		{`topk(10, a) + quantile(0.9, b) + bottomk(3, c)`, []string{"a", "b", "c"}},
		// offset and @ modifiers.
		{`rate(a[5m] offset 1h) - rate(a[5m] offset -30m) + b @ 1609746000 + c @ end()`, []string{"a", "b", "c"}},
		// Subqueries.
		{`max_over_time(rate(a[1m])[1h:5m])`, []string{"a"}},
		// Selection by __name__, and a regex on it that names nothing.
		{`{__name__="a", job="x"} + {__name__=~"b.*"}`, []string{"a"}},
		// Grafana variables, in braces or not, and a comment.
		{"sum(a{x=\"${ns:regex}\"}) * $scale # b is not queried\n", []string{"a"}},
		// Keywords are not case-sensitive; metric names are.
		{`SUM BY (x) (A) OR B`, []string{"A", "B"}},
		// Colons in recording rule names; duplicates once.
		{`job:requests:rate5m + job:requests:rate5m`, []string{"job:requests:rate5m"}},
		{`1 + 2`, nil},
	} {
		got, err := MetricNames(tc.expr)
		if err != nil {
			t.Errorf("MetricNames(%q): %v", tc.expr, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("MetricNames(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestMetricNamesRejectsBrokenExpressions(t *testing.T) {
	for _, expr := range []string{
		`sum(rate(a[5m])`,
		`a{x="y"`,
		`a{x="y}`,
		`rate(a[5m)`,
		`sum by (le (a)`,
		`a)`,
		`a + ${y`,
	} {
		if names, err := MetricNames(expr); err == nil {
			t.Errorf("MetricNames(%q) = %q, want an error", expr, names)
		}
	}
}
