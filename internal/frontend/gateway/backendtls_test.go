package gateway

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// testCA accepts ConfigMap "ca" (and "other-ca") of any namespace.
func testCA(ns, name string) (string, error) {
	switch name {
	case "ca", "other-ca":
		return ns + "/" + name, nil
	case "malformed":
		return "", errors.New("ConfigMap " + ns + "/malformed has no key ca.crt")
	}
	return "", errors.New("ConfigMap " + ns + "/" + name + " not found")
}

// btls makes a BackendTLSPolicy in namespace "infra" for Service svc
// (port section when not ""), created at second created, verifying
// abc.example.com against ConfigMap "ca".
func btls(name string, created int64, svc, section string) *gwv1.BackendTLSPolicy {
	t := gwv1.LocalPolicyTargetReferenceWithSectionName{LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{
		Group: "", Kind: "Service", Name: gwv1.ObjectName(svc)}}
	if section != "" {
		t.SectionName = routePtr(gwv1.SectionName(section))
	}
	return &gwv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: name, Generation: 2, CreationTimestamp: metav1.NewTime(time.Unix(created, 0))},
		Spec: gwv1.BackendTLSPolicySpec{TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{t},
			Validation: gwv1.BackendTLSPolicyValidation{Hostname: "abc.example.com",
				CACertificateRefs: []gwv1.LocalObjectReference{{Group: "", Kind: "ConfigMap", Name: "ca"}}}},
	}
}

