package annotations

import (
	"errors"
	"slices"

	"github.com/causeway/causeway/internal/model"
)

// canaryGroup is ingress-nginx's canary Ingress: with canary "true" the
// Ingress adds no locations of its own; each of its paths sends some of
// the requests of the same host and path of a main Ingress to its own
// Service. The rule goes to the Lua balancer as pushed state, so changing
// it needs no reload.
var canaryGroup = Group{
	Name: "canary",
	Annotations: supported("canary",
		Annotation{Name: "canary", Scope: ScopeLocation, Default: "false",
			Grammar: "true or false: true makes this Ingress a canary of the main Ingress serving the same host, path and path type; it adds no location of its own",
			Difference: "the weight, header and cookie are applied without reloading nginx; a canary splits only the locations of its own host and path " +
				"(ingress-nginx splits every location routing to the main Service); the other annotations of a canary Ingress are each reported and ignored, " +
				"except the balancing ones (load-balance, upstream-hash-by, affinity and session-cookie-*), which apply to the canary's Service " +
				"unless the main has cookie affinity, which the canary inherits, as in ingress-nginx"},
		Annotation{Name: "canary-by-header", Scope: ScopeLocation, Default: "none",
			Grammar: `1 to 64 letters, digits, - and _: a request with this header set to "always" goes to the canary, "never" to the main backend; other values fall through to the cookie`},
		Annotation{Name: "canary-by-header-value", Scope: ScopeLocation, Default: "none",
			Grammar:    `1 to 256 letters, digits and - . _ ~ / :; with canary-by-header, a request whose header equals it exactly goes to the canary ("always" and "never" lose their meaning); others fall through`,
			Difference: "an invalid value drops the header rule, rather than leaving always/never in force"},
		Annotation{Name: "canary-by-header-pattern", Scope: ScopeLocation, Default: "none",
			Grammar: "a regular expression in the grammar of block-user-agents (no $, no (?, bounded repeats), searched for case-sensitively in the header; " +
				"ignored when canary-by-header-value is set",
			Difference: "an invalid pattern drops the header rule; ingress-nginx accepts any PCRE and treats a runtime error as no match"},
		Annotation{Name: "canary-by-cookie", Scope: ScopeLocation, Default: "none",
			Grammar: `1 to 64 letters, digits, - _ and .: a request with this cookie set to "always" goes to the canary, "never" to the main backend; other values fall through to the weight`},
		Annotation{Name: "canary-weight", Scope: ScopeLocation, Default: "0",
			Grammar: "a whole number from 0 to canary-weight-total: the share, out of canary-weight-total, of the remaining requests sent to the canary at random",
			Difference: "a weight above the total is refused (ingress-nginx then sends everything to the canary); " +
				"changing it needs no reload"},
		Annotation{Name: "canary-weight-total", Scope: ScopeLocation, Default: "100",
			Grammar:    "a whole number from 1 to 1000000",
			Difference: "a total below 100 is honoured (ingress-nginx silently uses 100)"},
	),
	Parse: parseCanary,
}

// canaryRules are the canary annotations besides canary itself.
var canaryRules = []string{"canary-by-header", "canary-by-header-value", "canary-by-header-pattern",
	"canary-by-cookie", "canary-weight", "canary-weight-total"}

func parseCanary(r *Reader, res *Result) {
	on := false
	if v, ok := r.Get("canary"); ok {
		b, err := model.ParseBool(v)
		if err != nil {
			r.Invalid("canary", v, err)
		}
		on = b
	}
	if !on {
		for _, n := range canaryRules {
			if r.Has(n) {
				r.Ignored(n, `only applies with canary "true"`)
			}
		}
		return
	}
	rule := &model.CanaryRule{WeightTotal: model.DefaultCanaryWeightTotal}
	Set(r, "canary-by-header", &rule.Header, model.ParseCanaryHeader)
	okValue := Set(r, "canary-by-header-value", &rule.HeaderValue, model.ParseCanaryHeaderValue)
	okPattern := false
	if r.Has("canary-by-header-pattern") {
		if !r.Has("canary-by-header-value") {
			okPattern = Set(r, "canary-by-header-pattern", &rule.HeaderPattern, model.ParseHeaderRegex)
		} else if okValue {
			r.Ignored("canary-by-header-pattern", "has no effect with canary-by-header-value")
		}
	}
	switch {
	case rule.Header == "":
		for _, n := range []string{"canary-by-header-value", "canary-by-header-pattern"} {
			if r.Has(n) {
				r.Ignored(n, "needs canary-by-header")
			}
		}
		rule.HeaderValue, rule.HeaderPattern = "", ""
	case r.Has("canary-by-header-value") && !okValue,
		!r.Has("canary-by-header-value") && r.Has("canary-by-header-pattern") && !okPattern:
		// always/never would answer instead of the value meant.
		r.Ignored("canary-by-header", "has no usable value or pattern to match")
		rule.Header, rule.HeaderValue, rule.HeaderPattern = "", "", ""
	}
	Set(r, "canary-by-cookie", &rule.Cookie, model.ParseCanaryCookie)
	Set(r, "canary-weight-total", &rule.WeightTotal, func(s string) (int, error) {
		return parseInt(s, 1, model.MaxCanaryWeightTotal)
	})
	Set(r, "canary-weight", &rule.Weight, func(s string) (int, error) {
		n, err := parseInt(s, 0, model.MaxCanaryWeightTotal)
		if err == nil && n > rule.WeightTotal {
			return 0, errors.New("want a whole number from 0 to canary-weight-total")
		}
		return n, err
	})
	res.Canary = rule
}

// canaryKeeps are the groups whose annotations a canary Ingress keeps:
// its own, and the balancing of its Service, as in ingress-nginx.
var canaryKeeps = []string{"canary", "balance"}

// ignoredOnCanary reports every other annotation of a canary Ingress that
// Check did not already report as unknown or unsupported: the main
// Ingress's settings apply to the location the canary borrows.
func ignoredOnCanary(r *Reader) {
	names := make([]string, 0, len(r.values))
	for n := range r.values {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		a, ok := Lookup(FamilyIngressNginx, n)
		if !ok || a.Kind != "Ingress" || a.Status == AnnotationNotYetSupported || slices.Contains(canaryKeeps, a.Group) {
			continue
		}
		r.Ignored(n, "has no effect on a canary Ingress: the main Ingress's setting applies to the location it shares")
	}
}

// isCanary reports whether the Ingress says canary "true".
func isCanary(r *Reader) bool {
	v, ok := r.Get("canary")
	if !ok {
		return false
	}
	b, err := model.ParseBool(v)
	return err == nil && b
}

// withoutSecurity drops Check's Problems about security annotations that
// would close the paths: on a canary Ingress ignoredOnCanary reports them
// instead, since the main Ingress's protection applies.
func withoutSecurity(problems []model.Problem) []model.Problem {
	return slices.DeleteFunc(problems, func(p model.Problem) bool { return p.Reason == model.ReasonSecurityAnnotation })
}
