package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/flavour"
	"github.com/causeway/causeway/internal/runtime"
)

// The attacks of the ModSecurity tests, in a query argument, and a clean
// request.
const (
	sqlInjection = "/?id=1%27%20OR%20%271%27%3D%271"
	crossSite    = "/?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E"
	cleanQuery   = "/?id=42"
)

// wafIngress is an Ingress of host on Service web with annotations.
func wafIngress(name, host string, annotations map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: %s\n  namespace: default\n  annotations:\n", name)
	for k, v := range annotations {
		fmt.Fprintf(&b, "    nginx.ingress.kubernetes.io/%s: %q\n", k, v)
	}
	fmt.Fprintf(&b, "spec:\n  ingressClassName: causeway\n  rules:\n  - host: %s\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}\n---\n", host)
	return b.String()
}

// TestModSecurityAgainstNginx: with the OWASP Core Rule Set, an SQL
// injection and a cross-site script in a query argument are refused with
// 403 where the snippet says SecRuleEngine On, and go through where
// ModSecurity runs in its default, DetectionOnly, with the match in the
// audit log on nginx's output; a clean request goes through everywhere,
// and paths without ModSecurity are not inspected.
func TestModSecurityAgainstNginx(t *testing.T) {
	t.Parallel()
	requireModule(t, runtime.ModSecurityModule)
	be := startBackend(t, "web")
	start := time.Now()
	c := startController(t, map[string]string{
		"config.yaml": configMapYAML(map[string]string{"allow-snippet-annotations": "true"}),
		"app.yaml": ingressClass + serviceYAML("default", "web", 80, be) +
			wafIngress("block", "block.test", map[string]string{"enable-modsecurity": "true", "enable-owasp-core-rules": "true",
				"modsecurity-snippet": "SecRuleEngine On", "modsecurity-transaction-id": "$request_id"}) +
			wafIngress("detect", "detect.test", map[string]string{"enable-modsecurity": "true", "enable-owasp-core-rules": "true"}) +
			wafIngress("plain", "plain.test", nil),
	})
	// nginx loads the CRS at every configuration test and reload.
	t.Logf("ready with the CRS in %s", time.Since(start).Round(time.Millisecond))
	for _, tc := range []struct {
		host, path string
		want       int
	}{
		{"block.test", sqlInjection, 403},
		{"block.test", crossSite, 403},
		{"block.test", cleanQuery, 200},
		{"detect.test", sqlInjection, 200},
		{"detect.test", crossSite, 200},
		{"detect.test", cleanQuery, 200},
		{"plain.test", sqlInjection, 200},
		{"plain.test", cleanQuery, 200},
	} {
		if r := c.Get(tc.host, tc.path); r.Status != tc.want {
			t.Errorf("%s%s: status %d, want %d", tc.host, tc.path, r.Status, tc.want)
		}
	}
	// The audit log: a JSON line per transaction with a match, the
	// DetectionOnly one's included, naming the CRS's SQL injection rule.
	eventually(t, 10*time.Second, func() error {
		for _, line := range strings.Split(c.log.String(), "\n") {
			if strings.Contains(line, `{"transaction":`) && strings.Contains(line, `"detect.test"`) &&
				strings.Contains(line, `"uri":"`+sqlInjection+`"`) && strings.Contains(line, `"secrules_engine":"DetectionOnly"`) &&
				strings.Contains(line, `"ruleId":"942100"`) {
				return nil
			}
		}
		return fmt.Errorf("no audit log line for detect.test's SQL injection (rule 942100)")
	})
	if strings.Contains(c.log.String(), `"plain.test"`) {
		t.Error("a path without ModSecurity reached the audit log")
	}
}

// TestModSecurityFromConfigMap: the ConfigMap's enable-modsecurity runs
// ModSecurity on every Ingress, its modsecurity-snippet including the CRS
// as ingress-nginx's documentation writes it; an Ingress turns it off.
func TestModSecurityFromConfigMap(t *testing.T) {
	t.Parallel()
	requireModule(t, runtime.ModSecurityModule)
	be := startBackend(t, "web")
	c := startController(t, map[string]string{
		"config.yaml": configMapYAML(map[string]string{"enable-modsecurity": "true",
			"modsecurity-snippet": "Include /etc/nginx/modsecurity/modsecurity.conf\nInclude /etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf\nSecRuleEngine On\n"}),
		"app.yaml": ingressClass + serviceYAML("default", "web", 80, be) +
			wafIngress("guarded", "guarded.test", nil) +
			wafIngress("opted-out", "out.test", map[string]string{"enable-modsecurity": "false"}),
	})
	for _, tc := range []struct {
		host, path string
		want       int
	}{
		{"guarded.test", sqlInjection, 403},
		{"guarded.test", cleanQuery, 200},
		{"out.test", sqlInjection, 200},
	} {
		if r := c.Get(tc.host, tc.path); r.Status != tc.want {
			t.Errorf("%s%s: status %d, want %d", tc.host, tc.path, r.Status, tc.want)
		}
	}
}

