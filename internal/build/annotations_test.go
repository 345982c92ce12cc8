package build

import (
	"fmt"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
	"slices"
	"sort"
	"strings"
	"testing"
)

// securityAnnotations are the annotations that must fail closed until
// Causeway implements them: no ingress-nginx one since external
// authentication arrived; NGINX Ingress Controller's basic
// authentication and Policies, NGINX Plus's JWT validation, and NGINX App
// Protect's WAF and DoS protection. Listed
// here by hand so that relaxing one is a deliberate change to this test
// too.
var securityAnnotations = []string{"nginx.org/basic-auth-realm", "nginx.org/basic-auth-secret", "nginx.org/policies",
	"nginx.com/jwt-key", "nginx.com/jwt-realm", "nginx.com/jwt-token", "nginx.com/jwt-login-url",
	"appprotect.f5.com/app-protect-enable", "appprotectdos.f5.com/app-protect-dos-resource"}

func TestSecurityAnnotationsFailClosedInTable(t *testing.T) {
	var got []string
	for _, a := range annotations.Known() {
		if a.Status == annotations.AnnotationFailClosed {
			got = append(got, a.Key(annotations.DefaultPrefix))
			if a.Kind != "Ingress" || !slices.Contains([]annotations.AnnotationFamily{annotations.FamilyIngressNginx, annotations.FamilyNIC,
				annotations.FamilyNICPlus, annotations.FamilyAppProtect, annotations.FamilyAppProtectDoS}, a.Family) {
				t.Errorf("%s: fail-closed annotations are ingress-nginx, NIC, NGINX Plus or App Protect Ingress annotations", a.Name)
			}
		}
	}
	sort.Strings(got)
	want := append([]string(nil), securityAnnotations...)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("fail-closed annotations = %v, want %v", got, want)
	}
}

