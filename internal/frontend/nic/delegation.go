package nic

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/snippet"
)

// This file reads delegation: a VirtualServer route handing its path to
// VirtualServerRoutes, the one its route field names or those its
// routeSelector selects, and checks a VirtualServerRoute's subroutes
// against the paths delegated to it, with NGINX Ingress Controller's
// rules:
//   - a prefix path: every subroute path starts with it;
//   - an exact path: one subroute, of that exact path;
//   - regex paths (all the VirtualServer's regex routes naming the same
//     VirtualServerRoute): one subroute for each, of the same regex, and
//     no other.

// delegation is a route handing its path to VirtualServerRoutes:
// "namespace/name" (or "name" in the VirtualServer's namespace), or those
// carrying the labels of its routeSelector.
func (t *translator) delegation(field string, r *nicv1.Route, m model.Match) (Route, bool, error) {
	out := Route{Match: m}
	if r.RouteSelector != nil {
		sel, err := t.selector(field+".routeSelector", r.RouteSelector)
		if err != nil {
			return Route{}, false, err
		}
		out.Selector = sel
	} else {
		ns, name, ok := strings.Cut(r.Route, "/")
		if !ok {
			ns, name = t.ref.Namespace, r.Route
		}
		if len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return Route{}, false, fmt.Errorf("%s.route %q is not NAMESPACE/NAME or NAME", field, model.Truncate(r.Route))
		}
		out.Delegate = ns + "/" + name
	}
	// Its policies and errorPages go to the subroutes without their own
	// (see the builder).
	var err error
	if out.Policies, err = policyRefs(field+".policies", t.ref.Namespace, r.Policies); err != nil {
		return Route{}, false, err
	}
	if out.ErrorPages, err = t.errorPages(field, r.ErrorPages); err != nil {
		return Route{}, false, err
	}
	out.Snippet = t.readSnippet(field+".location-snippets", r.LocationSnippets, snippet.Location)
	return out, true, nil
}

// selector reads a routeSelector: NGINX Ingress Controller's rules for
// matchLabels (valid labels, values not empty) and, beyond NIC, which
// reads matchLabels alone, Kubernetes' matchExpressions (In, NotIn,
// Exists, DoesNotExist). It must select by something: at least one label
// or expression.
func (t *translator) selector(field string, s *metav1.LabelSelector) (labels.Selector, error) {
	if len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0 {
		return nil, fmt.Errorf("%s must name at least one label in matchLabels or matchExpressions", field)
	}
	for _, k := range slices.Sorted(maps.Keys(s.MatchLabels)) {
		v := s.MatchLabels[k]
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("%s.matchLabels: label %q: %s", field, model.Truncate(k), strings.Join(errs, "; "))
		}
		if v == "" {
			return nil, fmt.Errorf("%s.matchLabels[%s]: the value must not be empty", field, k)
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("%s.matchLabels[%s] %q: %s", field, k, model.Truncate(v), strings.Join(errs, "; "))
		}
	}
	if len(s.MatchExpressions) > maxSelectorExpressions {
		return nil, fmt.Errorf("%s.matchExpressions: %d expressions, more than %d", field, len(s.MatchExpressions), maxSelectorExpressions)
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", field, model.Truncate(err.Error()))
	}
	return sel, nil
}

