package gateway

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// An HTTPRoute's rules, in the model's terms (route*.go). The translation
// is pure: what it needs beyond the route (Services, ReferenceGrants) it
// asks RouteEnv. Its output, RouteRules, is per route; Compose then orders the
// matches of every route of one host in the spec's precedence and gives
// each location its model.Split (route_compose.go).

// The Gateway API condition types and reasons a route's Problems carry
// (model.Problem.Condition, made by routeCondition): the API's own
// constants, as strings. PartiallyInvalid is True when set; the others are
// False.
const (
	routeCondAccepted         = string(gwv1.RouteConditionAccepted)
	routeCondResolvedRefs     = string(gwv1.RouteConditionResolvedRefs)
	routeCondPartiallyInvalid = string(gwv1.RouteConditionPartiallyInvalid)

	routeReasonUnsupportedValue    = string(gwv1.RouteReasonUnsupportedValue)
	routeReasonIncompatibleFilters = string(gwv1.RouteReasonIncompatibleFilters)
	routeReasonBackendNotFound     = string(gwv1.RouteReasonBackendNotFound)
	routeReasonInvalidKind         = string(gwv1.RouteReasonInvalidKind)
	routeReasonRefNotPermitted     = string(gwv1.RouteReasonRefNotPermitted)
)

// RefEnd is one end of a reference across namespaces: the route that
// refers (Name empty) or the object it names.
type RefEnd struct {
	Group, Kind, Namespace, Name string
}

// RouteEnv is what a route's translation reads beyond the route.
type RouteEnv struct {
	// Permitted reports whether a ReferenceGrant in to's namespace lets
	// from refer to to. It is asked only for references across
	// namespaces; nil permits none.
	Permitted func(from, to RefEnd) bool
	// ServicePort reports whether Service namespace/name exists and
	// whether it has port; nil knows no Service.
	ServicePort func(namespace, name string, port int32) (exists, hasPort bool)
	// AppProtocol is the appProtocol of a Service's port, "" when it has
	// none (appprotocol.go); nil knows none.
	AppProtocol func(namespace, name string, port int32) string
	// BackendTLS is the BackendTLSPolicy that applies to a backend, nil
	// when none does or it is nil (backendtls.go).
	BackendTLS func(Backend) *BackendTLSPolicy
}

// RouteRules is an HTTPRoute (or a GRPCRoute) in the model's terms.
type RouteRules struct {
	Ref model.ObjectRef
	// Created and Ref order routes whose matches tie (oldest first, then
	// "namespace/name").
	Created time.Time
	// Rank orders routes before any match does, lower first: how
	// specific the hostname is by which a server has the route (an exact
	// hostname, then the longest wildcard, then none; HTTPRouteSpec
	// Hostnames). It is 0 in the translation's output; each server sets
	// it on a copy.
	Rank int
	// Hostnames are spec.hostnames as written (checked by the
	// attachment, which intersects them with the listeners').
	Hostnames []string
	// Rules are the rules served, in the order written; Index says which
	// spec.rules entry each is.
	Rules []Rule
}

// Rule is one served spec.rules entry.
type Rule struct {
	Index int
	// Name is the rule's name, "" when not set.
	Name    string
	Matches []Match
	// Targets share the rule's requests by weight: backends, and 500
	// answers for the shares of invalid backendRefs (the spec's rule).
	// Empty when Redirect is set.
	Targets []Target
	// Redirect answers every request of the rule (RequestRedirect).
	Redirect *Redirect
	// Policy is what the rule's filters and timeouts apply to proxied
	// requests; nil when nothing.
	Policy *model.Policy
	// Mirrors are RequestMirror's backends; each gets a copy of every
	// request (Percent of them when less than 100).
	Mirrors []Mirror
	// Session is the sticky cookie of sessionPersistence
	// (route_session.go), also on each of Targets' backends; nil without.
	Session *model.StickyCookie
}

// Backend is a Service port a rule proxies or mirrors to.
type Backend struct {
	Namespace, Service string
	Port               int32
	// Session, when set, makes the backend a persistent rule's own,
	// balanced by this sticky cookie (route_session.go).
	Session *model.StickyCookie
}

