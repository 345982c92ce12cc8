package gateway

import (
	"fmt"
	"reflect"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// A backendRef's own filters (HTTPBackendRef.Filters) apply only to the
// requests sent to that backend. Causeway serves RequestHeaderModifier
// there (HTTPRouteBackendRequestHeaderModification), after the rule's
// own. When every backend of a rule has the same edits (one backendRef,
// or the same filter on each), the rule's policy applies the rule's and
// then those (model.RequestHeaders.Then) to every request, as a rule's
// filter. Otherwise the policy applies the rule's, and each target
// carries its own into the location's split (Location): the balancer's
// access hook picks the backend before nginx builds the request and sets
// the variables of the headers it edits, on top of what the location
// would send (render/split_headers.go). Every other filter type is
// refused there: the rule is left out, as for an unknown filter.

// backendFilters checks a backendRef's filters: RequestHeaderModifier
// only, once.
func backendFilters(field string, in []gwv1.HTTPRouteFilter) (model.RequestHeaders, *ruleError) {
	if len(in) > maxFilters {
		return nil, ruleUnsupported("%s: %d filters, at most %d", field, len(in), maxFilters)
	}
	var out model.RequestHeaders
	seen := false
	for i := range in {
		f := &in[i]
		ff := fmt.Sprintf("%s[%d]", field, i)
		if f.Type != gwv1.HTTPRouteFilterRequestHeaderModifier {
			return nil, ruleUnsupported("%s: %s filters of one backendRef are not supported by Causeway (RequestHeaderModifier is)",
				ff, model.Truncate(string(f.Type)))
		}
		if seen {
			return nil, ruleUnsupported("%s: a second %s filter", ff, f.Type)
		}
		seen = true
		if f.RequestHeaderModifier == nil {
			return nil, ruleUnsupported("%s.requestHeaderModifier is required", ff)
		}
		var err *ruleError
		if out, err = requestHeaders(ff+".requestHeaderModifier", f.RequestHeaderModifier); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sharedHeaders returns the edits of their own every backend of targets
// has, and true when they all have the same (none when no target is a
// backend).
func sharedHeaders(targets []Target) (model.RequestHeaders, bool) {
	var first *Target
	for i := range targets {
		t := &targets[i]
		if t.Backend == nil {
			continue
		}
		if first == nil {
			first = t
			continue
		}
		if !reflect.DeepEqual(t.Headers, first.Headers) && (len(t.Headers) > 0 || len(first.Headers) > 0) {
			return nil, false
		}
	}
	if first == nil {
		return nil, true
	}
	return first.Headers, true
}

// splitHeaders numbers the edits of a location's targets for its split
// (model.Split.Headers, Target.Headers): the same edits share a number.
type splitHeaders struct {
	split *model.Split
}

// index returns the number of edits h in the split, 0 for none.
func (s splitHeaders) index(h model.RequestHeaders) int {
	if len(h) == 0 {
		return 0
	}
	for i, o := range s.split.Headers {
		if reflect.DeepEqual(o, h) {
			return i + 1
		}
	}
	s.split.Headers = append(s.split.Headers, h)
	return len(s.split.Headers)
}
