// Package dashboard reads the queries of a Grafana dashboard's JSON model
// and the metric names they select, so that tests can check the dashboard
// Causeway ships (deploy/grafana) reads only metrics Causeway exports.
package dashboard

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Query is one PromQL expression of a dashboard.
type Query struct {
	// Where names it for messages: the panel's title and refId, the
	// annotation's or the templating variable's name.
	Where string
	// Expr is the PromQL; for a templating variable's label_values(m, l),
	// the series selector m.
	Expr string
}

// Load reads the dashboard JSON at path, which must be well-formed, and
// returns every query in it: each "expr" at any depth (panel targets,
// including those of panels nested in rows) and each templating variable
// of type query.
func Load(path string) ([]Query, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse is Load for the JSON itself.
func Parse(data []byte) ([]Query, error) {
	var root any
	if err := json.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("dashboard JSON: %w", err)
	}
	top, ok := root.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("dashboard JSON: not an object")
	}
	var out []Query
	var walk func(v any, where string)
	walk = func(v any, where string) {
		switch v := v.(type) {
		case map[string]any:
			if t, ok := v["title"].(string); ok {
				where = t
			} else if n, ok := v["name"].(string); ok { // an annotation
				where = "annotation " + n
			}
			if e, ok := v["expr"].(string); ok {
				w := where
				if ref, ok := v["refId"].(string); ok {
					w += " (" + ref + ")"
				}
				out = append(out, Query{Where: w, Expr: e})
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if k != "templating" {
					walk(v[k], where)
				}
			}
		case []any:
			for _, e := range v {
				walk(e, where)
			}
		}
	}
	walk(top, "")
	vars, err := templateQueries(top)
	if err != nil {
		return nil, err
	}
	return append(out, vars...), nil
}

// templateQueries returns the series selectors of the query variables.
// Grafana's Prometheus data source takes label_values(selector, label),
// label_values(label), query_result(expr) and metrics(regex); the last
// and label_values without a selector select no metric by name.
func templateQueries(top map[string]any) ([]Query, error) {
	tmpl, _ := top["templating"].(map[string]any)
	list, _ := tmpl["list"].([]any)
	var out []Query
	for _, v := range list {
		v, _ := v.(map[string]any)
		if v["type"] != "query" {
			continue
		}
		name, _ := v["name"].(string)
		q, ok := v["query"].(string)
		if !ok {
			obj, _ := v["query"].(map[string]any)
			q, _ = obj["query"].(string)
		}
		q = strings.TrimSpace(q)
		where := "variable " + name
		fn, arg, ok := call(q)
		if !ok {
			return nil, fmt.Errorf("%s: cannot read query %q", where, q)
		}
		switch fn {
		case "label_values":
			if comma := lastTopLevelComma(arg); comma >= 0 {
				out = append(out, Query{Where: where, Expr: strings.TrimSpace(arg[:comma])})
			}
		case "query_result":
			out = append(out, Query{Where: where, Expr: arg})
		case "metrics", "label_names":
		default:
			return nil, fmt.Errorf("%s: unknown query function %q", where, fn)
		}
	}
	return out, nil
}

// call splits "f(args)" into f and args.
func call(q string) (fn, arg string, ok bool) {
	open := strings.IndexByte(q, '(')
	if open < 0 || !strings.HasSuffix(q, ")") {
		return "", "", false
	}
	return strings.TrimSpace(q[:open]), q[open+1 : len(q)-1], true
}

// lastTopLevelComma is the index of the last comma outside brackets and
// strings, or -1.
func lastTopLevelComma(s string) int {
	depth, last := 0, -1
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\'', '`':
			if end, err := skipString(s, i); err == nil {
				i = end - 1
			}
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			depth--
		case ',':
			if depth == 0 {
				last = i
			}
		}
	}
	return last
}

// Base returns the metric family a sample name belongs to given the
// family types a metrics page declares (name -> "counter", "histogram",
// ...): the name itself when declared, else the name without _bucket,
// _sum or _count when that names a histogram (or, without _bucket, a
// summary). ok is false when no declared family has the sample.
func Base(name string, types map[string]string) (family string, ok bool) {
	if _, ok := types[name]; ok {
		return name, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, found := strings.CutSuffix(name, suffix)
		if !found {
			continue
		}
		switch types[base] {
		case "histogram":
			return base, true
		case "summary":
			if suffix != "_bucket" {
				return base, true
			}
		}
	}
	return "", false
}
