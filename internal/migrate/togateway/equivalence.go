package togateway

import (
	"fmt"
	"strings"
)

// The proof of a conversion (internal/migrate/equivalence fills these
// fields; Convert leaves them empty): Causeway's model built from the
// Ingresses and the one built from the Gateway API objects answer the same
// requests alike, or each difference is listed, with the findings that
// report it.

// Equivalence is the comparison of one Ingress with its conversion.
type Equivalence struct {
	// NotCompared, when set, says why the Ingress was not compared (its
	// routes were not written).
	NotCompared string `json:"notCompared,omitempty"`
	// Requests is how many requests were answered from both models.
	Requests int `json:"requests"`
	// Equivalent is true when every request was answered alike.
	Equivalent bool `json:"equivalent"`
	// Differences are sorted by aspect, then request.
	Differences []Difference `json:"differences,omitempty"`
}

// Difference is one way the two models answer a request differently.
type Difference struct {
	// Request is the first request answered differently ("http://host/path"),
	// Requests how many of the Ingress's requests differ so.
	Request  string `json:"request"`
	Requests int    `json:"requests"`
	// Aspect is what differs: "route" (served or not, redirect, answer,
	// backends and weights), "policy.<Field>" of the location's policy
	// (Timeouts, CORS, Rewrite, ResponseHeaders, BasicAuth ...),
	// "server.<Field>" of the host, "backend.<Field>" of a backend.
	Aspect string `json:"aspect"`
	// Ingress and Gateway are what each model does.
	Ingress string `json:"ingress"`
	Gateway string `json:"gateway"`
	// ExplainedBy are the findings ("rule input") that report the
	// difference; none makes it Unexpected.
	ExplainedBy []string `json:"explainedBy,omitempty"`
	Unexpected  bool     `json:"unexpected,omitempty"`
}

// EquivalenceSummary counts the Ingresses by the outcome of their
// comparison.
type EquivalenceSummary struct {
	// Equivalent answer every request alike; Explained differ only as
	// their findings report; Unexpected have a difference no finding
	// reports; NotCompared were not compared.
	Equivalent  int `json:"equivalent"`
	Explained   int `json:"explained"`
	Unexpected  int `json:"unexpected"`
	NotCompared int `json:"notCompared"`
}

// writeEquivalence writes one Ingress's comparison, when there is one.
func writeEquivalence(b *strings.Builder, e *Equivalence) {
	switch {
	case e == nil:
	case e.NotCompared != "":
		fmt.Fprintf(b, "  equivalence: not compared, %s\n", e.NotCompared)
	case e.Equivalent:
		fmt.Fprintf(b, "  equivalence: equivalent (%d requests answered alike)\n", e.Requests)
	default:
		fmt.Fprintf(b, "  equivalence: %d differences over %d requests\n", len(e.Differences), e.Requests)
		for _, d := range e.Differences {
			state := "UNEXPECTED"
			if !d.Unexpected {
				state = "reported by " + strings.Join(d.ExplainedBy, ", ")
			}
			more := ""
			if d.Requests > 1 {
				more = fmt.Sprintf(" (and %d more)", d.Requests-1)
			}
			fmt.Fprintf(b, "    differs %s at %s%s: %s\n", d.Aspect, d.Request, more, state)
			fmt.Fprintf(b, "      Ingress: %s\n      Gateway: %s\n", d.Ingress, d.Gateway)
		}
	}
}

// writeEquivalenceSummary writes the summary line of the comparison.
func writeEquivalenceSummary(b *strings.Builder, s *EquivalenceSummary) {
	if s == nil {
		return
	}
	fmt.Fprintf(b, "equivalence: %d equivalent, %d differ as reported, %d differ UNEXPECTEDLY, %d not compared\n",
		s.Equivalent, s.Explained, s.Unexpected, s.NotCompared)
}