// TestModSecurityFailsClosedWithoutModule: where nginx cannot load
// ModSecurity (a modules directory without it here; Angie always), an
// Ingress asking for it answers 503 with a Problem rather than being
// served uninspected, and the others are served; the ConfigMap's switch
// closes every Ingress.
func TestModSecurityFailsClosedWithoutModule(t *testing.T) {
	t.Parallel()
	be := startBackend(t, "web")
	app := ingressClass + serviceYAML("default", "web", 80, be) +
		wafIngress("guarded", "guarded.test", map[string]string{"enable-modsecurity": "true"}) +
		wafIngress("plain", "plain.test", nil)
	c := startController(t, map[string]string{"app.yaml": app}, "--nginx-modules-dir", t.TempDir(), "--dataplane", "plain")
	if r := c.Get("guarded.test", cleanQuery); r.Status != 503 {
		t.Errorf("guarded.test: status %d, want 503", r.Status)
	}
	if r := c.Get("plain.test", cleanQuery); r.Status != 200 {
		t.Errorf("plain.test: status %d, want 200", r.Status)
	}
	eventually(t, 10*time.Second, func() error {
		log := c.log.String()
		for _, want := range []string{"nginx.ingress.kubernetes.io/enable-modsecurity", "answers 503", "default/guarded"} {
			if !strings.Contains(log, want) {
				return fmt.Errorf("the controller log does not name %q", want)
			}
		}
		return nil
	})

	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"enable-modsecurity": "true"}))
	eventually(t, 10*time.Second, func() error {
		if r := c.Get("plain.test", cleanQuery); r.Status != 503 {
			return fmt.Errorf("plain.test with the ConfigMap's enable-modsecurity: status %d, want 503", r.Status)
		}
		return nil
	})
}

// TestModSecurityOnAngie: Angie cannot load Debian's module and the
// vendored build has no connector, so on Angie, with its own modules
// directory, the paths asking for ModSecurity answer 503 with a Problem
// that names Angie, and the others are served.
func TestModSecurityOnAngie(t *testing.T) {
	t.Parallel()
	if dataPlaneFlavour.Name != flavour.Angie {
		t.Skip("Angie only: nginx runs ModSecurity (TestModSecurityAgainstNginx)")
	}
	be := startBackend(t, "web")
	c := startController(t, map[string]string{"app.yaml": ingressClass + serviceYAML("default", "web", 80, be) +
		wafIngress("guarded", "guarded.test", map[string]string{"enable-modsecurity": "true", "enable-owasp-core-rules": "true"}) +
		wafIngress("plain", "plain.test", nil)})
	if r := c.Get("guarded.test", cleanQuery); r.Status != 503 {
		t.Errorf("guarded.test: status %d, want 503", r.Status)
	}
	if r := c.Get("plain.test", cleanQuery); r.Status != 200 {
		t.Errorf("plain.test: status %d, want 200", r.Status)
	}
	eventually(t, 10*time.Second, func() error {
		if log := c.log.String(); !strings.Contains(log, "the data plane is Angie") || !strings.Contains(log, "default/guarded") {
			return fmt.Errorf("no Problem naming Angie on default/guarded in the controller log")
		}
		return nil
	})
}

// TestModSecurityRefusedConfigMapSnippetClosesEveryPath: a ConfigMap
// snippet that passes Causeway's grammar and that ModSecurity refuses at
// load (@verifyCC's regular expression that PCRE cannot compile; a bad
// @rx is accepted and matches nothing) must not freeze the
// controller, nor leave the Ingresses uninspected: the ConfigMap's
// defaults are used and, since it ran ModSecurity, every path answers 503.
func TestModSecurityRefusedConfigMapSnippetClosesEveryPath(t *testing.T) {
	t.Parallel()
	requireModule(t, runtime.ModSecurityModule)
	be := startBackend(t, "web")
	c := startController(t, map[string]string{
		"config.yaml": configMapYAML(map[string]string{"enable-modsecurity": "true",
			"modsecurity-snippet": `SecRule ARGS "@verifyCC (" "id:1,phase:2,deny"`}),
		"app.yaml": ingressClass + serviceYAML("default", "web", 80, be) + wafIngress("guarded", "guarded.test", nil),
	})
	eventually(t, 15*time.Second, func() error {
		if r := c.Get("guarded.test", cleanQuery); r.Status != 503 {
			return fmt.Errorf("guarded.test: status %d, want 503", r.Status)
		}
		if !strings.Contains(c.log.String(), `enable-modsecurity\" is left out with the ConfigMap`) {
			return fmt.Errorf("no Problem saying enable-modsecurity is left out with the ConfigMap")
		}
		return nil
	})
}
