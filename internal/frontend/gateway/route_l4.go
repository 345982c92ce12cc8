package gateway

import (
	"fmt"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// StreamRoute is a TLSRoute, TCPRoute or UDPRoute in the model's terms:
// where its connections go. A TCPRoute or UDPRoute shares them among its
// backends by weight (nginx's weighted upstream servers); a TLSRoute's
// server name passes to one upstream, so it serves its first backend
// (the others are a PartiallyInvalid Problem).
type StreamRoute struct {
	Ref model.ObjectRef
	// Created and Ref order routes that claim one listener or hostname:
	// the oldest wins.
	Created time.Time
	// Hostnames are a TLSRoute's spec.hostnames as written.
	Hostnames []string
	// Backends are the backends served, with their weights (above 0);
	// none when none can be (every connection is closed: the spec's rule
	// for an invalid backendRef, whose share of connections fails).
	Backends []StreamBackend
}

// StreamBackend is a stream route's backend and its weight.
type StreamBackend struct {
	Backend
	Weight int
}

// TranslateTLSRoute, TranslateTCPRoute and TranslateUDPRoute check a
// stream route's backendRefs.
func TranslateTLSRoute(r *gwv1.TLSRoute, env RouteEnv) (*StreamRoute, []model.Problem) {
	var refs [][]gwv1.BackendRef
	for _, rule := range r.Spec.Rules {
		refs = append(refs, rule.BackendRefs)
	}
	out, ps := translateStream(refOf(kindTLSRoute, r), r.CreationTimestamp.Time, refs, env, true)
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
	return translateStream(refOf(kindTCPRoute, r), r.CreationTimestamp.Time, refs, env, false)
}

func TranslateUDPRoute(r *gwv1.UDPRoute, env RouteEnv) (*StreamRoute, []model.Problem) {
	var refs [][]gwv1.BackendRef
	for _, rule := range r.Spec.Rules {
		refs = append(refs, rule.BackendRefs)
	}
	return translateStream(refOf(kindUDPRoute, r), r.CreationTimestamp.Time, refs, env, false)
}

// translateStream checks a stream route's backendRefs; one keeps only the
// first backend (a TLSRoute's).
func translateStream(ref model.ObjectRef, created time.Time, rules [][]gwv1.BackendRef, env RouteEnv, one bool) (*StreamRoute, []model.Problem) {
	t := &routeTranslator{ref: ref, env: env}
	out := &StreamRoute{Ref: ref, Created: created}
	n := 0
	for i, refs := range rules {
		for j := range refs {
			br := &refs[j]
			field := fmt.Sprintf("spec.rules[%d].backendRefs[%d]", i, j)
			w := 1
			if br.Weight != nil {
				w = int(*br.Weight)
			}
			if w < 0 || w > model.MaxSplitWeight {
				t.problem(routeCondPartiallyInvalid, routeReasonUnsupportedValue, fmt.Sprintf("%s.weight %d: want 0 to %d; it gets no connection", field, w, model.MaxSplitWeight))
				continue
			}
			if w == 0 {
				continue
			}
			n++
			b, ok := t.backend(field, br.BackendObjectReference)
			switch {
			case one && n > 1:
				t.problem(routeCondPartiallyInvalid, routeReasonUnsupportedValue, fmt.Sprintf("%s: a %s is served by one backend "+
					"(a server name passes to one upstream); this one gets no connection", field, ref.Kind))
			case ok:
				out.Backends = append(out.Backends, StreamBackend{Backend: b, Weight: w})
			}
		}
	}
	if n == 0 {
		t.problem(routeCondResolvedRefs, routeReasonBackendNotFound, "no backendRef of weight above 0: every connection is closed")
	}
	return out, t.problems
}