// Key is the model.Backend key: "namespace/service/port", and for a
// persistent rule's backend a suffix naming its cookie.
func (b Backend) Key() string {
	k := b.Namespace + "/" + b.Service + "/" + strconv.Itoa(int(b.Port))
	if b.Session != nil {
		k += sessionKey(b.Session)
	}
	return k
}

// Target is a backend, or a fixed answer (Status, 500 for an invalid
// backendRef), and its weight.
type Target struct {
	Backend *Backend
	Status  int
	Weight  int
	// TLS is the BackendTLSPolicy of the backend, nil when none applies;
	// when it is not honoured, Backend is nil and Status 503.
	TLS *BackendTLSPolicy
	// Headers are the backendRef's own request header edits, applied
	// after the rule's (which the rule's policy applies) to the requests
	// sent to Backend, when they differ from the rule's other backends';
	// nil when the rule's policy applies them to every request
	// (route_backend_filters.go).
	Headers model.RequestHeaders
}

// Mirror is one RequestMirror filter.
type Mirror struct {
	Backend Backend
	// Percent of requests are mirrored, 0 to 100.
	Percent int
}

// HTTPRouteRef names an HTTPRoute.
func HTTPRouteRef(r *gwv1.HTTPRoute) model.ObjectRef {
	return model.ObjectRef{Kind: "HTTPRoute", Namespace: r.Namespace, Name: r.Name, UID: string(r.UID)}
}

// Bounds beyond the API's own (the files source skips API validation, so
// the API's bounds are checked here too).
const (
	maxRules       = 16
	maxRuleMatches = 64
	maxMatches     = 128
	maxBackendRefs = 16
	maxFilters     = 16
)

// routeCondition is the route's condition cond with reason, as a Problem
// carries it: PartiallyInvalid True, the others False.
func routeCondition(cond, reason string) *model.StatusCondition {
	status := "False"
	if cond == routeCondPartiallyInvalid {
		status = "True"
	}
	return &model.StatusCondition{Type: cond, Status: status, Reason: reason}
}

// routeTranslator collects the Problems of one route.
type routeTranslator struct {
	ref      model.ObjectRef
	env      RouteEnv
	problems []model.Problem
}

// problem reports a Problem that sets condition with reason.
func (t *routeTranslator) problem(cond, reason, msg string) {
	t.problems = append(t.problems, model.Problem{Object: t.ref, Reason: reason, Message: msg,
		Condition: routeCondition(cond, reason)})
}

// ruleError is why a rule is left out: the reason it implies.
type ruleError struct {
	reason string
	msg    string
}

func (e *ruleError) Error() string { return e.msg }

func ruleUnsupported(format string, args ...any) *ruleError {
	return &ruleError{reason: routeReasonUnsupportedValue, msg: fmt.Sprintf(format, args...)}
}

// TranslateHTTPRoute checks an HTTPRoute's rules and translates those it
// can serve. A rule the model cannot express as written is left out with
// a Problem: PartiallyInvalid (True, UnsupportedValue) while other rules
// are served, Accepted (False) with the rule's reason, the route rejected,
// when none is. A backendRef that cannot be used answers 500 for its
// share, with a ResolvedRefs Problem. The route is nil when rejected.
func TranslateHTTPRoute(r *gwv1.HTTPRoute, env RouteEnv) (*RouteRules, []model.Problem) {
	return translateRoute(r, HTTPRouteRef(r), env)
}

