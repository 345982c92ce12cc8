package build

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
)

// TestModSecurity: a row per rule of the ConfigMap's and the annotations'
// ModSecurity, including every way it fails closed.
func TestModSecurity(t *testing.T) {
	const p = "nginx.ingress.kubernetes.io/"
	full := func(o Options) Options {
		o.ModSecurityAvailable, o.CRSAvailable = true, true
		return o
	}
	noModule := func(o Options) Options {
		o.ModSecurityMissing = "Angie cannot load Debian's ngx_http_modsecurity_module.so"
		return o
	}
	noCRS := func(o Options) Options {
		o.ModSecurityAvailable = true
		return o
	}
	for _, tc := range []struct {
		name    string
		config  map[string]string
		ann     map[string]string
		opts    func(Options) Options
		closed  bool
		want    *model.ModSecurity // nil: none (or closed)
		rules   int                // directives of want's Rules
		problem string             // a substring of one Problem; "" for none
	}{
		{name: "off by default", opts: full},
		{name: "annotation on", ann: map[string]string{p + "enable-modsecurity": "true"}, opts: full, want: &model.ModSecurity{}},
		{name: "annotation with the CRS", ann: map[string]string{p + "enable-modsecurity": "true", p + "enable-owasp-core-rules": "true"}, opts: full,
			want: &model.ModSecurity{CRS: true}},
		{name: "ConfigMap on for every Ingress", config: map[string]string{"enable-modsecurity": "true"}, opts: full, want: &model.ModSecurity{}},
		{name: "ConfigMap's CRS", config: map[string]string{"enable-modsecurity": "true", "enable-owasp-modsecurity-crs": "true"}, opts: full,
			want: &model.ModSecurity{CRS: true}},
		{name: "an Ingress turns the ConfigMap's off", config: map[string]string{"enable-modsecurity": "true"},
			ann: map[string]string{p + "enable-modsecurity": "false"}, opts: full},
		{name: "snippet and transaction id", config: map[string]string{"allow-snippet-annotations": "true"},
			ann:  map[string]string{p + "enable-modsecurity": "true", p + "modsecurity-snippet": "SecRuleEngine On\nSecRuleRemoveById 942100", p + "modsecurity-transaction-id": "$request_id"},
			opts: full, want: &model.ModSecurity{TransactionID: model.Template{{Variable: "request_id"}}}, rules: 2},
		{name: "a snippet including the CRS runs it", config: map[string]string{"allow-snippet-annotations": "true"},
			ann:  map[string]string{p + "enable-modsecurity": "true", p + "modsecurity-snippet": "Include /etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf\nSecRuleEngine On"},
			opts: full, want: &model.ModSecurity{CRS: true}, rules: 2},
		{name: "CRS without ModSecurity has no effect", ann: map[string]string{p + "enable-owasp-core-rules": "true"}, opts: full,
			problem: "has no effect: ModSecurity does not run"},
		{name: "ConfigMap's CRS without enable-modsecurity", config: map[string]string{"enable-owasp-modsecurity-crs": "true"}, opts: full,
			problem: `apply only with "enable-modsecurity": true`},
		{name: "invalid enable closes", ann: map[string]string{p + "enable-modsecurity": "yes please"}, opts: full, closed: true,
			problem: "every path of this Ingress answers 503"},
		{name: "ConfigMap's invalid enable closes every Ingress", config: map[string]string{"enable-modsecurity": "yes"}, opts: full, closed: true,
			problem: "every path of every Ingress answers 503"},
		{name: "no module: annotation closes", ann: map[string]string{p + "enable-modsecurity": "true"}, opts: noModule, closed: true,
			problem: "Angie cannot load"},
		{name: "no module: ConfigMap closes every Ingress", config: map[string]string{"enable-modsecurity": "true"}, opts: noModule, closed: true,
			problem: `key "enable-modsecurity": Angie cannot load`},
		{name: "no module, no ModSecurity asked: served", opts: noModule},
		{name: "no CRS: closes", ann: map[string]string{p + "enable-modsecurity": "true", p + "enable-owasp-core-rules": "true"}, opts: noCRS, closed: true,
			problem: "modsecurity-crs) is not installed"},
		{name: "no CRS, not asked: served", ann: map[string]string{p + "enable-modsecurity": "true"}, opts: noCRS, want: &model.ModSecurity{}},
		{name: "snippet without allow-snippet-annotations closes", ann: map[string]string{p + "enable-modsecurity": "true", p + "modsecurity-snippet": "SecRuleEngine On"},
			opts: full, closed: true, problem: "allow-snippet-annotations is false"},
		{name: "refused snippet closes", config: map[string]string{"allow-snippet-annotations": "true"},
			ann:  map[string]string{p + "enable-modsecurity": "true", p + "modsecurity-snippet": "SecDebugLog /tmp/x"},
			opts: full, closed: true, problem: "could not be used; every path of this Ingress answers 503"},
		{name: "refused snippet without ModSecurity: no effect", config: map[string]string{"allow-snippet-annotations": "true"},
			ann: map[string]string{p + "modsecurity-snippet": "SecDebugLog /tmp/x"}, opts: full, problem: "has no effect"},
		{name: "invalid CRS value closes", ann: map[string]string{p + "enable-modsecurity": "true", p + "enable-owasp-core-rules": "maybe"},
			opts: full, closed: true, problem: "could not be used"},
		{name: "invalid transaction id is dropped", ann: map[string]string{p + "enable-modsecurity": "true", p + "modsecurity-transaction-id": "$ssl_client_cert"},
			opts: full, want: &model.ModSecurity{}, problem: "modsecurity-transaction-id"},
		{name: "a base rule id is taken", config: map[string]string{"allow-snippet-annotations": "true"},
			ann:  map[string]string{p + "enable-modsecurity": "true", p + "modsecurity-snippet": `SecAction "id:200002,phase:1,pass"`},
			opts: full, closed: true, problem: "rule id 200002 is taken"},
		{name: "a ConfigMap rule id is taken", config: map[string]string{"allow-snippet-annotations": "true", "enable-modsecurity": "true",
			"modsecurity-snippet": `SecAction "id:7,phase:1,pass"`},
			ann:  map[string]string{p + "modsecurity-snippet": `SecAction "id:7,phase:1,pass"`},
			opts: full, closed: true, problem: "rule id 7 is taken"},
		{name: "the ConfigMap's rules replacing the base free its ids", config: map[string]string{"allow-snippet-annotations": "true", "enable-modsecurity": "true",
			"modsecurity-snippet": "SecRuleEngine On"},
			ann:  map[string]string{p + "modsecurity-snippet": `SecAction "id:200002,phase:1,pass"`},
			opts: full, want: &model.ModSecurity{}, rules: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(1)
			ing := mkIngress("default", "web", 0, rule("a.com", path("/", "Prefix", svcName(0), 80)))
			ing.Annotations = tc.ann
			s.Ingresses = append(s.Ingresses, ing)
			if tc.config != nil {
				s.ConfigMaps = append(s.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"}, Data: tc.config})
			}
			m, problems := Build(s, tc.opts(testOpts))
			l := server(m, "a.com").Match("/")
			if closed := l.Action.Return != nil && l.Action.Return.Status == 503; closed != tc.closed {
				t.Fatalf("location %+v: closed %v, want %v (problems %v)", l, closed, tc.closed, problems)
			}
			var got *model.ModSecurity
			if l.Policy != nil {
				got = l.Policy.ModSecurity
			}
			switch {
			case (got == nil) != (tc.want == nil):
				t.Errorf("ModSecurity %+v, want %+v", got, tc.want)
			case got != nil && (got.CRS != tc.want.CRS || got.TransactionID.String() != tc.want.TransactionID.String()):
				t.Errorf("ModSecurity %+v, want %+v", got, tc.want)
			case got != nil && (got.Rules == nil) != (tc.rules == 0), got != nil && got.Rules != nil && len(got.Rules.Directives) != tc.rules:
				t.Errorf("rules %+v, want %d directives", got.Rules, tc.rules)
			}
			found := tc.problem == ""
			for _, pr := range problems {
				found = found || strings.Contains(pr.Message, tc.problem)
			}
			if !found {
				t.Errorf("problems %v, want one containing %q", problems, tc.problem)
			}
			if tc.problem == "" && len(problems) > 0 {
				t.Errorf("problems %v, want none", problems)
			}
		})
	}
}

