package togateway

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// Objects are the output's objects in the order WriteYAML writes them:
// the Gateway, the ReferenceGrants, the HTTPRoutes, the GRPCRoutes, the
// TLSRoutes.
func (o Output) Objects() []any {
	var out []any
	for _, g := range o.Gateways {
		out = append(out, g)
	}
	for _, g := range o.ReferenceGrants {
		out = append(out, g)
	}
	for _, r := range o.HTTPRoutes {
		out = append(out, r)
	}
	for _, r := range o.GRPCRoutes {
		out = append(out, r)
	}
	for _, r := range o.TLSRoutes {
		out = append(out, r)
	}
	return out
}

// WriteYAML writes the objects as YAML documents, without status and
// the empty creationTimestamp.
func WriteYAML(w io.Writer, o Output) error {
	for i, obj := range o.Objects() {
		data, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return err
		}
		delete(m, "status")
		if meta, ok := m["metadata"].(map[string]any); ok {
			delete(meta, "creationTimestamp")
		}
		y, err := yaml.Marshal(m)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(y); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for people: per Ingress, its routes and
// every finding, then the ConfigMap's, the notes and the summary. The last
// line says whether the conversion is exact.
func WriteText(w io.Writer, r Report) error {
	var b strings.Builder
	for _, ing := range r.Ingresses {
		state := ""
		switch {
		case ing.Skipped != "":
			state = ": skipped, " + ing.Skipped
		case ing.Rejected != "":
			state = ": rejected, " + ing.Rejected
		case ing.Refused:
			state = ": REFUSED, routes not written (" + SecuritySeverity + ")"
		case ing.Insecure:
			state = ": INSECURE, routes written without their protection (--allow-insecure)"
		}
		fmt.Fprintf(&b, "Ingress %s/%s%s\n", ing.Namespace, ing.Name, state)
		for _, rt := range ing.Routes {
			fmt.Fprintf(&b, "  writes %s\n", rt)
		}
		for _, f := range ing.Findings {
			writeFinding(&b, f)
		}
		writeEquivalence(&b, ing.Equivalence)
		b.WriteString("\n")
	}
	if len(r.ConfigMap) > 0 {
		b.WriteString("ConfigMap\n")
		for _, f := range r.ConfigMap {
			writeFinding(&b, f)
		}
		b.WriteString("\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	fmt.Fprintf(&b, "Gateway %s; findings:", r.Gateway)
	for _, o := range Outcomes {
		fmt.Fprintf(&b, " %d %s", r.Summary[o], o)
	}
	b.WriteString("\n")
	writeEquivalenceSummary(&b, r.Equivalence)
	if r.Exact {
		b.WriteString("every input converted as it was\n")
	} else {
		b.WriteString("read the findings that are not \"converted\" before switching\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFinding(b *strings.Builder, f Finding) {
	fmt.Fprintf(b, "  %-13s %-28s %s", f.Outcome, f.Rule, f.Input)
	if f.Value != "" {
		fmt.Fprintf(b, " %q", f.Value)
	}
	b.WriteString("\n")
	if f.Severity != "" {
		fmt.Fprintf(b, "      severity: %s\n", f.Severity)
	}
	if f.Message != "" {
		fmt.Fprintf(b, "      %s\n", f.Message)
	}
}
