package build

import (
	"slices"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/model"
)

// withAnnotations sets an Ingress's annotations.
func withAnnotations(ing *networkingv1.Ingress, a map[string]string) *networkingv1.Ingress {
	ing.Annotations = a
	return ing
}

// ingressProblems are the messages of the Problems on the Ingress name.
func ingressProblems(ps []model.Problem, name string) []string {
	var out []string
	for _, p := range ps {
		if p.Object.Kind == "Ingress" && p.Object.Name == name {
			out = append(out, p.Reason+": "+p.Message)
		}
	}
	return out
}

// TestNICAnnotations: NGINX Ingress Controller's annotations set the same
// model values as ingress-nginx's, per Service where they name Services.
func TestNICAnnotations(t *testing.T) {
	s := world(3)
	s.Ingresses = append(s.Ingresses, withAnnotations(mkIngress("default", "cafe", 0, rule("cafe.test",
		path("/tea", "Prefix", svcName(0), 80), path("/coffee", "Prefix", svcName(1), 80), path("/grpc", "Prefix", svcName(2), 80))),
		map[string]string{
			"nginx.org/ssl-services":          "svc-a, svc-c",
			"nginx.org/grpc-services":         "svc-c",
			"nginx.org/rewrites":              "serviceName=svc-b rewrite=/beans/",
			"nginx.org/proxy-read-timeout":    "30s",
			"nginx.org/proxy-connect-timeout": "2",
			"nginx.org/client-max-body-size":  "8m",
			"nginx.org/proxy-buffering":       "True",
			"nginx.org/lb-method":             "least_conn",
			"nginx.org/max-fails":             "3",
			"nginx.org/fail-timeout":          "20s",
			"nginx.org/redirect-to-https":     "true",
			"nginx.org/server-tokens":         "false",
			"nginx.org/hsts":                  "true",
			"nginx.org/hsts-max-age":          "100",
			"nginx.org/websocket-services":    "svc-a",
		}))
	m, ps := Build(s, testOpts)
	if got := ingressProblems(ps, "cafe"); len(got) != 0 {
		t.Fatalf("problems %v", got)
	}
	srv := server(m, "cafe.test")
	for _, tc := range []struct {
		path     string
		protocol model.BackendProtocol
		rewrite  *model.Rewrite
	}{
		{"/tea", model.ProtocolHTTPS, nil},
		{"/coffee", "", &model.Rewrite{Target: "/beans/", Prefix: true}},
		{"/grpc", model.ProtocolGRPCS, nil},
	} {
		l := srv.Match(tc.path)
		p := l.Policy
		if p == nil || p.Protocol != tc.protocol || (tc.rewrite == nil) != (p.Rewrite == nil) || (tc.rewrite != nil && *p.Rewrite != *tc.rewrite) {
			t.Errorf("%s: policy %+v", tc.path, p)
			continue
		}
		if p.Timeouts.Read != 30*time.Second || p.Timeouts.Connect != 2*time.Second || p.Buffering.BodySize == nil ||
			*p.Buffering.BodySize != 8<<20 || p.Buffering.Response == nil || !*p.Buffering.Response {
			t.Errorf("%s: timeouts %+v buffering %+v", tc.path, p.Timeouts, p.Buffering)
		}
	}
	for _, be := range m.Backends {
		if be.Balance.Method != model.LeastConn || be.Limits.MaxFails != 3 || be.Limits.FailTimeout != 20*time.Second {
			t.Errorf("backend %s: balance %+v limits %+v", be.Key, be.Balance, be.Limits)
		}
	}
	if !srv.SSLRedirect || srv.HTTPSRedirect == nil || *srv.HTTPSRedirect != (model.HTTPSRedirect{Code: 301, BasedOn: model.RedirectOnForwardedProto}) {
		t.Errorf("redirect %v %+v", srv.SSLRedirect, srv.HTTPSRedirect)
	}
	if p := srv.Policy; p == nil || p.ServerTokens == nil || *p.ServerTokens || p.HSTS == nil || !p.HSTS.Enabled || p.HSTS.MaxAge != 100 {
		t.Errorf("server policy %+v", srv.Policy)
	}
}

// TestNICAnnotationRules: a row per rule of the nginx.org grammars and
// precedence; each names what its Problem must say.
func TestNICAnnotationRules(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        string // a fragment of the one Problem; "" for none
	}{
		{"a Service list with a bad name", map[string]string{"nginx.org/ssl-services": "svc-a,Bad_Name"}, "nginx.org/ssl-services"},
		{"an empty Service list", map[string]string{"nginx.org/grpc-services": " , "}, "want one or more Service names"},
		{"a rewrite without serviceName", map[string]string{"nginx.org/rewrites": "rewrite=/"}, "want serviceName=NAME rewrite=PATH"},
		{"a rewrite with a variable", map[string]string{"nginx.org/rewrites": "serviceName=svc-a rewrite=/$host"}, "without ?, $ or quotes"},
		{"a rewrite that would close the quote", map[string]string{"nginx.org/rewrites": `serviceName=svc-a rewrite=/"x`}, "without ?, $ or quotes"},
		{"a Service rewritten twice", map[string]string{"nginx.org/rewrites": "serviceName=svc-a rewrite=/a;serviceName=svc-a rewrite=/b"}, "rewritten twice"},
		{"an lb-method NIC's open source lacks", map[string]string{"nginx.org/lb-method": "random"}, "nginx.org/lb-method"},
		{"max-fails that is not a number", map[string]string{"nginx.org/max-fails": "many"}, "nginx.org/max-fails"},
		{"a fail-timeout finer than seconds", map[string]string{"nginx.org/fail-timeout": "500ms"}, "whole seconds"},
		{"hsts-max-age without hsts", map[string]string{"nginx.org/hsts-max-age": "10"}, "only applies with nginx.org/hsts"},
		{"lb-method beside load-balance: ingress-nginx's wins", map[string]string{"nginx.org/lb-method": "least_conn",
			"nginx.ingress.kubernetes.io/load-balance": "ewma"}, "nginx.org/lb-method sets what nginx.ingress.kubernetes.io/load-balance sets"},
		{"rewrites beside rewrite-target: ingress-nginx's wins", map[string]string{"nginx.org/rewrites": "serviceName=svc-a rewrite=/",
			"nginx.ingress.kubernetes.io/rewrite-target": "/"}, "nginx.org/rewrites sets what"},
		{"NIC's basic authentication fails closed", map[string]string{"nginx.org/basic-auth-secret": "users"}, "answers 503"},
		{"a mergeable type that is neither", map[string]string{"nginx.org/mergeable-ingress-type": "both"}, "want master or minion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(1)
			s.Ingresses = append(s.Ingresses, withAnnotations(mkIngress("default", "web", 0, rule("a.test", path("/", "Prefix", svcName(0), 80))),
				tc.annotations))
			_, ps := Build(s, testOpts)
			got := ingressProblems(ps, "web")
			if tc.want == "" && len(got) != 0 || tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)) {
				t.Errorf("problems %q, want one with %q", got, tc.want)
			}
		})
	}
}