func TestBackendTLSPolicyConditions(t *testing.T) {
	system := gwv1.WellKnownCACertificatesSystem
	custom := gwv1.WellKnownCACertificatesType("example.com/cas")
	for _, tc := range []struct {
		name   string
		change func(p *gwv1.BackendTLSPolicy)
		// accepted and resolved are the reasons of the conditions.
		accepted, resolved string
		tls                *model.UpstreamTLS
		msg                string
	}{
		{name: "a ConfigMap's CA", change: func(*gwv1.BackendTLSPolicy) {},
			accepted: "Accepted", resolved: "ResolvedRefs",
			tls: &model.UpstreamTLS{CAConfigMap: "infra/ca", Verify: true, VerifyDepth: maxVerifyDepth, Name: "abc.example.com", ServerName: true}},
		{name: "the system's CAs", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.CACertificateRefs = nil
			p.Spec.Validation.WellKnownCACertificates = &system
		}, accepted: "Accepted", resolved: "ResolvedRefs",
			tls: &model.UpstreamTLS{SystemCAs: true, Verify: true, VerifyDepth: maxVerifyDepth, Name: "abc.example.com", ServerName: true}},
		{name: "a subjectAltName that is the hostname", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.SubjectAltNames = []gwv1.SubjectAltName{{Type: gwv1.HostnameSubjectAltNameType, Hostname: "abc.example.com"}}
		}, accepted: "Accepted", resolved: "ResolvedRefs",
			tls: &model.UpstreamTLS{CAConfigMap: "infra/ca", Verify: true, VerifyDepth: maxVerifyDepth, Name: "abc.example.com", ServerName: true}},
		{name: "another subjectAltName", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.SubjectAltNames = []gwv1.SubjectAltName{{Type: gwv1.HostnameSubjectAltNameType, Hostname: "other.example.com"}}
		}, accepted: "Invalid", resolved: "ResolvedRefs", msg: "subjectAltNames[0]"},
		{name: "a URI subjectAltName", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.SubjectAltNames = []gwv1.SubjectAltName{{Type: gwv1.URISubjectAltNameType, URI: "spiffe://x/y"}}
		}, accepted: "Invalid", resolved: "ResolvedRefs", msg: "subjectAltNames[0]"},
		{name: "a missing ConfigMap", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.CACertificateRefs[0].Name = "nonexistent"
		}, accepted: "NoValidCACertificate", resolved: "InvalidCACertificateRef", msg: "not found"},
		{name: "a ConfigMap without ca.crt", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.CACertificateRefs[0].Name = "malformed"
		}, accepted: "NoValidCACertificate", resolved: "InvalidCACertificateRef", msg: "no key ca.crt"},
		{name: "a Secret", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.CACertificateRefs[0].Kind = "Secret"
		}, accepted: "NoValidCACertificate", resolved: "InvalidKind", msg: `kind "Secret"`},
		{name: "another group", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.CACertificateRefs[0].Group = "example.com"
		}, accepted: "NoValidCACertificate", resolved: "InvalidKind", msg: `group "example.com"`},
		{name: "two CA refs", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.CACertificateRefs = append(p.Spec.Validation.CACertificateRefs, gwv1.LocalObjectReference{Kind: "ConfigMap", Name: "other-ca"})
		}, accepted: "Invalid", resolved: "ResolvedRefs", msg: "supports one"},
		{name: "both CA sources", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.WellKnownCACertificates = &system
		}, accepted: "Invalid", resolved: "ResolvedRefs", msg: "both"},
		{name: "no CA", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.CACertificateRefs = nil
		}, accepted: "Invalid", resolved: "ResolvedRefs", msg: "neither"},
		{name: "a well-known set of another name", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.CACertificateRefs = nil
			p.Spec.Validation.WellKnownCACertificates = &custom
		}, accepted: "Invalid", resolved: "ResolvedRefs", msg: "only System"},
		{name: "an option", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Options = map[gwv1.AnnotationKey]gwv1.AnnotationValue{"example.com/min-version": "1.3"}
		}, accepted: "Invalid", resolved: "ResolvedRefs", msg: "spec.options"},
		{name: "a hostile hostname", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.Hostname = "abc.example.com;\n proxy_pass x"
		}, accepted: "Invalid", resolved: "ResolvedRefs", msg: "hostname"},
		{name: "a wildcard hostname", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Validation.Hostname = "*.example.com"
		}, accepted: "Invalid", resolved: "ResolvedRefs", msg: "wildcard"},
		{name: "a target of another kind", change: func(p *gwv1.BackendTLSPolicy) {
			p.Spec.TargetRefs[0].Kind = "ServiceImport"
		}, accepted: "Invalid", resolved: "ResolvedRefs", msg: "no core Service"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := btls("policy", 1000, "backend", "")
			tc.change(p)
			bt, ps := CheckBackendTLSPolicies([]*gwv1.BackendTLSPolicy{p}, testCA)
			got := bt.Policies[0]
			if got.Accepted.Reason != tc.accepted || got.ResolvedRefs.Reason != tc.resolved {
				t.Errorf("Accepted %s, ResolvedRefs %s; want %s, %s", got.Accepted.Reason, got.ResolvedRefs.Reason, tc.accepted, tc.resolved)
			}
			if (got.Accepted.Status == metav1.ConditionTrue) != (tc.accepted == "Accepted") {
				t.Errorf("Accepted status %s with reason %s", got.Accepted.Status, got.Accepted.Reason)
			}
			if (got.ResolvedRefs.Status == metav1.ConditionTrue) != (tc.resolved == "ResolvedRefs") {
				t.Errorf("ResolvedRefs status %s with reason %s", got.ResolvedRefs.Status, got.ResolvedRefs.Reason)
			}
			if tc.tls == nil {
				if got.TLS != nil {
					t.Errorf("TLS %+v; want none (the targets fail closed)", got.TLS)
				}
				if !strings.Contains(got.Accepted.Message, tc.msg) {
					t.Errorf("Accepted message %q; want it to hold %q", got.Accepted.Message, tc.msg)
				}
				found := false
				for _, pr := range ps {
					found = found || pr.Object == got.Ref && strings.Contains(pr.Message, tc.msg)
				}
				if !found {
					t.Errorf("no Problem naming the policy with %q in %v", tc.msg, ps)
				}
			} else if !reflect.DeepEqual(got.TLS, tc.tls) {
				t.Errorf("TLS %+v; want %+v", got.TLS, tc.tls)
			}
			// A refused target still claims the Service: the policy
			// applies there, failing closed.
			if tc.msg != "no core Service" && bt.For("infra", "backend", "https") != got {
				t.Errorf("the policy does not apply to its target")
			}
		})
	}
}

