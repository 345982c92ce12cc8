package gateway

import (
	"fmt"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// StreamRoute is a TLSRoute, TCPRoute or UDPRoute in the model's terms:
// where its connections go. nginx's stream module proxies a connection to
// one upstream, so a route serves one backend: the first backendRef of
// weight above 0 (the others are a PartiallyInvalid Problem).
type StreamRoute struct {
	Ref model.ObjectRef
	// Created and Ref order routes that claim one listener or hostname:
	// the oldest wins.
	Created time.Time
	// Hostnames are a TLSRoute's spec.hostnames as written.
	Hostnames []string
	// Backend is the backend served; nil when none can be (every
	// connection is closed: the spec's rule for an invalid backendRef,
	// whose share of connections fails).
	Backend *Backend
}

// TranslateTLSRoute, TranslateTCPRoute and TranslateUDPRoute check a
// stream route's backendRefs.
func TranslateTLSRoute(r *gwv1.TLSRoute, env RouteEnv) (*StreamRoute, []model.Problem) {
	var refs [][]gwv1.BackendRef
	for _, rule := range r.Spec.Rules {
		refs = append(refs, rule.BackendRefs)
	}
	out, ps := translateStream(refOf(kindTLSRoute, r), r.CreationTimestamp.Time, refs, env)
	for _, h := range r.Spec.Hostnames {
		out.Hostnames = append(out.Hostnames, string(h))
	}
	return out, ps
}

func TranslateTCPRoute(r *gwv1.TCPRoute, env RouteEnv) (*StreamRoute, []model.Problem) {
	var refs [][]gwv1.BackendRef
	for _, rule := range r.Spec.Rules {
		refs = append(refs, rule.BackendRefs)
	}
	return translateStream(refOf(kindTCPRoute, r), r.CreationTimestamp.Time, refs, env)
}

func TranslateUDPRoute(r *gwv1.UDPRoute, env RouteEnv) (*StreamRoute, []model.Problem) {
	var refs [][]gwv1.BackendRef
	for _, rule := range r.Spec.Rules {
		refs = append(refs, rule.BackendRefs)
	}
	return translateStream(refOf(kindUDPRoute, r), r.CreationTimestamp.Time, refs, env)
}

// translateStream picks the one backend of a stream route's rules.
func translateStream(ref model.ObjectRef, created time.Time, rules [][]gwv1.BackendRef, env RouteEnv) (*StreamRoute, []model.Problem) {
	t := &routeTranslator{ref: ref, env: env}
	out := &StreamRoute{Ref: ref, Created: created}
	n := 0
	for i, refs := range rules {
		for j := range refs {
			br := &refs[j]
			field := fmt.Sprintf("spec.rules[%d].backendRefs[%d]", i, j)
			if br.Weight != nil && *br.Weight == 0 {
				continue
			}
			n++
			b, ok := t.backend(field, br.BackendObjectReference)
			switch {
			case n > 1:
				t.problem(routeCondPartiallyInvalid, routeReasonUnsupportedValue, fmt.Sprintf("%s: a %s is served by one backend "+
					"(nginx's stream proxy has one upstream per listener); this one gets no connection", field, ref.Kind))
			case ok:
				out.Backend = &b
			}
		}
	}
	if n == 0 {
		t.problem(routeCondResolvedRefs, routeReasonBackendNotFound, "no backendRef of weight above 0: every connection is closed")
	}
	return out, t.problems
}