// TestMergeableIngresses: a master and its minions become one host;
// NIC's rules on what each may hold.
func TestMergeableIngresses(t *testing.T) {
	master := func(name string, age int, a map[string]string, paths ...networkingv1.HTTPIngressPath) *networkingv1.Ingress {
		r := networkingv1.IngressRule{Host: "cafe.test"}
		if len(paths) > 0 {
			r = rule("cafe.test", paths...)
		}
		ing := mkIngress("default", name, age, r)
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"cafe.test"}}}
		ing.Annotations = map[string]string{"nginx.org/mergeable-ingress-type": "master"}
		for k, v := range a {
			ing.Annotations[k] = v
		}
		return ing
	}
	minion := func(ns, name string, age int, host string, a map[string]string, paths ...networkingv1.HTTPIngressPath) *networkingv1.Ingress {
		ing := mkIngress(ns, name, age, rule(host, paths...))
		ing.Annotations = map[string]string{"nginx.org/mergeable-ingress-type": "minion"}
		for k, v := range a {
			ing.Annotations[k] = v
		}
		return ing
	}
	s := world(2)
	s.Ingresses = append(s.Ingresses,
		// The minion is older than its master: still one host.
		minion("default", "tea", 0, "cafe.test", map[string]string{"nginx.org/hsts": "true"}, path("/tea", "Prefix", svcName(0), 80)),
		master("cafe", 1, map[string]string{"nginx.org/proxy-read-timeout": "30s", "nginx.org/redirect-to-https": "true",
			"nginx.org/ssl-services": "svc-a"}),
		minion("other", "coffee", 2, "cafe.test", map[string]string{"nginx.org/proxy-read-timeout": "5s"}, path("/coffee", "Prefix", svcName(1), 80)),
		// Younger: the same path stays the oldest minion's.
		minion("default", "late", 3, "cafe.test", nil, path("/tea", "Prefix", svcName(1), 80)),
		master("second", 4, nil),
		master("with-paths", 5, nil, path("/x", "Prefix", svcName(0), 80)),
		minion("default", "orphan", 6, "nomaster.test", nil, path("/", "Prefix", svcName(0), 80)),
	)
	s.Ingresses[5].Spec.Rules[0].Host = "paths.test"
	s.Ingresses[5].Spec.TLS = nil
	m, ps := Build(s, testOpts)
	srv := server(m, "cafe.test")
	tea, coffee := srv.Match("/tea"), srv.Match("/coffee")
	if tea == nil || tea.Backend() != "default/svc-a/80" || tea.Policy == nil || tea.Policy.Timeouts.Read != 30*time.Second {
		t.Errorf("/tea: %+v (inherits the master's timeout)", tea)
	}
	if coffee == nil || coffee.Policy == nil || coffee.Policy.Timeouts.Read != 5*time.Second {
		t.Errorf("/coffee: %+v (its own timeout wins)", coffee)
	}
	if tea != nil && tea.Policy != nil && tea.Policy.Protocol != "" {
		t.Errorf("/tea: protocol %q: ssl-services is not allowed on a master", tea.Policy.Protocol)
	}
	if !srv.SSLRedirect || srv.HTTPSRedirect == nil || srv.TLS == nil || (srv.Policy != nil && srv.Policy.HSTS != nil) {
		t.Errorf("server: redirect %v %+v tls %+v policy %+v", srv.SSLRedirect, srv.HTTPSRedirect, srv.TLS, srv.Policy)
	}
	for _, tc := range []struct{ name, want string }{
		{"tea", "not allowed on a minion"},
		{"cafe", "not allowed on a master"},
		{"late", `path "/tea" (Prefix) is already served by Ingress default/tea`},
		{"second", "already has the master Ingress default/cafe"},
		{"with-paths", "holds no paths"},
		{"orphan", "needs a master Ingress"},
	} {
		if got := ingressProblems(ps, tc.name); !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, tc.want) }) {
			t.Errorf("%s: problems %q, want one with %q", tc.name, got, tc.want)
		}
	}
	if srv := server(m, "paths.test"); srv != nil && srv.Match("/x") != nil {
		t.Errorf("a master's path is served")
	}
	if srv := server(m, "nomaster.test"); srv != nil && len(srv.Locations) > 0 {
		t.Errorf("an orphan minion is served: %+v", srv.Locations)
	}
}