func TestBackendTLSPolicyConflicts(t *testing.T) {
	older := btls("b-older", 1000, "svc", "")
	newer := btls("a-newer", 2000, "svc", "")
	sameAgeA := btls("same-a", 1000, "sectioned", "https-1")
	sameAgeB := btls("same-b", 1000, "sectioned", "https-1")
	whole := btls("whole", 500, "sectioned", "")
	bt, ps := CheckBackendTLSPolicies([]*gwv1.BackendTLSPolicy{newer, older, sameAgeB, sameAgeA, whole}, testCA)
	byName := map[string]*BackendTLSPolicy{}
	for _, p := range bt.Policies {
		byName[p.Ref.Name] = p
	}
	for name, want := range map[string]string{"b-older": "Accepted", "a-newer": "Conflicted", "same-a": "Accepted", "same-b": "Conflicted", "whole": "Accepted"} {
		if got := byName[name].Accepted.Reason; got != want {
			t.Errorf("%s: Accepted %s; want %s", name, got, want)
		}
	}
	if bt.For("infra", "svc", "https") != byName["b-older"] {
		t.Errorf("svc: not the older policy")
	}
	if bt.For("infra", "sectioned", "https-1") != byName["same-a"] {
		t.Errorf("sectioned port https-1: not the first policy by name of that port")
	}
	if bt.For("infra", "sectioned", "https-2") != byName["whole"] || bt.For("infra", "sectioned", "") != byName["whole"] {
		t.Errorf("sectioned's other ports: not the policy of the whole Service")
	}
	if bt.For("infra", "unknown", "https") != nil {
		t.Errorf("a Service no policy targets has one")
	}
	hasPolicyProblem(t, ps, "a-newer", "Conflicted", "b-older")
	// The loser's ancestors are the winner's.
	gw := model.ObjectRef{Kind: "Gateway", Namespace: "infra", Name: "gw"}
	byName["b-older"].Used(gw)
	bt.Finish()
	if a := byName["a-newer"].Ancestors; len(a) != 1 || a[0] != gw {
		t.Errorf("a-newer's ancestors %v; want the winner's, %v", a, gw)
	}
}

func hasPolicyProblem(t *testing.T, ps []model.Problem, name, reason, msg string) {
	t.Helper()
	for _, p := range ps {
		if p.Object.Name == name && p.Condition != nil && p.Condition.Reason == reason && strings.Contains(p.Message, msg) {
			return
		}
	}
	t.Errorf("no %s Problem of %s holding %q in %v", reason, name, msg, ps)
}

