package dashboard

import (
	"slices"
	"strings"
	"testing"
)

func TestParseQueries(t *testing.T) {
	data := `{
	  "panels": [
	    {"type": "row", "title": "R", "panels": [
	      {"title": "Nested", "targets": [{"refId": "A", "expr": "rate(a[5m])"}]}
	    ]},
	    {"title": "Top", "targets": [{"refId": "A", "expr": "b"}, {"refId": "B", "expr": "c"}]}
	  ],
	  "annotations": {"list": [{"name": "Reloads", "expr": "changes(d[1m])"}]},
	  "templating": {"list": [
	    {"type": "datasource", "name": "datasource", "query": "prometheus"},
	    {"type": "query", "name": "pod", "query": "label_values(e{x=\"a,b\"}, pod)"},
	    {"type": "query", "name": "ns", "query": {"query": "label_values(namespace)", "refId": "V"}},
	    {"type": "query", "name": "q", "query": {"query": "query_result(topk(3, f))"}},
	    {"type": "custom", "name": "c", "query": "1,2,3"}
	  ]}
	}`
	got, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := []Query{
		{"Nested (A)", "rate(a[5m])"},
		{"Top (A)", "b"},
		{"Top (B)", "c"},
		{"annotation Reloads", "changes(d[1m])"},
		{"variable pod", `e{x="a,b"}`},
		{"variable q", "topk(3, f)"},
	}
	slices.SortFunc(got, func(a, b Query) int { return strings.Compare(a.Where, b.Where) })
	if !slices.Equal(got, want) {
		t.Errorf("Parse = %q\nwant    %q", got, want)
	}
	for _, bad := range []string{`{"panels": [`, `[]`, `{"templating": {"list": [{"type": "query", "name": "x", "query": "up"}]}}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s): no error", bad)
		}
	}
}

func TestBase(t *testing.T) {
	types := map[string]string{
		"h": "histogram", "s": "summary", "c": "counter", "g_count": "gauge",
	}
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"h_bucket", "h", true},
		{"h_sum", "h", true},
		{"h_count", "h", true},
		{"h", "h", true},
		{"s_sum", "s", true},
		{"s_count", "s", true},
		{"s_bucket", "", false},
		{"c", "c", true},
		{"c_count", "", false}, // not a histogram's
		{"g_count", "g_count", true},
		{"missing", "", false},
	} {
		got, ok := Base(tc.name, types)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Base(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