// TestIngressAnnotations is a row per rule: what an annotation on an
// Ingress does to its paths and which Problem it raises.
func TestIngressAnnotations(t *testing.T) {
	type row struct {
		name        string
		prefix      string // Options.AnnotationsPrefix
		annotations map[string]string
		closed      bool     // the Ingress's paths answer 503
		reasons     []string // Problems on the Ingress, in order
		naming      string   // the first model.Problem names this
	}
	rows := []row{
		{name: "no annotations", annotations: nil},
		{name: "non-prefixed annotations are not ours", annotations: map[string]string{
			"kubectl.kubernetes.io/last-applied-configuration": "{}",
			"kubernetes.io/ingress.class":                      "causeway",
			"example.com/auth-type":                            "basic",
			"nginx.ingress.kubernetes.io.example.com/auth-url": "http://x",
			"foo.causeway.io/load-balance":                     "ewma",
		}},
		{name: "unknown ingress-nginx annotation", annotations: map[string]string{"nginx.ingress.kubernetes.io/no-such-thing": "1"},
			reasons: []string{model.ReasonUnknownAnnotation}, naming: "nginx.ingress.kubernetes.io/no-such-thing"},
		{name: "unknown causeway.io annotation", annotations: map[string]string{"causeway.io/no-such-thing": "1"},
			reasons: []string{model.ReasonUnknownAnnotation}, naming: "causeway.io/no-such-thing"},
		{name: "known but not yet supported", annotations: map[string]string{"nginx.ingress.kubernetes.io/enable-rewrite-log": "true"},
			reasons: []string{model.ReasonUnsupportedAnnotation}, naming: "nginx.ingress.kubernetes.io/enable-rewrite-log"},
		{name: "not yet supported, with what to use instead", annotations: map[string]string{"nginx.ingress.kubernetes.io/upstream-hash-by-subset": "true"},
			reasons: []string{model.ReasonUnsupportedAnnotation}, naming: "use upstream-hash-by alone"},
		{name: "a Service annotation on an Ingress", annotations: map[string]string{"causeway.io/load-balance": "ewma"},
			reasons: []string{model.ReasonUnsupportedAnnotation}, naming: "read from Services"},
		{name: "a refused snippet that adds headers does not fail closed", annotations: map[string]string{"nginx.ingress.kubernetes.io/configuration-snippet": "add_header X y;"},
			reasons: []string{model.ReasonUnsupportedAnnotation}, naming: "configuration-snippet"},
		{name: "a refused snippet that denies fails closed", annotations: map[string]string{"nginx.ingress.kubernetes.io/configuration-snippet": "deny all;"},
			closed: true, reasons: []string{model.ReasonUnsupportedAnnotation}, naming: "configuration-snippet"},
		{name: "auth-type with a missing auth-secret", annotations: map[string]string{
			"nginx.ingress.kubernetes.io/auth-type": "basic", "nginx.ingress.kubernetes.io/auth-secret": "missing"},
			closed: true, reasons: []string{model.ReasonMissingSecret}, naming: "nginx.ingress.kubernetes.io/auth-secret"},
		{name: "a security annotation with an empty value still fails closed", annotations: map[string]string{"nginx.ingress.kubernetes.io/satisfy": ""},
			closed: true, reasons: []string{model.ReasonInvalidAnnotation}, naming: "satisfy"},
		{name: "auth-type digest without its Secret fails closed", annotations: map[string]string{
			"nginx.ingress.kubernetes.io/auth-type": "digest", "nginx.ingress.kubernetes.io/auth-secret": "users"},
			closed: true, reasons: []string{model.ReasonMissingSecret}, naming: "secret default/users not found"},
		{name: "a source address list is applied", annotations: map[string]string{"nginx.ingress.kubernetes.io/allowlist-source-range": "10.0.0.0/8"}},
		{name: "an invalid source address list fails closed", annotations: map[string]string{"nginx.ingress.kubernetes.io/denylist-source-range": "10.0.0.0/8,10.0.0.1/8"},
			closed: true, reasons: []string{model.ReasonInvalidAnnotation}, naming: `"10.0.0.1/8"`},
		{name: "an empty source address list fails closed", annotations: map[string]string{"nginx.ingress.kubernetes.io/whitelist-source-range": ""},
			closed: true, reasons: []string{model.ReasonInvalidAnnotation}, naming: "whitelist-source-range"},
		{name: "unknown nginx.org annotation", annotations: map[string]string{"nginx.org/no-such-thing": "1"},
			reasons: []string{model.ReasonUnknownAnnotation}, naming: "nginx.org/no-such-thing"},
		{name: "nginx.org annotation not yet supported", annotations: map[string]string{"nginx.org/proxy-hide-headers": "X-A"},
			reasons: []string{model.ReasonUnsupportedAnnotation}, naming: "nginx.org/proxy-hide-headers"},
		{name: "a valid nginx.org annotation", annotations: map[string]string{"nginx.org/proxy-read-timeout": "30s"}},
		{name: "NGINX Plus's JWT fails closed", annotations: map[string]string{"nginx.com/jwt-key": "jwk-secret", "nginx.com/jwt-realm": "api"},
			closed: true, reasons: []string{model.ReasonSecurityAnnotation, model.ReasonSecurityAnnotation}, naming: "JWT validation needs NGINX Plus"},
		{name: "NGINX Plus's health checks are reported", annotations: map[string]string{"nginx.com/health-checks": "true"},
			reasons: []string{model.ReasonUnsupportedAnnotation}, naming: "active health checks need NGINX Plus"},
		{name: "App Protect WAF enabled fails closed", annotations: map[string]string{"appprotect.f5.com/app-protect-enable": "True",
			"appprotect.f5.com/app-protect-policy": "default/dataguard"},
			closed: true, reasons: []string{model.ReasonSecurityAnnotation, model.ReasonUnsupportedAnnotation}, naming: "NGINX App Protect WAF"},
		{name: "App Protect WAF with an unreadable switch fails closed", annotations: map[string]string{"appprotect.f5.com/app-protect-enable": "on"},
			closed: true, reasons: []string{model.ReasonSecurityAnnotation}, naming: "appprotect.f5.com/app-protect-enable"},
		{name: "App Protect WAF switched off closes nothing", annotations: map[string]string{"appprotect.f5.com/app-protect-enable": "False",
			"appprotect.f5.com/app-protect-security-log-enable": "True"},
			reasons: []string{model.ReasonUnsupportedAnnotation, model.ReasonUnsupportedAnnotation}, naming: "asks for nothing"},
		{name: "App Protect DoS fails closed", annotations: map[string]string{"appprotectdos.f5.com/app-protect-dos-resource": "default/dos-protected"},
			closed: true, reasons: []string{model.ReasonSecurityAnnotation}, naming: "NGINX App Protect DoS"},
		{name: "unknown appprotect.f5.com annotation", annotations: map[string]string{"appprotect.f5.com/no-such-thing": "1"},
			reasons: []string{model.ReasonUnknownAnnotation}, naming: "appprotect.f5.com/no-such-thing"},
		{name: "unknown nginx.com annotation", annotations: map[string]string{"nginx.com/no-such-thing": "1"},
			reasons: []string{model.ReasonUnknownAnnotation}, naming: "nginx.com/no-such-thing"},
		{name: "an invalid nginx.org annotation", annotations: map[string]string{"nginx.org/proxy-read-timeout": "forever"},
			reasons: []string{model.ReasonInvalidAnnotation}, naming: "nginx.org/proxy-read-timeout"},
		{name: "both spellings of one setting: ingress-nginx's wins", annotations: map[string]string{"nginx.org/proxy-read-timeout": "30s",
			"nginx.ingress.kubernetes.io/proxy-read-timeout": "20"},
			reasons: []string{model.ReasonUnsupportedAnnotation}, naming: "nginx.ingress.kubernetes.io/proxy-read-timeout"},
		{name: "an nginx.org Service list naming a Service no path routes to", annotations: map[string]string{"nginx.org/ssl-services": "svc-a,nope"},
			reasons: []string{model.ReasonUnsupportedAnnotation}, naming: `"nope"`},
		{name: "custom prefix: security annotation fails closed", prefix: "corp.example.com",
			annotations: map[string]string{"corp.example.com/auth-url": "http://$remote_addr/auth"},
			closed:      true, reasons: []string{model.ReasonInvalidAnnotation}, naming: "corp.example.com/auth-url"},
		{name: "custom prefix: the default prefix is no longer ours", prefix: "corp.example.com",
			annotations: map[string]string{"nginx.ingress.kubernetes.io/auth-url": "http://$remote_addr/auth"}},
	}
	// Implemented security annotations: a value they cannot use closes.
	for _, name := range []string{"auth-type", "auth-secret", "satisfy", "auth-url"} {
		k := annotations.DefaultPrefix + "/" + name
		rows = append(rows, row{name: "invalid " + name, annotations: map[string]string{k: "x"},
			closed: true, reasons: []string{model.ReasonInvalidAnnotation}, naming: k})
	}
	for _, k := range securityAnnotations {
		rows = append(rows, row{name: "security annotation " + k, annotations: map[string]string{k: "x"},
			closed: true, reasons: []string{model.ReasonSecurityAnnotation}, naming: k})
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			s := world(2)
			ing := mkIngress("default", "web", 0, rule("a.com", path("/app", "Prefix", svcName(0), 80), path("/x", "Exact", svcName(0), 80)))
			ing.Spec.DefaultBackend = svcBackend(svcName(0), 80)
			ing.Annotations = tc.annotations
			sibling := mkIngress("default", "sibling", 1, rule("a.com", path("/other", "Prefix", svcName(1), 80)),
				rule("b.com", path("/", "Prefix", svcName(1), 80)))
			s.Ingresses = append(s.Ingresses, ing, sibling)
			opts := testOpts
			opts.AnnotationsPrefix = tc.prefix
			m, problems := Build(s, opts)

			checkAnnotationProblems(t, problems, "Ingress", "web", tc.reasons, tc.naming)

			a := server(m, "a.com")
			for _, req := range []string{"/app", "/app/y", "/x", "/nowhere"} {
				l := a.Match(req)
				if l == nil {
					l = a.Default
				}
				if tc.closed && ((l.Action.Return == nil || l.Action.Return.Status != 503) || l.Backend() != "") {
					t.Fatalf("%s: location %+v, want 503 (fail closed)", req, l)
				}
				if !tc.closed && l.Backend() != "default/svc-a/80" {
					t.Fatalf("%s: location %+v, want it served by svc-a", req, l)
				}
			}
			if d := server(m, "").Default; tc.closed != (d.Action.Return != nil && d.Action.Return.Status == 503) {
				t.Fatalf("default backend for unmatched hosts = %+v, closed %v", d, tc.closed)
			}
			// The sibling Ingress, on the same host and another, is untouched.
			if l := a.Match("/other"); l.Backend() != "default/svc-b/80" {
				t.Fatalf("sibling path on the same host = %+v", l)
			}
			if l := server(m, "b.com").Match("/"); l.Backend() != "default/svc-b/80" {
				t.Fatalf("sibling host = %+v", l)
			}
		})
	}
}

