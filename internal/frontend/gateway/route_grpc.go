package gateway

import (
	"fmt"
	"regexp"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// GRPCRouteRef names a GRPCRoute.
func GRPCRouteRef(r *gwv1.GRPCRoute) model.ObjectRef {
	return model.ObjectRef{Kind: "GRPCRoute", Namespace: r.Namespace, Name: r.Name, UID: string(r.UID)}
}

// gRPC's names (the spec's GRPCMethodMatch grammars).
var (
	grpcService = regexp.MustCompile(`^(?i)\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$`)
	grpcMethod  = regexp.MustCompile(`^[A-Za-z_][A-Za-z_0-9]*$`)
)

// TranslateGRPCRoute translates a GRPCRoute as the HTTPRoute it means: a
// method match is a path match on "/service/method" (Exact with both,
// PathPrefix "/service" with the service alone, a regular expression
// otherwise), header matches and filters are HTTPRoute's, and every rule
// speaks gRPC to its backends. Precedence is HTTPRoute's (Exact, then the
// longest path, then the most header matches), which orders a service
// and method match before a service match, as the spec asks. Problems
// name the HTTPRoute field each GRPCRoute field became.
func TranslateGRPCRoute(g *gwv1.GRPCRoute, env RouteEnv) (*RouteRules, []model.Problem) {
	ref := GRPCRouteRef(g)
	h := &gwv1.HTTPRoute{ObjectMeta: g.ObjectMeta}
	h.Spec.Hostnames = g.Spec.Hostnames
	var early []model.Problem
	for i, r := range g.Spec.Rules {
		hr, err := grpcRule(fmt.Sprintf("spec.rules[%d]", i), &r)
		if err != nil {
			// Keep the rule's place (Index) with a match that fails to
			// translate, so the HTTPRoute logic reports it as any
			// other left-out rule.
			early = append(early, model.Problem{Object: ref, Reason: err.reason, Message: err.msg,
				Condition: routeCondition(routeCondPartiallyInvalid, err.reason)})
			hr = gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: ptrTo(gwv1.PathMatchType("GRPCRefused"))}}}}
		}
		h.Spec.Rules = append(h.Spec.Rules, hr)
	}
	out, problems := translateRoute(h, ref, env)
	problems = dropRefusedMarkers(problems)
	for i := range problems {
		problems[i].Object = ref
	}
	if out == nil {
		for i := range early {
			early[i].Condition, early[i].Rejected = routeCondition(routeCondAccepted, early[i].Reason), true
		}
		return nil, append(early, problems...)
	}
	out.Ref = ref
	for i := range out.Rules {
		p := out.Rules[i].Policy
		if p == nil {
			p = &model.Policy{}
		}
		p.Protocol = model.ProtocolGRPC
		if len(out.Rules[i].Mirrors) > 0 {
			// A copy of a gRPC request would need grpc_pass to the
			// request's own path, which nginx's mirror does not give.
			p.Mirrors, out.Rules[i].Mirrors = nil, nil
			problems = append(problems, model.Problem{Object: ref, Reason: routeReasonUnsupportedValue,
				Condition: routeCondition(routeCondPartiallyInvalid, routeReasonUnsupportedValue),
				Message:   fmt.Sprintf("spec.rules[%d]: RequestMirror is not served for GRPCRoutes by this version of Causeway; requests are not mirrored", out.Rules[i].Index)})
		}
		out.Rules[i].Policy = p
	}
	return out, append(early, problems...)
}

// dropRefusedMarkers removes the Problems of the rules grpcRule already
// reported.
func dropRefusedMarkers(ps []model.Problem) []model.Problem {
	var out []model.Problem
	for _, p := range ps {
		if !strings.Contains(p.Message, `"GRPCRefused"`) {
			out = append(out, p)
		}
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

// grpcRule is a GRPCRoute rule as an HTTPRoute rule.
func grpcRule(field string, r *gwv1.GRPCRouteRule) (gwv1.HTTPRouteRule, *ruleError) {
	out := gwv1.HTTPRouteRule{Name: r.Name, SessionPersistence: r.SessionPersistence}
	for j, m := range r.Matches {
		hm, err := grpcMatch(fmt.Sprintf("%s.matches[%d]", field, j), &m)
		if err != nil {
			return out, err
		}
		out.Matches = append(out.Matches, hm)
	}
	for _, f := range r.Filters {
		out.Filters = append(out.Filters, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterType(f.Type),
			RequestHeaderModifier: f.RequestHeaderModifier, ResponseHeaderModifier: f.ResponseHeaderModifier,
			RequestMirror: f.RequestMirror, ExtensionRef: f.ExtensionRef})
	}
	for _, b := range r.BackendRefs {
		hb := gwv1.HTTPBackendRef{BackendRef: b.BackendRef}
		for _, f := range b.Filters {
			hb.Filters = append(hb.Filters, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterType(f.Type),
				RequestHeaderModifier: f.RequestHeaderModifier, ResponseHeaderModifier: f.ResponseHeaderModifier,
				RequestMirror: f.RequestMirror, ExtensionRef: f.ExtensionRef})
		}
		out.BackendRefs = append(out.BackendRefs, hb)
	}
	return out, nil
}

// grpcMatch is a GRPCRouteMatch as an HTTPRouteMatch.
func grpcMatch(field string, m *gwv1.GRPCRouteMatch) (gwv1.HTTPRouteMatch, *ruleError) {
	var out gwv1.HTTPRouteMatch
	for _, h := range m.Headers {
		hm := gwv1.HTTPHeaderMatch{Name: gwv1.HTTPHeaderName(h.Name), Value: h.Value}
		if h.Type != nil {
			hm.Type = ptrTo(gwv1.HeaderMatchType(*h.Type))
		}
		out.Headers = append(out.Headers, hm)
	}
	mm := m.Method
	if mm == nil {
		return out, nil
	}
	var service, method string
	if mm.Service != nil {
		service = *mm.Service
	}
	if mm.Method != nil {
		method = *mm.Method
	}
	typ := gwv1.GRPCMethodMatchExact
	if mm.Type != nil {
		typ = *mm.Type
	}
	switch typ {
	case gwv1.GRPCMethodMatchExact:
		if service != "" && !grpcService.MatchString(service) {
			return out, ruleUnsupported("%s.method.service %q: not a gRPC service name", field, model.Truncate(service))
		}
		if method != "" && !grpcMethod.MatchString(method) {
			return out, ruleUnsupported("%s.method.method %q: not a gRPC method name", field, model.Truncate(method))
		}
		switch {
		case service != "" && method != "":
			out.Path = &gwv1.HTTPPathMatch{Type: ptrTo(gwv1.PathMatchExact), Value: ptrTo("/" + service + "/" + method)}
		case service != "":
			out.Path = &gwv1.HTTPPathMatch{Type: ptrTo(gwv1.PathMatchPathPrefix), Value: ptrTo("/" + service)}
		case method != "":
			out.Path = &gwv1.HTTPPathMatch{Type: ptrTo(gwv1.PathMatchRegularExpression), Value: ptrTo("/[^/]+/" + method)}
		}
	case gwv1.GRPCMethodMatchRegularExpression:
		out.Path = &gwv1.HTTPPathMatch{Type: ptrTo(gwv1.PathMatchRegularExpression),
			Value: ptrTo("/" + orDefault(service, "[^/]+") + "/" + orDefault(method, "[^/]+"))}
	default:
		return out, ruleUnsupported("%s.method.type %q: want Exact or RegularExpression", field, model.Truncate(string(typ)))
	}
	return out, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
