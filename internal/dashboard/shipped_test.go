package dashboard

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// shipped is the dashboard deploy/grafana ships.
const shipped = "../../deploy/grafana/causeway.json"

// TestShippedDashboard: the dashboard is well-formed JSON, has the
// variables its queries use, and every query selects at least one metric
// and reads as PromQL. test/integration's TestDashboardMetricsExported
// checks that a running controller exports each of those metrics.
func TestShippedDashboard(t *testing.T) {
	data, err := os.ReadFile(shipped)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title         string `json:"title"`
		UID           string `json:"uid"`
		SchemaVersion int    `json:"schemaVersion"`
		Templating    struct {
			List []struct {
				Name, Type string
			} `json:"list"`
		} `json:"templating"`
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s is not valid JSON: %v", shipped, err)
	}
	if d.Title == "" || d.UID == "" || d.SchemaVersion < 36 {
		t.Errorf("title %q, uid %q, schemaVersion %d: want a title, a uid and schemaVersion >= 36", d.Title, d.UID, d.SchemaVersion)
	}
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	for _, want := range []string{"datasource", "controller_namespace", "controller_class", "controller_pod", "namespace", "ingress"} {
		if !slices.Contains(vars, want) {
			t.Errorf("no templating variable %q (have %q)", want, vars)
		}
	}

	ids := map[int]string{}
	var check func(p panel)
	check = func(p panel) {
		if prev, dup := ids[p.ID]; dup {
			t.Errorf("panels %q and %q share id %d", prev, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q target %s: data source %q, want ${datasource}", p.Title, tg.RefID, tg.Datasource.UID)
			}
		}
		for _, c := range p.Panels {
			check(c)
		}
	}
	for _, p := range d.Panels {
		check(p)
	}

	queries, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) < 20 {
		t.Errorf("%d queries found; the walk over the JSON misses some", len(queries))
	}
	for _, q := range queries {
		names, err := MetricNames(q.Expr)
		if err != nil {
			t.Errorf("%s: %v", q.Where, err)
			continue
		}
		if len(names) == 0 {
			t.Errorf("%s: %q selects no metric", q.Where, q.Expr)
		}
		// Every variable a query uses is defined (or one of Grafana's).
		for _, v := range variables(q.Expr) {
			if !slices.Contains(vars, v) && !strings.HasPrefix(v, "__") {
				t.Errorf("%s: uses $%s, which the dashboard does not define", q.Where, v)
			}
		}
	}
}

type panel struct {
	ID      int    `json:"id"`
	Title   string `json:"title"`
	Type    string `json:"type"`
	Targets []struct {
		RefID      string `json:"refId"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

// variables returns the names of the Grafana variables in s: $x, ${x},
// ${x:fmt}.
func variables(s string) []string {
	var out []string
	for i := strings.IndexByte(s, '$'); i >= 0; i = strings.IndexByte(s, '$') {
		s = s[i+1:]
		if strings.HasPrefix(s, "{") {
			end := strings.IndexAny(s, ":}")
			if end > 0 {
				out = append(out, s[1:end])
			}
			continue
		}
		n := 0
		for n < len(s) && isIdentChar(s[n]) {
			n++
		}
		if n > 0 {
			out = append(out, s[:n])
		}
	}
	return out
}