// TestBackendTLSRoutes: a route's backends take their policy's TLS; a
// policy not honoured makes its backend's share answer 503, never
// cleartext; a location whose backends disagree keeps the first one's
// way and answers 503 for the others.
func TestBackendTLSRoutes(t *testing.T) {
	bt, _ := CheckBackendTLSPolicies([]*gwv1.BackendTLSPolicy{
		btls("tls", 1000, "secure", ""),
		func() *gwv1.BackendTLSPolicy {
			p := btls("tls2", 1000, "secure2", "")
			p.Spec.Validation.CACertificateRefs[0].Name = "other-ca"
			return p
		}(),
		func() *gwv1.BackendTLSPolicy {
			p := btls("broken", 1000, "broken", "")
			p.Spec.Validation.CACertificateRefs[0].Name = "nonexistent"
			return p
		}(),
	}, testCA)
	env := testEnv
	env.BackendTLS = func(b Backend) *BackendTLSPolicy { return bt.For(b.Namespace, b.Service, "http") }
	route := newHTTPRoute("r",
		toBackend("secure", proxyRule(pathMatch(gwv1.PathMatchExact, "/secure"))),
		toBackend("broken", proxyRule(pathMatch(gwv1.PathMatchExact, "/broken"))),
		gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{pathMatch(gwv1.PathMatchExact, "/mixed")},
			BackendRefs: []gwv1.HTTPBackendRef{backendRef("secure", 1), backendRef("plain", 1), backendRef("secure2", 1)}},
		gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{pathMatch(gwv1.PathMatchExact, "/plain-first")},
			BackendRefs: []gwv1.HTTPBackendRef{backendRef("plain", 1), backendRef("secure", 1)}},
	)
	rr, ps := TranslateHTTPRoute(route, env)
	if rr == nil {
		t.Fatalf("not served: %v", ps)
	}
	hasRouteProblem(t, ps, "Service infra/broken port 8080 is to be spoken to with TLS")
	var problems []model.Problem
	locs := map[string]*model.Location{}
	for _, pe := range Compose([]*RouteRules{rr}) {
		l, ps := pe.Location(testListener)
		problems = append(problems, ps...)
		locs[l.Match.Path] = l
	}
	secure := locs["/secure"]
	if secure.Backend() != "infra/secure/8080" || secure.Policy == nil || secure.Policy.Protocol != model.ProtocolHTTPS ||
		secure.Policy.UpstreamTLS == nil || secure.Policy.UpstreamTLS.CAConfigMap != "infra/ca" {
		t.Errorf("/secure: %+v %+v; want HTTPS to infra/secure/8080 verified by infra/ca", secure.Action, secure.Policy)
	}
	if b := locs["/broken"]; b.Action.Return == nil || b.Action.Return.Status != 503 || b.Policy != nil {
		t.Errorf("/broken: %+v %+v; want 503 and no TLS", b.Action, b.Policy)
	}
	mixed := locs["/mixed"]
	if mixed.Policy == nil || mixed.Policy.Protocol != model.ProtocolHTTPS {
		t.Fatalf("/mixed: %+v; want HTTPS (its first backend's)", mixed.Policy)
	}
	if bs := mixed.Action.Proxy.Split.Backends(); len(bs) != 1 || bs[0] != "infra/secure/8080" {
		t.Errorf("/mixed backends %v; want infra/secure/8080 alone (plain and secure2 speak otherwise)", bs)
	}
	plainFirst := locs["/plain-first"]
	if plainFirst.Policy != nil {
		t.Errorf("/plain-first: %+v; want no TLS (its first backend's)", plainFirst.Policy)
	}
	if bs := plainFirst.Action.Proxy.Split.Backends(); len(bs) != 1 || bs[0] != "infra/plain/8080" {
		t.Errorf("/plain-first backends %v; want infra/plain/8080 alone: never cleartext to secure", bs)
	}
	hasRouteProblem(t, problems, "Service infra/plain port 8080 is spoken to without TLS")
	hasRouteProblem(t, problems, "Service infra/secure2 port 8080 is spoken to with TLS to abc.example.com verified by ConfigMap infra/other-ca")
	hasRouteProblem(t, problems, "Service infra/secure port 8080 is spoken to with TLS to abc.example.com verified by ConfigMap infra/ca and infra/plain")
	// The location's policy is a copy: the rule's stays as written.
	if rr.Rules[0].Policy != nil {
		t.Errorf("the rule's policy was changed: %+v", rr.Rules[0].Policy)
	}
}

func hasRouteProblem(t *testing.T, ps []model.Problem, msg string) {
	t.Helper()
	for _, p := range ps {
		if p.Object.Kind == "HTTPRoute" && strings.Contains(p.Message, msg) {
			return
		}
	}
	t.Errorf("no route Problem holding %q in %v", msg, ps)
}

// A location's policy with its backends' TLS: HTTPS, or GRPCS for gRPC,
// on a copy.
func TestLocationTLSPolicy(t *testing.T) {
	tls := &model.UpstreamTLS{SystemCAs: true, Verify: true, Name: "abc.example.com", ServerName: true}
	for _, tc := range []struct {
		in   *model.Policy
		want model.BackendProtocol
	}{
		{nil, model.ProtocolHTTPS},
		{&model.Policy{}, model.ProtocolHTTPS},
		{&model.Policy{Protocol: model.ProtocolGRPC}, model.ProtocolGRPCS},
	} {
		lt := locationTLS{decided: true, tls: tls}
		got := lt.policy(tc.in)
		if got.Protocol != tc.want || !reflect.DeepEqual(got.UpstreamTLS, tls) {
			t.Errorf("%+v: %+v; want %s with the TLS", tc.in, got, tc.want)
		}
		if tc.in != nil && (tc.in.UpstreamTLS != nil || tc.in.Protocol == tc.want) {
			t.Errorf("the location's policy was changed: %+v", tc.in)
		}
	}
	if (&locationTLS{decided: true}).policy(nil) != nil {
		t.Errorf("without TLS, the policy is not left as it is")
	}
}