// translateRoute is TranslateHTTPRoute for the route ref, which a
// GRPCRoute's translation names: ReferenceGrants are checked from its
// kind, and its Problems and names are its own.
func translateRoute(r *gwv1.HTTPRoute, ref model.ObjectRef, env RouteEnv) (*RouteRules, []model.Problem) {
	t := &routeTranslator{ref: ref, env: env}
	out := &RouteRules{Ref: t.ref, Created: r.CreationTimestamp.Time}
	for _, h := range r.Spec.Hostnames {
		out.Hostnames = append(out.Hostnames, string(h))
	}
	rules := r.Spec.Rules
	if len(rules) == 0 {
		// The API's default: one rule matching every request, with no
		// backend (so answering 500).
		rules = []gwv1.HTTPRouteRule{{}}
	}
	var dropped []*ruleError
	total := 0
	for i := range rules {
		total += max(len(rules[i].Matches), 1)
	}
	switch {
	case len(rules) > maxRules:
		dropped = append(dropped, ruleUnsupported("spec.rules: %d rules, at most %d", len(rules), maxRules))
	case total > maxMatches:
		dropped = append(dropped, ruleUnsupported("spec.rules: %d matches in all, at most %d", total, maxMatches))
	default:
		names := map[string]bool{}
		for i := range rules {
			rule, err := t.rule(i, &rules[i], names)
			if err != nil {
				dropped = append(dropped, err)
				continue
			}
			out.Rules = append(out.Rules, rule)
		}
	}
	if len(out.Rules) == 0 {
		for _, e := range dropped {
			t.problems = append(t.problems, model.Problem{Object: t.ref, Reason: e.reason, Rejected: true,
				Message: e.msg + "; no rule is left, the route is not served", Condition: routeCondition(routeCondAccepted, e.reason)})
		}
		return nil, t.problems
	}
	for _, e := range dropped {
		t.problem(routeCondPartiallyInvalid, e.reason, e.msg+"; the rule is left out")
	}
	return out, t.problems
}

// rule translates spec.rules[i].
func (t *routeTranslator) rule(i int, in *gwv1.HTTPRouteRule, names map[string]bool) (Rule, *ruleError) {
	field := fmt.Sprintf("spec.rules[%d]", i)
	out := Rule{Index: i}
	if in.Name != nil {
		n := string(*in.Name)
		if err := checkSectionName(n); err != nil {
			return Rule{}, ruleUnsupported("%s.name %q: %v", field, model.Truncate(n), err)
		}
		if names[n] {
			return Rule{}, ruleUnsupported("%s.name %q is another rule's", field, n)
		}
		names[n] = true
		out.Name = n
	}
	matches := in.Matches
	if len(matches) == 0 {
		matches = []gwv1.HTTPRouteMatch{{}}
	}
	if len(matches) > maxRuleMatches {
		return Rule{}, ruleUnsupported("%s.matches: %d matches, at most %d", field, len(matches), maxRuleMatches)
	}
	for j := range matches {
		m, err := translateMatch(fmt.Sprintf("%s.matches[%d]", field, j), &matches[j])
		if err != nil {
			return Rule{}, err
		}
		out.Matches = append(out.Matches, m)
	}
	f, err := t.filters(field+".filters", in.Filters, out.Matches)
	if err != nil {
		return Rule{}, err
	}
	out.Redirect, out.Mirrors = f.redirect, f.mirrors
	pol := f.policy
	if in.Timeouts != nil {
		if pol, err = ruleTimeouts(field+".timeouts", in.Timeouts, pol); err != nil {
			return Rule{}, err
		}
	}
	if in.Retry != nil {
		if pol, err = ruleRetry(field+".retry", in.Retry, pol); err != nil {
			return Rule{}, err
		}
	}
	if in.SessionPersistence != nil {
		rule := strconv.Itoa(i)
		if out.Name != "" {
			rule = out.Name
		}
		if out.Session, err = sessionCookie(field+".sessionPersistence", t.ref, rule, out.Matches, in.SessionPersistence); err != nil {
			return Rule{}, err
		}
	}
	if out.Redirect != nil {
		if len(in.BackendRefs) > 0 {
			return Rule{}, &ruleError{reason: routeReasonIncompatibleFilters,
				msg: field + ": a RequestRedirect filter goes with no backendRefs"}
		}
		if out.Session != nil {
			return Rule{}, &ruleError{reason: routeReasonIncompatibleFilters,
				msg: field + ": sessionPersistence keeps a client on a backend, and a rule with a RequestRedirect filter has none"}
		}
		if !pol.empty() {
			out.Policy = pol.Policy
		}
		return out, nil
	}
	if out.Targets, err = t.backendRefs(field+".backendRefs", in.BackendRefs); err != nil {
		return Rule{}, err
	}
	edits := f.headers
	if own, shared := sharedHeaders(out.Targets); shared {
		// Every backend has the same edits of its own: the location
		// applies them, after the rule's, to every request, and nothing
		// is picked early.
		edits = edits.Then(own)
		for i := range out.Targets {
			out.Targets[i].Headers = nil
		}
	}
	if f.hasHeaders || len(edits) > 0 {
		joinSnippet(&pol, edits.Snippet())
	}
	if !pol.empty() {
		out.Policy = pol.Policy
	}
	for _, tg := range out.Targets {
		if tg.Backend != nil {
			tg.Backend.Session = out.Session
		}
	}
	return out, nil
}