// A fail-closed Ingress keeps its claims: a younger Ingress cannot serve
// the same path unprotected.
func TestFailClosedKeepsClaims(t *testing.T) {
	s := world(2)
	guarded := mkIngress("default", "guarded", 0, rule("a.com", path("/admin", "Prefix", svcName(0), 80)))
	guarded.Annotations = map[string]string{"nginx.ingress.kubernetes.io/auth-url": "http://$remote_addr/auth"}
	s.Ingresses = append(s.Ingresses, guarded,
		mkIngress("default", "open", 1, rule("a.com", path("/admin", "Prefix", svcName(1), 80))))
	m, problems := Build(s, testOpts)
	if l := server(m, "a.com").Match("/admin"); l.Action.Return == nil || l.Action.Return.Status != 503 {
		t.Fatalf("/admin = %+v, want 503", l)
	}
	if len(problems) != 2 || problems[1].Reason != model.ReasonCollision || problems[1].Object.Name != "open" {
		t.Fatalf("problems = %v, want the security Problem and a Collision on open", problems)
	}
}

func TestAnnotationProblemsAreBounded(t *testing.T) {
	s := world(1)
	ing := mkIngress("default", "web", 0, rule("a.com", path("/", "Prefix", svcName(0), 80)))
	ing.Annotations = map[string]string{}
	for i := 0; i < 50; i++ {
		ing.Annotations[fmt.Sprintf("nginx.ingress.kubernetes.io/bogus-%02d", i)] = "1"
	}
	s.Ingresses = append(s.Ingresses, ing)
	_, problems := Build(s, testOpts)
	if len(problems) != annotations.MaxProblems+1 || !strings.Contains(problems[len(problems)-1].Message, "30 more") {
		t.Fatalf("%d problems, last %v: want %d and a summary of 30 more", len(problems), problems[len(problems)-1], annotations.MaxProblems+1)
	}
}