// A refused backend of weight 0 leaves no target: the location proxies
// to its other backend, with no split.
func TestBackendTLSRefusedWeightZero(t *testing.T) {
	bt, _ := CheckBackendTLSPolicies([]*gwv1.BackendTLSPolicy{btls("tls", 1000, "secure", "")}, testCA)
	env := testEnv
	env.BackendTLS = func(b Backend) *BackendTLSPolicy { return bt.For(b.Namespace, b.Service, "http") }
	rr, ps := TranslateHTTPRoute(newHTTPRoute("r", gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{pathMatch(gwv1.PathMatchExact, "/x")},
		BackendRefs: []gwv1.HTTPBackendRef{backendRef("plain", 1), backendRef("secure", 0)}}), env)
	if rr == nil {
		t.Fatalf("not served: %v", ps)
	}
	for _, pe := range Compose([]*RouteRules{rr}) {
		l, _ := pe.Location(testListener)
		if l.Action.Return != nil || l.Backend() != "infra/plain/8080" || l.Policy != nil {
			t.Errorf("%+v %+v; want a cleartext proxy to infra/plain/8080", l.Action, l.Policy)
		}
		if s := l.Action.Proxy.Split; s != nil {
			t.Errorf("split %+v; want the plain proxy of its one backend with a share", s)
		}
	}
}

// TestBackendClientCertificate: a Gateway's client certificate for
// backends (RouteListener.BackendClientCert) is presented where a location
// speaks TLS to its backends, and nowhere else.
func TestBackendClientCertificate(t *testing.T) {
	bt, _ := CheckBackendTLSPolicies([]*gwv1.BackendTLSPolicy{btls("tls", 1000, "secure", "")}, testCA)
	env := testEnv
	env.BackendTLS = func(b Backend) *BackendTLSPolicy { return bt.For(b.Namespace, b.Service, "http") }
	rr, ps := TranslateHTTPRoute(newHTTPRoute("r",
		toBackend("secure", proxyRule(pathMatch(gwv1.PathMatchExact, "/secure"))),
		toBackend("plain", proxyRule(pathMatch(gwv1.PathMatchExact, "/plain"))),
	), env)
	if rr == nil {
		t.Fatalf("not served: %v", ps)
	}
	l := testListener
	l.BackendClientCert = "infra/client"
	for _, pe := range Compose([]*RouteRules{rr}) {
		loc, _ := pe.Location(l)
		var secret string
		if loc.Policy != nil && loc.Policy.UpstreamTLS != nil {
			secret = loc.Policy.UpstreamTLS.Secret
		}
		want := map[string]string{"/secure": "infra/client", "/plain": ""}[loc.Match.Path]
		if secret != want {
			t.Errorf("%s: client certificate %q, want %q", loc.Match.Path, secret, want)
		}
	}
	// Without one, the location speaks TLS with no client certificate.
	for _, pe := range Compose([]*RouteRules{rr}) {
		if loc, _ := pe.Location(testListener); loc.Policy != nil && loc.Policy.UpstreamTLS != nil && loc.Policy.UpstreamTLS.Secret != "" {
			t.Errorf("%s: client certificate %q without the Gateway's", loc.Match.Path, loc.Policy.UpstreamTLS.Secret)
		}
	}
}

// TestMirrorToTLSBackend: a mirror to a Service a BackendTLSPolicy asks
// TLS of is left out, with a Problem, rather than sent its copies in
// cleartext; the rule is served.
func TestMirrorToTLSBackend(t *testing.T) {
	bt, _ := CheckBackendTLSPolicies([]*gwv1.BackendTLSPolicy{btls("tls", 1000, "secure", "")}, testCA)
	env := testEnv
	env.BackendTLS = func(b Backend) *BackendTLSPolicy { return bt.For(b.Namespace, b.Service, "http") }
	ref := backendRef("secure").BackendObjectReference
	rr, ps := TranslateHTTPRoute(newHTTPRoute("r", withFilters(proxyRule(),
		gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestMirror, RequestMirror: &gwv1.HTTPRequestMirrorFilter{BackendRef: ref}})), env)
	r := onlyRule(t, rr)
	if len(r.Mirrors) != 0 || (r.Policy != nil && len(r.Policy.Mirrors) != 0) {
		t.Errorf("mirrors %+v, policy %+v: want none", r.Mirrors, r.Policy)
	}
	hasRouteProblem(t, ps, "mirrors speak cleartext; the mirror is left out")
}
