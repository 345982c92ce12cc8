package togateway

import (
	"fmt"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// canary splits the main Ingresses' rules of the canary's hosts and
// paths: weights on the backendRefs, and rules with a header match ahead
// of them.
func (c *converter) canary(w *ingressWork) {
	rule := w.tr.Annotations.Canary
	for _, n := range []string{"canary", "canary-weight", "canary-weight-total"} {
		w.findKey(c, ruleCanaryWeight, n, "")
	}
	for _, n := range []string{"canary-by-header", "canary-by-header-value", "canary-by-header-pattern"} {
		if rule.Header != "" {
			w.findKey(c, ruleCanaryHeader, n, "")
		} else {
			c.invalid(w, n)
		}
	}
	if rule.Cookie != "" {
		w.findKey(c, ruleCanaryCookie, "canary-by-cookie", "")
	}
	for i, r := range w.tr.Rules {
		for j, path := range r.Paths {
			field := fmt.Sprintf("spec.rules[%d].http.paths[%d]", i, j)
			mains := c.index[pathKey{r.Host, path.Written}]
			if len(mains) == 0 {
				w.find(ruleCanaryNoMain, field, r.Host+path.Written, "")
				continue
			}
			ref, ok := backendRef(w, field, path.Backend)
			if !ok {
				continue
			}
			for _, m := range mains {
				if len(m.r.http.Spec.Rules[m.i].BackendRefs) == 0 {
					w.find(ruleCanaryNoMain, field, r.Host+path.Written, "the main path redirects: there is no traffic to split")
					continue
				}
				c.split(m, ref, w)
			}
		}
	}
	if d := w.ing.Spec.DefaultBackend; d != nil {
		w.find(ruleCanaryNoMain, "spec.defaultBackend", "", "a canary's default backend is not converted")
	}
}

// split adds the canary backend ref to a main rule.
func (c *converter) split(m ruleRef, canary gwv1.BackendRef, w *ingressWork) {
	rule := w.tr.Annotations.Canary
	rt := m.r.http
	main := rt.Spec.Rules[m.i]
	w.rep.Routes = append(w.rep.Routes, "HTTPRoute/"+rt.Name)
	mainRefs := make([]gwv1.HTTPBackendRef, len(main.BackendRefs))
	for i := range main.BackendRefs {
		mainRefs[i] = *main.BackendRefs[i].DeepCopy()
	}
	only := func(refs []gwv1.HTTPBackendRef, h gwv1.HTTPHeaderMatch) gwv1.HTTPRouteRule {
		r := *main.DeepCopy()
		for k := range r.Matches {
			r.Matches[k].Headers = append(r.Matches[k].Headers, h)
		}
		r.BackendRefs = refs
		return r
	}
	canaryRefs := []gwv1.HTTPBackendRef{{BackendRef: canary}}
	name := gwv1.HTTPHeaderName(rule.Header)
	switch {
	case rule.Header == "":
	case rule.HeaderValue != "":
		rt.Spec.Rules = append(rt.Spec.Rules, only(canaryRefs, gwv1.HTTPHeaderMatch{Type: ptr(gwv1.HeaderMatchExact), Name: name, Value: rule.HeaderValue}))
	case rule.HeaderPattern != "":
		rt.Spec.Rules = append(rt.Spec.Rules, only(canaryRefs, gwv1.HTTPHeaderMatch{Type: ptr(gwv1.HeaderMatchRegularExpression), Name: name, Value: rule.HeaderPattern}))
	default:
		rt.Spec.Rules = append(rt.Spec.Rules,
			only(canaryRefs, gwv1.HTTPHeaderMatch{Type: ptr(gwv1.HeaderMatchExact), Name: name, Value: "always"}),
			only(mainRefs, gwv1.HTTPHeaderMatch{Type: ptr(gwv1.HeaderMatchExact), Name: name, Value: "never"}))
	}
	if rule.Weight > 0 {
		main := &rt.Spec.Rules[m.i]
		for i := range main.BackendRefs {
			main.BackendRefs[i].Weight = ptr(int32(rule.WeightTotal - rule.Weight))
		}
		weighted := canary
		weighted.Weight = ptr(int32(rule.Weight))
		main.BackendRefs = append(main.BackendRefs, gwv1.HTTPBackendRef{BackendRef: weighted})
	}
}