// TestServiceAnnotations: annotations on a Service that an Ingress of ours
// routes to.
func TestServiceAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		reasons     []string
		naming      string
	}{
		{"supported and valid", map[string]string{AnnotationLoadBalance: "sticky", AnnotationStickyCookie: "route"}, nil, ""},
		{"not ours", map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}, nil, ""},
		{"invalid value of a supported annotation", map[string]string{AnnotationLoadBalance: "sticky", AnnotationStickyMaxAge: "soon"},
			[]string{model.ReasonInvalidAnnotation}, AnnotationStickyMaxAge},
		{"invalid method", map[string]string{AnnotationLoadBalance: "random"}, []string{model.ReasonInvalidAnnotation}, AnnotationLoadBalance},
		{"invalid hash key", map[string]string{AnnotationLoadBalance: "chash", AnnotationHashKey: "x;y"}, []string{model.ReasonInvalidAnnotation}, AnnotationHashKey},
		{"option without its method", map[string]string{AnnotationHashKey: "$remote_addr"}, []string{model.ReasonUnsupportedAnnotation}, AnnotationHashKey},
		{"unknown causeway.io annotation", map[string]string{"causeway.io/weight": "3"}, []string{model.ReasonUnknownAnnotation}, "causeway.io/weight"},
		{"an Ingress annotation on a Service", map[string]string{"nginx.ingress.kubernetes.io/affinity": "cookie"},
			[]string{model.ReasonUnsupportedAnnotation}, "read from Ingresses"},
		{"a security annotation on a Service does nothing and says so", map[string]string{"nginx.ingress.kubernetes.io/auth-type": "basic"},
			[]string{model.ReasonUnsupportedAnnotation}, "read from Ingresses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(1)
			s.Services[0].Annotations = tc.annotations
			// Two ports of one Service: its annotations are checked once.
			s.Services[0].Spec.Ports = append(s.Services[0].Spec.Ports, s.Services[0].Spec.Ports[0])
			s.Services[0].Spec.Ports[1].Name, s.Services[0].Spec.Ports[1].Port = "alt", 81
			s.Ingresses = append(s.Ingresses, mkIngress("default", "web", 0, rule("a.com",
				path("/", "Prefix", svcName(0), 80), path("/alt", "Prefix", svcName(0), 81))))
			m, problems := Build(s, testOpts)
			checkAnnotationProblems(t, problems, "Service", svcName(0), tc.reasons, tc.naming)
			if l := server(m, "a.com").Match("/"); l.Backend() == "" {
				t.Fatal("Service annotations never close paths")
			}
		})
	}
}

