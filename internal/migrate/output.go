package migrate

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// WriteJSON prints the report as indented JSON.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// maxValue is how much of a value the text report shows.
const maxValue = 60

// WriteText prints the report for people: a table per Ingress and per
// ConfigMap, the differences that apply once each, then the summary. The
// last line is "ready to migrate" or says why not.
func WriteText(w io.Writer, r Report) error {
	p := &printer{w: w}
	for _, ing := range r.Ingresses {
		class := "no class"
		if ing.Class != "" {
			class = "class " + ing.Class
		}
		state := "ready"
		if !ing.Ready {
			state = "needs attention"
		}
		p.printf("Ingress %s/%s (%s): %s\n", ing.Namespace, ing.Name, class, state)
		if ing.Rejected != "" {
			p.printf("  rejected: %s\n", ing.Rejected)
		}
		if len(ing.Annotations) == 0 {
			p.printf("  no annotations under %s/, nginx.org/ or causeway.io/\n", r.AnnotationsPrefix)
		}
		p.table(ing.Annotations)
		for _, m := range ing.Problems {
			p.printf("  - %s\n", m)
		}
		p.printf("\n")
	}
	for _, cm := range r.ConfigMaps {
		p.printf("ConfigMap %s/%s\n", cm.Namespace, cm.Name)
		if len(cm.Keys) == 0 {
			p.printf("  no keys\n")
		}
		p.table(cm.Keys)
		p.printf("\n")
	}
	for _, c := range r.Controllers {
		p.printf("%s %s/%s, container %s: ingress-nginx's controller\n", c.Kind, c.Namespace, c.Name, c.Container)
		if len(c.Flags) == 0 {
			p.printf("  no flags\n")
		}
		p.table(c.Flags)
		p.printf("\n")
	}
	if r.ConfigMapNotFound != "" {
		p.printf("ConfigMap %s was not found.\n\n", r.ConfigMapNotFound)
	} else if len(r.ConfigMaps) == 0 {
		p.printf("No ConfigMap named %s was found; name the controller's with --configmap NAMESPACE/NAME.\n\n", DefaultConfigMapName)
	}
	p.differences(r)
	for _, rp := range r.ReadProblems {
		p.printf("could not read %s: %s\n", rp.Where, rp.Message)
	}
	if len(r.ReadProblems) > 0 {
		p.printf("\n")
	}

	s := r.Summary
	p.printf("Summary\n")
	p.printf("  Ingresses:      %d, %d ready, %d %s attention\n", s.Ingresses, s.ReadyIngresses, s.Ingresses-s.ReadyIngresses, needs(s.Ingresses-s.ReadyIngresses))
	p.printf("  annotations:    %s\n", counts(s.Annotations, AnnotationVerdicts))
	if len(r.ConfigMaps) > 0 {
		p.printf("  ConfigMap keys: %s\n", counts(s.ConfigMapKeys, KeyVerdicts))
	}
	if len(r.Controllers) > 0 {
		p.printf("  flags:          %s\n", counts(s.Flags, FlagVerdicts))
	}
	for _, n := range r.Notes {
		p.printf("note: %s\n", n)
	}
	p.printf("%s\n", verdictLine(r))
	return p.err
}

// verdictLine is the report's last line.
func verdictLine(r Report) string {
	if r.Ready {
		return "ready to migrate"
	}
	var why []string
	s := r.Summary
	if n := s.Ingresses - s.ReadyIngresses; n > 0 {
		why = append(why, fmt.Sprintf("%d of %d Ingresses %s attention", n, s.Ingresses, needs(n)))
	}
	if n := s.ConfigMapKeys[FailOpen]; n > 0 {
		why = append(why, plural(n, "ConfigMap key lets", "ConfigMap keys let")+" through requests ingress-nginx refuses")
	}
	if n := s.ConfigMapKeys[Invalid]; n > 0 {
		why = append(why, plural(n, "ConfigMap key has an invalid value", "ConfigMap keys have invalid values"))
	}
	if n := s.Flags[Unsupported]; n > 0 {
		why = append(why, plural(n, "controller flag asks", "controller flags ask")+" for what Causeway does not do")
	}
	if n := s.Flags[Unknown]; n > 0 {
		why = append(why, plural(n, "controller flag is", "controller flags are")+" unknown")
	}
	if n := len(r.ReadProblems); n > 0 {
		why = append(why, plural(n, "manifest could not be read", "manifests could not be read"))
	}
	return "not ready to migrate: " + strings.Join(why, "; ")
}

// needs agrees with a count of Ingresses.
func needs(n int) string {
	if n == 1 {
		return "needs"
	}
	return "need"
}

// plural prints n with the singular or plural phrase.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// counts prints "3 supported, 1 unknown" in the order of vs.
func counts(m map[Verdict]int, vs []Verdict) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%d %s", m[v], v)
	}
	return strings.Join(parts, ", ")
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// table prints entries as aligned columns (verdict, key, value), each
// followed by what needs saying about it.
func (p *printer) table(entries []Entry) {
	vw, kw := 0, 0
	for _, e := range entries {
		vw, kw = max(vw, len(e.Verdict)), max(kw, len(e.Key))
	}
	for _, e := range entries {
		p.printf("  %-*s  %-*s  %s\n", vw, e.Verdict, kw, e.Key, showValue(e.Value))
		if e.Verdict == SupportedWithDifference || e.Verdict == Supported {
			continue
		}
		for _, m := range e.Messages {
			p.printf("      %s\n", m)
		}
		if e.Suggestion != "" {
			p.printf("      did you mean %s?\n", e.Suggestion)
		}
		if e.Instead != "" && !anyContains(e.Messages, e.Instead) {
			p.printf("      instead: %s\n", e.Instead)
		}
	}
}

func anyContains(msgs []string, s string) bool {
	for _, m := range msgs {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// showValue quotes a value, cut to maxValue bytes.
func showValue(v string) string {
	if len(v) > maxValue {
		return strconv.Quote(v[:maxValue]) + "..."
	}
	return strconv.Quote(v)
}

// differences lists, once each, the documented differences of the
// supported entries in the report: annotations, ConfigMap keys, then
// controller flags.
func (p *printer) differences(r Report) {
	annotations, keys, flags := map[string]string{}, map[string]string{}, map[string]string{}
	add := func(m map[string]string, e Entry) {
		if e.Difference != "" && (e.Verdict == SupportedWithDifference || e.Verdict == Invalid) {
			m[e.Key] = e.Difference
		}
	}
	for _, ing := range r.Ingresses {
		for _, e := range ing.Annotations {
			add(annotations, e)
		}
	}
	for _, cm := range r.ConfigMaps {
		for _, e := range cm.Keys {
			add(keys, e)
		}
	}
	for _, c := range r.Controllers {
		for _, e := range c.Flags {
			add(flags, e)
		}
	}
	if len(annotations)+len(keys)+len(flags) == 0 {
		return
	}
	p.printf("Differences from ingress-nginx that apply here\n")
	for _, set := range []struct {
		m    map[string]string
		name string
	}{{annotations, "%s"}, {keys, "ConfigMap key %s"}, {flags, "flag %s"}} {
		names := make([]string, 0, len(set.m))
		for n := range set.m {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p.printf("  "+set.name+": %s\n", n, set.m[n])
		}
	}
	p.printf("\n")
}