// sectionName is Gateway API's SectionName grammar.
var sectionName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func checkSectionName(s string) error {
	if len(s) > 253 || !sectionName.MatchString(s) {
		return fmt.Errorf("want 1 to 253 lower-case letters, digits and -, starting and ending with a letter or digit")
	}
	return nil
}

// backendRefs translates a rule's backendRefs into weighted targets. A
// backendRef that cannot be used keeps its share as a 500 answer, with a
// ResolvedRefs Problem (the spec's rule); no backendRef at all answers
// 500 to every request; weights all 0 leave the rule answering 500 too.
func (t *routeTranslator) backendRefs(field string, refs []gwv1.HTTPBackendRef) ([]Target, *ruleError) {
	if len(refs) > maxBackendRefs {
		return nil, ruleUnsupported("%s: %d backendRefs, at most %d", field, len(refs), maxBackendRefs)
	}
	if len(refs) == 0 {
		return []Target{{Status: 500, Weight: 1}}, nil
	}
	var out []Target
	sum := 0
	for i := range refs {
		ref := &refs[i]
		f := fmt.Sprintf("%s[%d]", field, i)
		w := 1
		if ref.Weight != nil {
			w = int(*ref.Weight)
		}
		if w < 0 || w > model.MaxSplitWeight {
			return nil, ruleUnsupported("%s.weight %d: want 0 to %d", f, w, model.MaxSplitWeight)
		}
		own, err := backendFilters(f+".filters", ref.Filters)
		if err != nil {
			return nil, err
		}
		sum += w
		b, ok := t.backend(f, ref.BackendObjectReference)
		if !ok {
			if w > 0 {
				out = append(out, Target{Status: 500, Weight: w})
			}
			continue
		}
		// A backend of weight 0 gets no request but stays a target, so
		// that giving it a weight later is a new weight in the balancer's
		// state, not a new location (a reload).
		tg := t.backendTarget(f, b, w)
		if tg.Backend != nil {
			tg.Headers = own
		}
		out = append(out, tg)
	}
	if sum == 0 {
		// Every weight is 0: no backend is picked, every request
		// answers 500.
		return []Target{{Status: 500, Weight: 1}}, nil
	}
	return out, nil
}

// backend checks one reference to a backend: a core Service (the only
// kind served), in the route's namespace or one whose ReferenceGrant
// allows it, that exists and has the port. ok is false, with a
// ResolvedRefs Problem, when the reference cannot be used.
func (t *routeTranslator) backend(field string, ref gwv1.BackendObjectReference) (Backend, bool) {
	group, kind := "", "Service"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	ns := t.ref.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	name := string(ref.Name)
	if (group != "" && group != "core") || kind != "Service" {
		t.problem(routeCondResolvedRefs, routeReasonInvalidKind, fmt.Sprintf("%s: kind %q of group %q: only core Services are backends; its share answers 500",
			field, model.Truncate(kind), model.Truncate(group)))
		return Backend{}, false
	}
	if err := model.ValidateServiceName(name); err != nil {
		t.problem(routeCondResolvedRefs, routeReasonBackendNotFound, fmt.Sprintf("%s: %v; its share answers 500", field, err))
		return Backend{}, false
	}
	if err := model.ValidateObjectName("namespace", ns); err != nil {
		t.problem(routeCondResolvedRefs, routeReasonBackendNotFound, fmt.Sprintf("%s: %v; its share answers 500", field, err))
		return Backend{}, false
	}
	if ns != t.ref.Namespace {
		from := RefEnd{Group: gwv1.GroupName, Kind: t.ref.Kind, Namespace: t.ref.Namespace}
		to := RefEnd{Group: "", Kind: "Service", Namespace: ns, Name: name}
		if t.env.Permitted == nil || !t.env.Permitted(from, to) {
			t.problem(routeCondResolvedRefs, routeReasonRefNotPermitted, fmt.Sprintf("%s: Service %s/%s is in another namespace, "+
				"and no ReferenceGrant there allows this route to refer to it; its share answers 500", field, ns, name))
			return Backend{}, false
		}
	}
	if ref.Port == nil {
		t.problem(routeCondResolvedRefs, routeReasonUnsupportedValue, fmt.Sprintf("%s: a Service backend needs a port; its share answers 500", field))
		return Backend{}, false
	}
	port := int32(*ref.Port)
	if port < 1 || port > 65535 {
		t.problem(routeCondResolvedRefs, routeReasonUnsupportedValue, fmt.Sprintf("%s.port %d: want 1 to 65535; its share answers 500", field, port))
		return Backend{}, false
	}
	exists, hasPort := false, false
	if t.env.ServicePort != nil {
		exists, hasPort = t.env.ServicePort(ns, name, port)
	}
	switch {
	case !exists:
		t.problem(routeCondResolvedRefs, routeReasonBackendNotFound, fmt.Sprintf("%s: Service %s/%s does not exist; its share answers 500", field, ns, name))
		return Backend{}, false
	case !hasPort:
		t.problem(routeCondResolvedRefs, routeReasonBackendNotFound, fmt.Sprintf("%s: Service %s/%s has no port %d; its share answers 500", field, ns, name, port))
		return Backend{}, false
	}
	b := Backend{Namespace: ns, Service: name, Port: port}
	return b, t.checkProtocol(field, b)
}