// TestModSecurityConfigMapExcluded: when nginx refuses what the ConfigMap
// renders (a regular expression of its modsecurity-snippet that PCRE
// cannot compile, say) and the controller falls back to the defaults,
// every path closes instead of losing ModSecurity.
func TestModSecurityConfigMapExcluded(t *testing.T) {
	s := world(1)
	s.Ingresses = append(s.Ingresses, mkIngress("default", "web", 0, rule("a.com", path("/", "Prefix", svcName(0), 80))))
	s.ConfigMaps = append(s.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config", UID: "cm"},
		Data: map[string]string{"enable-modsecurity": "true", "modsecurity-snippet": `SecRule ARGS "@rx (" "id:1,phase:2,deny"`}})
	opts := testOpts
	opts.ModSecurityAvailable, opts.CRSAvailable = true, true
	opts.Excluded = map[string]string{model.ObjectRef{Kind: "ConfigMap", Namespace: "causeway", Name: "config", UID: "cm"}.Key(): "nginx refused it"}
	m, problems := Build(s, opts)
	if l := server(m, "a.com").Match("/"); l.Action.Return == nil || l.Action.Return.Status != 503 {
		t.Fatalf("location %+v, want 503", l)
	}
	if len(problems) == 0 || !strings.Contains(problems[len(problems)-1].Message, `"enable-modsecurity" is left out with the ConfigMap`) {
		t.Fatalf("problems %v, want one naming enable-modsecurity", problems)
	}
}