// TestAnnotationTableRows guards the table's shape.
func TestAnnotationTableRows(t *testing.T) {
	for _, a := range annotations.Known() {
		if a.Kind != "Ingress" && a.Kind != "Service" || a.Group == "" || a.Name == "" || strings.Contains(a.Name, "/") {
			t.Errorf("bad row %+v", a)
		}
	}
	// The causeway.io rows are the annotations balance.go reads.
	for _, k := range []string{AnnotationLoadBalance, AnnotationHashKey, AnnotationStickyCookie, AnnotationStickyPath,
		AnnotationStickyMaxAge, AnnotationStickySameSite, AnnotationStickySecure, AnnotationRetries} {
		a, ok := annotations.Lookup(annotations.FamilyCauseway, strings.TrimPrefix(k, annotations.CausewayPrefix+"/"))
		if !ok || a.Status != annotations.AnnotationSupported || a.Kind != "Service" {
			t.Errorf("%s: row %+v, want a supported Service annotation", k, a)
		}
	}
}

// checkAnnotationProblems requires problems to be on kind/name only, none
// rejecting it, with exactly the given reasons in order, the first naming
// naming (when set).
func checkAnnotationProblems(t *testing.T, problems []model.Problem, kind, name string, reasons []string, naming string) {
	t.Helper()
	var got []string
	for _, p := range problems {
		if p.Object.Kind != kind || p.Object.Name != name || p.Rejected {
			t.Fatalf("problem %v: want problems on %s %s only, none rejecting it", p, kind, name)
		}
		got = append(got, p.Reason)
	}
	if fmt.Sprint(got) != fmt.Sprint(reasons) {
		t.Fatalf("problems = %v, want reasons %v", problems, reasons)
	}
	if naming != "" && !strings.Contains(problems[0].Message, naming) {
		t.Fatalf("problem %q does not name %q", problems[0].Message, naming)
	}
}