// SelectorSelects reports whether a routeSelector selects a
// VirtualServerRoute with these labels; an invalid or empty one selects
// none.
func SelectorSelects(s *metav1.LabelSelector, l map[string]string) bool {
	if s == nil || len(s.MatchLabels)+len(s.MatchExpressions) == 0 {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	return err == nil && sel.Matches(labels.Set(l))
}

// maxSelectorExpressions bounds a routeSelector's matchExpressions.
const maxSelectorExpressions = 32

// Selects reports whether a routeSelector route selects a
// VirtualServerRoute with these labels.
func (r *Route) Selects(l map[string]string) bool {
	return r.Selector != nil && !r.Selector.Empty() && r.Selector.Matches(labels.Set(l))
}

// modifier is NGINX Ingress Controller's kind of a route path.
func modifier(path string) string {
	switch {
	case strings.HasPrefix(path, "~"):
		return "regex"
	case strings.HasPrefix(path, "="):
		return "exact"
	}
	return "prefix"
}

// sameModifier checks that the routes naming one VirtualServerRoute are
// all prefix, all exact or all regex paths, as NGINX Ingress Controller
// requires.
func sameModifier(field string, in []nicv1.Route, namespace string) error {
	first := map[string]string{}
	for i, r := range in {
		if r.Route == "" {
			continue
		}
		key := r.Route
		if !strings.Contains(key, "/") {
			key = namespace + "/" + key
		}
		kind := modifier(r.Path)
		if f, ok := first[key]; ok && f != kind {
			return fmt.Errorf("%s[%d].path %q: the routes naming VirtualServerRoute %s must all be %s paths, like the first", field, i,
				model.Truncate(r.Path), key, f)
		}
		first[key] = kind
	}
	return nil
}

// subroutes translates a VirtualServerRoute's subroutes for the paths
// delegated to it (none: checked on its own).
func (t *translator) subroutes(in []nicv1.Route, upstreams map[string]*Upstream, parents []model.Match) ([]Route, error) {
	const field = "spec.subroutes"
	for i := range in {
		if in[i].Route != "" || in[i].RouteSelector != nil {
			return nil, fmt.Errorf("%s[%d] (path %q): a subroute cannot delegate further", field, i, model.Truncate(in[i].Path))
		}
	}
	if len(parents) > 0 {
		if err := underParents(field, in, parents); err != nil {
			return nil, err
		}
	}
	return t.routes(field, in, upstreams)
}

// underParents checks subroute paths against the delegated paths.
func underParents(field string, in []nicv1.Route, parents []model.Match) error {
	switch p := parents[0]; p.Type {
	case model.Exact:
		if len(in) != 1 {
			return fmt.Errorf("%s: delegated the exact path =%s, it must have one subroute, of that path", field, p.Path)
		}
		if m, err := parseRoutePath(in[0].Path); err == nil && m != p {
			return fmt.Errorf("%s[0].path %q must be the VirtualServer route's exact path =%s", field, model.Truncate(in[0].Path), p.Path)
		}
	case model.Regex:
		want := map[model.Match]bool{}
		for _, m := range parents {
			want[m] = true
		}
		have := map[model.Match]bool{}
		for i := range in {
			m, err := parseRoutePath(in[i].Path)
			if err != nil {
				continue // reported by routes
			}
			if !want[m] {
				return fmt.Errorf("%s[%d].path %q: no VirtualServer route delegating to it has this regex path; "+
					"each subroute must have the regex path of one", field, i, model.Truncate(in[i].Path))
			}
			have[m] = true
		}
		for _, m := range parents {
			if !have[m] {
				return fmt.Errorf("%s: no subroute has the regex path ~*^%s that the VirtualServer delegates to it", field, m.Path)
			}
		}
	default:
		for i := range in {
			if !subroutePath(in[i].Path, p.Path) {
				return fmt.Errorf("%s[%d].path %q must start with the VirtualServer route's path %q", field, i, model.Truncate(in[i].Path), p.Path)
			}
		}
	}
	return nil
}

// subroutePath reports whether a subroute's path lies under the parent's
// prefix: a prefix or exact path starting with it (a regex subroute must
// start with it too, after "~*" and "^").
func subroutePath(p, parent string) bool {
	p = strings.TrimPrefix(p, "=")
	if re, ok := strings.CutPrefix(p, "~*"); ok {
		p = strings.TrimPrefix(strings.TrimSpace(re), "^")
	} else if re, ok := strings.CutPrefix(p, "~"); ok {
		p = strings.TrimPrefix(strings.TrimSpace(re), "^")
	}
	return strings.HasPrefix(p, parent)
}
