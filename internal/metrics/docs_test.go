package metrics

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestMetricsDocumented: every causeway_ metric that Metrics holds has a
// row in docs/configuration.md's table of metrics.
func TestMetricsDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	if i := strings.Index(doc, "\n## Metrics\n"); i >= 0 {
		doc = doc[i:]
		if j := strings.Index(doc[1:], "\n## "); j >= 0 {
			doc = doc[:j+1]
		}
	} else {
		t.Fatal("docs/configuration.md has no section ## Metrics")
	}
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	m := New()
	v := reflect.ValueOf(m).Elem()
	checked := 0
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanInterface() {
			continue
		}
		c, ok := f.Interface().(prometheus.Collector)
		if !ok || f.Type() == reflect.TypeOf(m.Registry) {
			continue
		}
		descs := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(descs); close(descs) }()
		for d := range descs {
			match := fqName.FindStringSubmatch(d.String())
			if match == nil || !strings.HasPrefix(match[1], "causeway_") {
				continue
			}
			checked++
			if !strings.Contains(doc, "| `"+match[1]+"`") && !strings.Contains(doc, "| `"+match[1]+"{") {
				t.Errorf("metric %s (Metrics.%s) has no row in docs/configuration.md's table", match[1], v.Type().Field(i).Name)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no metric checked")
	}
}
