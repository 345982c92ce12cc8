package build

import (
	"fmt"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/model"
)

// ModSecurity: the ConfigMap's enable-modsecurity runs it on every path of
// every Ingress, an Ingress's enable-modsecurity decides for its own
// paths, and what it asks must run as asked or the paths close: a
// firewall that silently does not run fails open.

// modSecurityGlobal checks the ConfigMap's ModSecurity against what nginx
// offers: enabled without the module, or with the CRS and without its
// rules, every path of every Ingress answers 503.
func (b *builder) modSecurityGlobal() {
	g := &b.model.Config.ModSecurity
	ref := b.configMapRef()
	if !g.Enabled {
		if g.Rules != nil || g.CRS {
			b.problem(ref, model.ReasonInvalidConfig, false,
				`keys "enable-owasp-modsecurity-crs" and "modsecurity-snippet" apply only with "enable-modsecurity": true; unused`)
			g.Rules, g.CRS = nil, false
		}
		return
	}
	why := ""
	switch {
	case !b.opts.ModSecurityAvailable:
		why = b.modSecurityMissing()
	case (g.CRS || g.Rules.Includes(model.SecIncludeCRS)) && !b.opts.CRSAvailable:
		why = crsMissing
	}
	if why != "" {
		b.model.Config.FailClosed = append(b.model.Config.FailClosed, "enable-modsecurity")
		b.problem(ref, model.ReasonInvalidConfig, false, `key "enable-modsecurity": %s; every path of every Ingress answers 503 rather than being served uninspected`, why)
	}
}

const crsMissing = "the OWASP Core Rule Set (Debian's modsecurity-crs) is not installed"

// modSecurityMissing says why nginx cannot run ModSecurity.
func (b *builder) modSecurityMissing() string {
	if b.opts.ModSecurityMissing != "" {
		return b.opts.ModSecurityMissing
	}
	return "nginx has no ModSecurity module"
}

// modSecurity resolves an Ingress's ModSecurity: nil when it does not run
// on the Ingress's paths, closed when it should and cannot run as asked.
func (b *builder) modSecurity(t *ingress.Translation) (ms *model.ModSecurity, closed bool) {
	g := b.model.Config.ModSecurity
	a := t.Annotations.ModSecurity
	on, byAnnotation := g.Enabled, false
	if a != nil && a.Enable != nil {
		on, byAnnotation = *a.Enable, *a.Enable
	}
	key := func(name string) string { return b.opts.AnnotationsPrefix + "/" + name }
	if !on {
		var others []string
		if a != nil {
			others = slices.DeleteFunc(slices.Clone(a.Keys), func(k string) bool { return k == key("enable-modsecurity") })
		}
		if len(others) > 0 {
			what := "annotation " + others[0] + " has"
			if len(others) > 1 {
				what = "annotations " + strings.Join(others, ", ") + " have"
			}
			b.problem(t.Ref, model.ReasonUnsupportedAnnotation, false,
				"%s no effect: ModSecurity does not run for this Ingress (%s is not true, nor the ConfigMap's enable-modsecurity); ignored",
				what, key("enable-modsecurity"))
		}
		return nil, false
	}
	if !b.opts.ModSecurityAvailable {
		if byAnnotation {
			b.problem(t.Ref, model.ReasonUnsupportedAnnotation, false,
				"annotation %s: %s; every path of this Ingress answers 503 rather than being served uninspected", key("enable-modsecurity"), b.modSecurityMissing())
		}
		// Otherwise the ConfigMap closed every Ingress (modSecurityGlobal).
		return nil, true
	}
	out := &model.ModSecurity{CRS: g.Enabled && (g.CRS || g.Rules.Includes(model.SecIncludeCRS))}
	if a == nil {
		return out, false
	}
	if len(a.Refused) > 0 {
		b.problem(t.Ref, model.ReasonInvalidAnnotation, false,
			"ModSecurity runs for this Ingress, and %s could not be used; every path of this Ingress answers 503 rather than being inspected without it",
			strings.Join(a.Refused, ", "))
		return nil, true
	}
	if a.CRS && !b.opts.CRSAvailable {
		b.problem(t.Ref, model.ReasonUnsupportedAnnotation, false,
			"annotation %s: %s; every path of this Ingress answers 503 rather than being inspected without it", key("enable-owasp-core-rules"), crsMissing)
		return nil, true
	}
	if id, ok := b.takenRuleID(a.Rules); ok {
		b.problem(t.Ref, model.ReasonInvalidAnnotation, false,
			"annotation %s: rule id %d is taken by the rules every location inherits (%s); the whole snippet is refused and every path of this Ingress answers 503 rather than being inspected without it",
			key("modsecurity-snippet"), id, b.inheritedRules())
		return nil, true
	}
	out.CRS = out.CRS || a.CRS
	out.Rules, out.TransactionID = a.Rules, a.TransactionID
	return out, false
}

// takenRuleID finds a rule id of a location's rules that the http level's
// rules already define: the base configuration's (unless the ConfigMap's
// rules replace it) and the ConfigMap's own. nginx would refuse the
// duplicate.
func (b *builder) takenRuleID(r *model.SecRules) (int, bool) {
	g := b.model.Config.ModSecurity
	ownRules := g.Enabled && g.Rules != nil
	base := !ownRules || g.Rules.Includes(model.SecIncludeBase)
	var global []int
	if ownRules {
		global = g.Rules.IDs()
	}
	for _, id := range r.IDs() {
		if base && model.SecBaseIDs.Contains(id) || slices.Contains(global, id) {
			return id, true
		}
	}
	return 0, false
}

// inheritedRules names the rules of the http level, for Problems.
func (b *builder) inheritedRules() string {
	g := b.model.Config.ModSecurity
	if g.Enabled && g.Rules != nil {
		return fmt.Sprintf("the ConfigMap's modsecurity-snippet, and the base configuration's %d-%d when it includes it", model.SecBaseIDs.Lo, model.SecBaseIDs.Hi)
	}
	return fmt.Sprintf("the base configuration's %d-%d", model.SecBaseIDs.Lo, model.SecBaseIDs.Hi)
}
