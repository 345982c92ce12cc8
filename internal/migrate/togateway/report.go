package togateway

import (
	"cmp"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
)

// Report says what became of each Ingress. Its JSON form is what
// `causeway migrate to-gateway --report-format json` writes.
type Report struct {
	// Gateway is "namespace/name" of the Gateway written.
	Gateway string `json:"gateway"`
	// Exact is true when every finding is Converted and no Ingress was
	// rejected.
	Exact bool `json:"exact"`
	// Summary counts the findings per outcome (every Outcome present).
	Summary map[Outcome]int `json:"summary"`
	// Ingresses are sorted by namespace, then name.
	Ingresses []IngressReport `json:"ingresses"`
	// ConfigMap are the findings about the controller's ConfigMap.
	ConfigMap []Finding `json:"configMap,omitempty"`
	// Notes concern no single Ingress.
	Notes []string `json:"notes,omitempty"`
	// Equivalence counts the outcomes of the proof (equivalence.go);
	// nil when it was not run.
	Equivalence *EquivalenceSummary `json:"equivalence,omitempty"`
}

// IngressReport is one Ingress.
type IngressReport struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Skipped says why the Ingress was not converted at all (its class).
	Skipped string `json:"skipped,omitempty"`
	// Rejected is why Causeway refuses the Ingress as a whole.
	Rejected string `json:"rejected,omitempty"`
	// Refused is true when its routes were not written for a protection
	// that cannot be converted (see the Refused findings).
	Refused bool `json:"refused,omitempty"`
	// Insecure is true when its routes were written without such a
	// protection (Options.AllowInsecure).
	Insecure bool `json:"insecure,omitempty"`
	// Routes are "Kind/name" of the routes written from it, in its
	// namespace.
	Routes []string `json:"routes,omitempty"`
	// Findings are sorted by input, then rule.
	Findings []Finding `json:"findings,omitempty"`
	// Equivalence is the proof of its conversion; nil when not run.
	Equivalence *Equivalence `json:"equivalence,omitempty"`
}

// Finding is what one rule made of one input.
type Finding struct {
	Rule string `json:"rule"`
	// Input is the full annotation key, an Ingress field path
	// ("spec.rules[0].http.paths[1]"), or a ConfigMap key.
	Input   string  `json:"input"`
	Value   string  `json:"value,omitempty"`
	Outcome Outcome `json:"outcome"`
	// Severity is SecuritySeverity for a Refused finding.
	Severity string `json:"severity,omitempty"`
	// Message says what was done, for this input.
	Message string `json:"message,omitempty"`
}

// find records a finding of rule about input.
func (w *ingressWork) find(r *Rule, input, value, msg string) {
	f := Finding{Rule: r.ID, Input: input, Value: value, Outcome: r.Outcome, Message: msg}
	if r.Outcome == Refused {
		f.Severity = SecuritySeverity
	}
	w.rep.Findings = append(w.rep.Findings, f)
	w.handled[input] = true
}

// findKey records a finding about the ingress-nginx annotation name, if
// the Ingress sets it.
func (w *ingressWork) findKey(c *converter, r *Rule, name, msg string) {
	k := c.key(name)
	if v, ok := w.ing.Annotations[k]; ok {
		w.find(r, k, v, msg)
	}
}

// report assembles the Report.
func (c *converter) report() Report {
	r := Report{
		Gateway:   c.opts.GatewayNamespace + "/" + c.opts.GatewayName,
		Exact:     true,
		Summary:   map[Outcome]int{},
		Ingresses: []IngressReport{},
		ConfigMap: c.cmFindings,
		Notes:     c.notes,
	}
	for _, o := range Outcomes {
		r.Summary[o] = 0
	}
	count := func(fs []Finding) {
		for _, f := range fs {
			r.Summary[f.Outcome]++
			r.Exact = r.Exact && f.Outcome == Converted
		}
	}
	count(c.cmFindings)
	for _, rep := range c.reports {
		slices.SortStableFunc(rep.Findings, func(a, b Finding) int {
			return cmp.Or(cmp.Compare(a.Input, b.Input), cmp.Compare(a.Rule, b.Rule))
		})
		rep.Findings = slices.CompactFunc(rep.Findings, func(a, b Finding) bool { return a == b })
		slices.Sort(rep.Routes)
		rep.Routes = slices.Compact(rep.Routes)
		count(rep.Findings)
		r.Exact = r.Exact && rep.Rejected == ""
		r.Ingresses = append(r.Ingresses, *rep)
	}
	slices.SortFunc(r.Ingresses, func(a, b IngressReport) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	if len(r.Ingresses) == 0 {
		r.Notes = append(r.Notes, "no Ingresses found")
	}
	return r
}

// rest reports every annotation of ours no rule has reported.
func (w *ingressWork) rest() {
	for _, k := range sortedKeys(w.ann) {
		if w.handled[k] {
			continue
		}
		a := w.ann[k]
		msg := ""
		switch {
		case w.rep.Refused:
			msg = "not read: the Ingress's routes are not written"
		case w.tr.Annotations.Canary != nil && a.family == annotations.FamilyIngressNginx && !canaryKeeps(a.name):
			w.find(ruleNoEffect, k, w.ing.Annotations[k], "a canary takes its main Ingress's settings: ingress-nginx ignores this one too")
			continue
		case a.family != annotations.FamilyIngressNginx:
			msg = "not an ingress-nginx annotation"
		case a.name == "configuration-snippet" || a.name == "server-snippet":
			w.find(ruleSnippet, k, w.ing.Annotations[k], "")
			continue
		case strings.HasPrefix(a.name, "limit-") || a.name == "global-rate-limit":
			w.find(ruleLimits, k, w.ing.Annotations[k], "")
			continue
		}
		w.find(ruleOther, k, w.ing.Annotations[k], msg)
	}
}

// canaryKeeps reports whether a canary Ingress keeps the ingress-nginx
// annotation name (its balancing, as ingress-nginx does), rather than
// taking its main Ingress's setting.
func canaryKeeps(name string) bool {
	a, known := annotations.Lookup(annotations.FamilyIngressNginx, name)
	return !known || a.Group == "canary" || a.Group == "balance"
}