// routePolicy is a rule's policy while its filters are read.
type routePolicy struct{ *model.Policy }

func (p routePolicy) empty() bool { return p.Policy == nil }

// get returns the policy, made on first use.
func (p *routePolicy) get() *model.Policy {
	if p.Policy == nil {
		p.Policy = &model.Policy{}
	}
	return p.Policy
}

// gatewayDuration is GEP-2257's Duration grammar.
var gatewayDuration = regexp.MustCompile(`^([0-9]{1,5}(h|m|s|ms)){1,4}$`)

// maxTimeout stands for a timeout of 0 ("no timeout"): the longest the
// model's durations go.
const maxTimeout = 24 * time.Hour

// parseGatewayDuration reads a Gateway API Duration: 0 is maxTimeout,
// and longer than it is refused.
func parseGatewayDuration(s string) (time.Duration, error) {
	d, err := readGatewayDuration(s)
	switch {
	case err != nil:
		return 0, err
	case d == 0:
		return maxTimeout, nil
	case d > maxTimeout:
		return 0, fmt.Errorf("%s is longer than %s", s, maxTimeout)
	case d < time.Millisecond:
		return 0, fmt.Errorf("%s is shorter than 1ms", s)
	}
	return d, nil
}

// readGatewayDuration reads GEP-2257's Duration grammar.
func readGatewayDuration(s string) (time.Duration, error) {
	if !gatewayDuration.MatchString(s) {
		return 0, fmt.Errorf("%q is not a Gateway API duration such as 10s or 1m30s", model.Truncate(s))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q: %v", s, err)
	}
	return d, nil
}

// timeouts translates a rule's timeouts. nginx has no timeout of a
// whole request: backendRequest (else request) bounds each read from and
// write to the backend (proxy_read_timeout, proxy_send_timeout), which is
// what a backend that is slow to answer meets, and request bounds the
// time spent retrying other endpoints (proxy_next_upstream_timeout).
func ruleTimeouts(field string, in *gwv1.HTTPRouteTimeouts, pol routePolicy) (routePolicy, *ruleError) {
	var req, backend time.Duration
	var err error
	if in.Request != nil {
		if req, err = parseGatewayDuration(string(*in.Request)); err != nil {
			return pol, ruleUnsupported("%s.request: %v", field, err)
		}
	}
	if in.BackendRequest != nil {
		if backend, err = parseGatewayDuration(string(*in.BackendRequest)); err != nil {
			return pol, ruleUnsupported("%s.backendRequest: %v", field, err)
		}
		if req != 0 && req != maxTimeout && backend > req {
			return pol, ruleUnsupported("%s: backendRequest %s is longer than request %s", field, *in.BackendRequest, *in.Request)
		}
	}
	if req == 0 && backend == 0 {
		return pol, nil
	}
	p := pol.get()
	per := cmp.Or(backend, req)
	p.Timeouts.Read, p.Timeouts.Send = per, per
	if req != 0 {
		p.Retry.Timeout = req
	}
	return pol, nil
}
