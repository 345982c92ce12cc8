package migrate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

const p = "nginx.ingress.kubernetes.io/"

// mkIngress is a valid Ingress of class nginx with the given annotations
// and one path.
func mkIngress(ns, name, path string, ann map[string]string) *networkingv1.Ingress {
	class := "nginx"
	prefix := networkingv1.PathTypePrefix
	if path == "" {
		path = "/"
	}
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann},
		Spec: networkingv1.IngressSpec{
			IngressClassName: &class,
			Rules: []networkingv1.IngressRule{{Host: "app.example.com", IngressRuleValue: networkingv1.IngressRuleValue{
				HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: path, PathType: &prefix,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: "app", Port: networkingv1.ServiceBackendPort{Number: 80}}},
				}}},
			}}},
		},
	}
}

// entry finds an annotation's entry in a report of one Ingress.
func entry(t *testing.T, r Report, key string) Entry {
	t.Helper()
	if len(r.Ingresses) != 1 {
		t.Fatalf("want one Ingress, got %d", len(r.Ingresses))
	}
	for _, e := range r.Ingresses[0].Annotations {
		if e.Key == key {
			return e
		}
	}
	t.Fatalf("no entry for %s in %+v", key, r.Ingresses[0].Annotations)
	return Entry{}
}

// TestAnnotationVerdicts is a row per rule of how an annotation is judged.
func TestAnnotationVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ann     map[string]string
		key     string
		want    Verdict
		message string // a substring of one of the entry's messages
	}{
		{"supported", map[string]string{p + "proxy-buffering": "on"}, p + "proxy-buffering", Supported, ""},
		{"supported with a documented difference", map[string]string{p + "proxy-body-size": "8m"}, p + "proxy-body-size", SupportedWithDifference, ""},
		{"invalid value", map[string]string{p + "proxy-body-size": "8mb"}, p + "proxy-body-size", Invalid, "value \"8mb\""},
		{"relative redirect", map[string]string{p + "permanent-redirect": "/new"}, p + "permanent-redirect", Invalid, "absolute"},
		{"not yet supported", map[string]string{p + "global-rate-limit": "100"}, p + "global-rate-limit", Unsupported, "not supported yet"},
		{"modsecurity", map[string]string{p + "enable-modsecurity": "true"}, p + "enable-modsecurity", SupportedWithDifference, ""},
		{"canary", map[string]string{p + "canary": "true", p + "canary-weight": "10"}, p + "canary", SupportedWithDifference, ""},
		{"an annotation ignored on a canary", map[string]string{p + "canary": "true", p + "proxy-buffering": "on"}, p + "proxy-buffering", Unsupported, "has no effect on a canary Ingress"},
		{"snippet without allow-snippet-annotations", map[string]string{p + "configuration-snippet": "return 200;"}, p + "configuration-snippet", Unsupported, "allow-snippet-annotations is false"},
		{"stream snippet", map[string]string{p + "stream-snippet": "server {}"}, p + "stream-snippet", Unsupported, "not supported yet"},
		{"supported but without effect", map[string]string{p + "cors-max-age": "60"}, p + "cors-max-age", Unsupported, "only applies with enable-cors"},
		{"supported but an unsupported value", map[string]string{p + "backend-protocol": "AUTO_HTTP"}, p + "backend-protocol", Unsupported, "not supported"},
		{"Service annotation on an Ingress", map[string]string{"causeway.io/load-balance": "ewma"}, "causeway.io/load-balance", Unsupported, "read from Services"},
		{"security annotation", map[string]string{p + "auth-url": "https://$remote_addr/oauth2/auth"}, p + "auth-url", FailClosed, "answers 503"},
		{"oauth2-proxy's auth-url", map[string]string{p + "auth-url": "https://$host/oauth2/auth"}, p + "auth-url", SupportedWithDifference, ""},
		{"oauth2-proxy's auth-signin", map[string]string{p + "auth-url": "https://$host/oauth2/auth",
			p + "auth-signin": "https://$host/oauth2/start?rd=$escaped_request_uri"}, p + "auth-signin", SupportedWithDifference, ""},
		{"basic auth", map[string]string{p + "auth-type": "basic", p + "auth-secret": "htpasswd"}, p + "auth-type", SupportedWithDifference, ""},
		{"digest auth", map[string]string{p + "auth-type": "digest", p + "auth-secret": "htpasswd"}, p + "auth-type", SupportedWithDifference, ""},
		{"satisfy", map[string]string{p + "satisfy": "any"}, p + "satisfy", SupportedWithDifference, ""},
		{"invalid satisfy", map[string]string{p + "satisfy": "either"}, p + "satisfy", FailClosed, "answers 503"},
		{"source ranges", map[string]string{p + "whitelist-source-range": "10.0.0.0/8"}, p + "whitelist-source-range", SupportedWithDifference, ""},
		{"invalid source ranges", map[string]string{p + "whitelist-source-range": "10.0.0.0/33"}, p + "whitelist-source-range", FailClosed, "answers 503"},
		{"verification without a CA", map[string]string{p + "backend-protocol": "HTTPS", p + "proxy-ssl-verify": "on"}, p + "proxy-ssl-verify", FailClosed, "answers 503"},
		{"the protocol beside a closed verification", map[string]string{p + "backend-protocol": "HTTPS", p + "proxy-ssl-verify": "on"}, p + "backend-protocol", SupportedWithDifference, ""},
		{"unknown", map[string]string{p + "no-such-thing": "1"}, p + "no-such-thing", Unknown, "unknown"},
		{"unknown of Causeway's", map[string]string{"causeway.io/no-such-thing": "1"}, "causeway.io/no-such-thing", Unknown, "unknown"},
		{"NIC's, supported", map[string]string{"nginx.org/client-max-body-size": "8m"}, "nginx.org/client-max-body-size", Supported, ""},
		{"NIC's, with a difference from NIC", map[string]string{"nginx.org/lb-method": "least_conn"}, "nginx.org/lb-method", SupportedWithDifference, ""},
		{"NIC's, invalid", map[string]string{"nginx.org/proxy-read-timeout": "forever"}, "nginx.org/proxy-read-timeout", Invalid, "value \"forever\""},
		{"NIC's, not yet supported", map[string]string{"nginx.org/proxy-hide-headers": "X-A"}, "nginx.org/proxy-hide-headers", Unsupported, "not supported yet"},
		{"NIC's basic authentication", map[string]string{"nginx.org/basic-auth-secret": "users"}, "nginx.org/basic-auth-secret", FailClosed, "answers 503"},
		{"NGINX Plus's JWT", map[string]string{"nginx.com/jwt-key": "jwk"}, "nginx.com/jwt-key", FailClosed, "needs NGINX Plus"},
		{"NGINX Plus's health checks", map[string]string{"nginx.com/health-checks": "true"}, "nginx.com/health-checks", Unsupported, "need NGINX Plus"},
		{"App Protect WAF on", map[string]string{"appprotect.f5.com/app-protect-enable": "True"}, "appprotect.f5.com/app-protect-enable", FailClosed, "NGINX App Protect WAF"},
		{"App Protect WAF off", map[string]string{"appprotect.f5.com/app-protect-enable": "False"}, "appprotect.f5.com/app-protect-enable", Unsupported, "asks for nothing"},
		{"App Protect DoS", map[string]string{"appprotectdos.f5.com/app-protect-dos-resource": "default/dos"}, "appprotectdos.f5.com/app-protect-dos-resource", FailClosed, "NGINX App Protect DoS"},
		{"NIC's, unknown", map[string]string{"nginx.org/no-such-thing": "1"}, "nginx.org/no-such-thing", Unknown, "unknown"},
		{"NIC's beside ingress-nginx's", map[string]string{"nginx.org/proxy-read-timeout": "30s", p + "proxy-read-timeout": "20"},
			"nginx.org/proxy-read-timeout", Unsupported, "which wins"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(Objects{Ingresses: []*networkingv1.Ingress{mkIngress("default", "web", "", tc.ann)}}, Options{})
			e := entry(t, r, tc.key)
			if e.Verdict != tc.want {
				t.Fatalf("verdict %q, want %q (entry %+v)", e.Verdict, tc.want, e)
			}
			if tc.message != "" && !slices.ContainsFunc(e.Messages, func(m string) bool { return strings.Contains(m, tc.message) }) {
				t.Errorf("messages %q, want one containing %q", e.Messages, tc.message)
			}
			if tc.message == "" && len(e.Messages) > 0 {
				t.Errorf("messages %q, want none", e.Messages)
			}
			if ready := !tc.want.NeedsAttention(); len(tc.ann) == 1 && (r.Ingresses[0].Ready != ready || r.Ready != ready) {
				t.Errorf("Ingress ready %v, report ready %v, want %v", r.Ingresses[0].Ready, r.Ready, ready)
			}
			if e.Value != tc.ann[tc.key] {
				t.Errorf("value %q, want %q", e.Value, tc.ann[tc.key])
			}
		})
	}
}

func TestSuggestions(t *testing.T) {
	r := Check(Objects{Ingresses: []*networkingv1.Ingress{mkIngress("default", "web", "", map[string]string{
		p + "rewrite-targte": "/", p + "ssl-redirects": "false", p + "completely-different": "x",
	})}}, Options{})
	for key, want := range map[string]string{
		p + "rewrite-targte":       p + "rewrite-target",
		p + "ssl-redirects":        p + "ssl-redirect",
		p + "completely-different": "",
	} {
		if e := entry(t, r, key); e.Suggestion != want {
			t.Errorf("%s: suggestion %q, want %q", key, e.Suggestion, want)
		}
	}
}

// TestOnlyOurAnnotations: annotations under other prefixes are not
// listed, and the prefix option decides which are ingress-nginx's.
func TestOnlyOurAnnotations(t *testing.T) {
	ann := map[string]string{
		"kubectl.kubernetes.io/last-applied-configuration": "{}",
		"cert-manager.io/cluster-issuer":                   "letsencrypt",
		"custom.example.com/proxy-body-size":               "2m",
		p + "ssl-redirect":                                 "false",
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", []string{p + "ssl-redirect"}},
		{"custom.example.com", []string{"custom.example.com/proxy-body-size"}},
	} {
		r := Check(Objects{Ingresses: []*networkingv1.Ingress{mkIngress("default", "web", "", ann)}}, Options{AnnotationsPrefix: tc.prefix})
		var got []string
		for _, e := range r.Ingresses[0].Annotations {
			got = append(got, e.Key)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("prefix %q: listed %q, want %q", tc.prefix, got, tc.want)
		}
	}
}

func TestRejectedIngress(t *testing.T) {
	// A regular expression only with use-regex; this one does not compile.
	ing := mkIngress("default", "web", "/api(", map[string]string{p + "use-regex": "true"})
	r := Check(Objects{Ingresses: []*networkingv1.Ingress{ing}}, Options{})
	if got := r.Ingresses[0]; got.Rejected == "" || got.Ready || r.Ready {
		t.Fatalf("report %+v: want the Ingress rejected and not ready", got)
	}
}

func TestClass(t *testing.T) {
	field := mkIngress("default", "a", "", nil)
	legacy := mkIngress("default", "b", "", map[string]string{"kubernetes.io/ingress.class": "nginx-internal"})
	legacy.Spec.IngressClassName = nil
	none := mkIngress("default", "c", "", nil)
	none.Spec.IngressClassName = nil
	r := Check(Objects{Ingresses: []*networkingv1.Ingress{none, legacy, field}}, Options{})
	got := [][2]string{}
	for _, ing := range r.Ingresses {
		got = append(got, [2]string{ing.Class, ing.ClassFrom})
	}
	want := [][2]string{{"nginx", "spec.ingressClassName"}, {"nginx-internal", "kubernetes.io/ingress.class"}, {"", ""}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("classes %q, want %q", got, want)
	}
}

func mkConfigMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

// TestKeyVerdicts is a row per rule of how a ConfigMap key is judged.
func TestKeyVerdicts(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		want       Verdict
		suggestion string
	}{
		{"ssl-redirect", "false", Supported, ""},
		{"reload-free-certificates", "false", Supported, ""},
		{"proxy-body-size", "8m", SupportedWithDifference, ""},
		{"proxy-body-size", "8mb", Invalid, ""},
		{"hsts", "true", SupportedWithDifference, ""},
		{"ssl-early-data", "true", Unsupported, ""},
		{"block-user-agents", "curl", SupportedWithDifference, ""},
		{"block-user-agents", "~(", Invalid, ""},
		{"whitelist-source-range", "10.0.0.0/8", SupportedWithDifference, ""},
		{"block-cidrs", "10.0.0.1/8", Invalid, ""},
		{"enable-modsecurity", "true", SupportedWithDifference, ""},
		{"enable-modsecurity", "false", SupportedWithDifference, ""},
		{"enable-modsecurity", "yes please", Invalid, ""},
		{"modsecurity-snippet", "SecRuleEngine On", SupportedWithDifference, ""},
		{"modsecurity-snippet", "SecDebugLog /tmp/x", Invalid, ""},
		{"allow-snippet-annotations", "true", SupportedWithDifference, ""},
		{"use-forwarded-header", "true", Unknown, "use-forwarded-headers"},
		// The defaults of per-location annotations.
		{"proxy-buffering", "on", Supported, ""},
		{"proxy-buffering", "yes", Invalid, ""},
		{"proxy-buffer-size", "16k", SupportedWithDifference, ""},
		{"proxy-buffer-size", "0", Invalid, ""},
		{"custom-http-errors", "404,503", SupportedWithDifference, ""},
		{"force-ssl-redirect", "true", SupportedWithDifference, ""},
		{"service-upstream", "true", SupportedWithDifference, ""},
		{"proxy-redirect-to", "/app/", Invalid, ""},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			r := Check(Objects{ConfigMaps: []*corev1.ConfigMap{mkConfigMap("ingress-nginx", DefaultConfigMapName, map[string]string{tc.key: tc.value})}}, Options{})
			if len(r.ConfigMaps) != 1 || len(r.ConfigMaps[0].Keys) != 1 {
				t.Fatalf("report %+v: want one ConfigMap with one key", r.ConfigMaps)
			}
			e := r.ConfigMaps[0].Keys[0]
			if e.Verdict != tc.want || e.Suggestion != tc.suggestion {
				t.Fatalf("verdict %q, suggestion %q; want %q, %q", e.Verdict, e.Suggestion, tc.want, tc.suggestion)
			}
			if (e.Verdict == Supported || e.Verdict == SupportedWithDifference) != (len(e.Messages) == 0) {
				t.Errorf("messages %q: want Parse's Problem for every key it does not take as written", e.Messages)
			}
			if r.Ready != !tc.want.NeedsAttention() {
				t.Errorf("ready %v for a ConfigMap key %s", r.Ready, tc.want)
			}
		})
	}
}

func TestConfigMapSelection(t *testing.T) {
	cms := []*corev1.ConfigMap{
		mkConfigMap("zeta", DefaultConfigMapName, nil),
		mkConfigMap("ingress-nginx", DefaultConfigMapName, nil),
		mkConfigMap("ingress-nginx", "nginx-config", nil),
		mkConfigMap("app", "settings", nil),
	}
	names := func(r Report) []string {
		var out []string
		for _, cm := range r.ConfigMaps {
			out = append(out, cm.Namespace+"/"+cm.Name)
		}
		return out
	}
	r := Check(Objects{ConfigMaps: cms}, Options{})
	if got, want := names(r), []string{"ingress-nginx/ingress-nginx-controller", "zeta/ingress-nginx-controller"}; !slices.Equal(got, want) {
		t.Errorf("default selection %q, want %q", got, want)
	}
	r = Check(Objects{ConfigMaps: cms}, Options{ConfigMapNamespace: "ingress-nginx", ConfigMapName: "nginx-config"})
	if got, want := names(r), []string{"ingress-nginx/nginx-config"}; !slices.Equal(got, want) || r.ConfigMapNotFound != "" {
		t.Errorf("named selection %q (not found %q), want %q", got, r.ConfigMapNotFound, want)
	}
	r = Check(Objects{ConfigMaps: cms}, Options{ConfigMapNamespace: "app", ConfigMapName: "nginx-config"})
	if len(r.ConfigMaps) != 0 || r.ConfigMapNotFound != "app/nginx-config" {
		t.Errorf("absent ConfigMap: %q, not found %q", names(r), r.ConfigMapNotFound)
	}
}

// TestDeterministic: the report does not depend on the order of objects.
func TestDeterministic(t *testing.T) {
	objs, err := FromDir(testdataDir)
	if err != nil {
		t.Fatal(err)
	}
	first := Check(objs, Options{})
	slices.Reverse(objs.Ingresses)
	slices.Reverse(objs.ConfigMaps)
	if again := Check(objs, Options{}); !reflect.DeepEqual(first, again) {
		t.Fatal("reversing the objects changed the report")
	}
}

// TestTestdataVerdicts pins what the testdata set is meant to show: one
// of each annotation verdict, and a result that is not ready.
func TestTestdataVerdicts(t *testing.T) {
	objs, err := FromDir(testdataDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.ReadProblems) != 0 {
		t.Fatalf("read problems: %v", objs.ReadProblems)
	}
	r := Check(objs, Options{})
	if r.Summary.Ingresses != 13 || len(r.ConfigMaps) != 1 {
		t.Fatalf("%d Ingresses, %d ConfigMaps; want 13 and 1", r.Summary.Ingresses, len(r.ConfigMaps))
	}
	for _, v := range AnnotationVerdicts {
		if r.Summary.Annotations[v] == 0 {
			t.Errorf("no annotation is %s", v)
		}
	}
	want := map[string]Verdict{
		"marketing/cms-admin":   "",
		"marketing/partners":    FailClosed,
		"marketing/blog":        Unsupported,
		"shop/checkout-canary":  "",
		"marketing/campaign":    Unknown,
		"shop/api":              "",
		"platform/billing":      "",
		"marketing/www":         "",
		"shop/checkout":         "",
		"platform/grpc-gateway": "",
		"platform/status":       "",
		"platform/legacy-docs":  "",
		"shop/storefront":       "",
	}
	for _, ing := range r.Ingresses {
		name := ing.Namespace + "/" + ing.Name
		w, ok := want[name]
		if !ok {
			t.Errorf("unexpected Ingress %s", name)
			continue
		}
		has := slices.ContainsFunc(ing.Annotations, func(e Entry) bool { return e.Verdict == w })
		if w == "" && !ing.Ready || w != "" && (ing.Ready || !has) {
			t.Errorf("%s: ready %v, annotations %+v; want a %q entry", name, ing.Ready, ing.Annotations, w)
		}
	}
	if r.Ready {
		t.Error("the testdata set must not be ready")
	}
	// cert-manager's HTTP-01 solver Ingresses carry
	// whitelist-source-range: 0.0.0.0/0,::/0, which Causeway now applies:
	// no note is needed.
	if len(r.Notes) != 0 {
		t.Errorf("notes %q, want none", r.Notes)
	}
}

func TestReadyText(t *testing.T) {
	r := Check(Objects{Ingresses: []*networkingv1.Ingress{mkIngress("default", "web", "", map[string]string{p + "ssl-redirect": "false"})}}, Options{})
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if !r.Ready || !strings.HasSuffix(b.String(), "\nready to migrate\n") {
		t.Fatalf("ready %v, text:\n%s", r.Ready, b.String())
	}
}

func TestSubject(t *testing.T) {
	keys := []string{p + "proxy-ssl-verify", p + "proxy-ssl-verify-depth", p + "backend-protocol"}
	for msg, want := range map[string]string{
		"annotation " + p + "proxy-ssl-verify-depth: value \"x\": bad":                   p + "proxy-ssl-verify-depth",
		"annotation " + p + "proxy-ssl-verify: value \"x\": bad":                         p + "proxy-ssl-verify",
		"annotation " + p + "backend-protocol: value; proxy-ssl-verify asks for TLS":     p + "backend-protocol",
		"annotation " + p + "backend-protocol: see also " + p + "proxy-ssl-verify-depth": p + "backend-protocol",
		"3 more unknown or unsupported annotations are ignored":                          "",
	} {
		if got := subject(msg, keys); got != want {
			t.Errorf("subject(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"ssl-redirect", "ssl-redirect", 0},
		{"ssl-redirects", "ssl-redirect", 1},
		{"rewrite-targte", "rewrite-target", 2},
		{"abc", "abcdef", maxTypo + 1},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestFromCluster(t *testing.T) {
	ing := mkIngress("shop", "web", "", map[string]string{p + "canary": "true"})
	client := fake.NewSimpleClientset(ing,
		mkConfigMap("ingress-nginx", DefaultConfigMapName, map[string]string{"hsts": "false"}),
		mkConfigMap("ingress-nginx", "other", map[string]string{"hsts": "false"}),
	)
	objs, err := FromCluster(context.Background(), client, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := Check(objs, Options{})
	if len(r.Ingresses) != 1 || r.Ingresses[0].Name != "web" || len(r.ConfigMaps) != 1 || r.ConfigMaps[0].Name != DefaultConfigMapName {
		t.Fatalf("report %+v", r)
	}
	objs, err = FromCluster(context.Background(), client, Options{ConfigMapNamespace: "ingress-nginx", ConfigMapName: "absent"})
	if err != nil {
		t.Fatal(err)
	}
	if r := Check(objs, Options{ConfigMapNamespace: "ingress-nginx", ConfigMapName: "absent"}); r.ConfigMapNotFound != "ingress-nginx/absent" {
		t.Errorf("not found = %q", r.ConfigMapNotFound)
	}
	for _, a := range client.Actions() {
		if v := a.GetVerb(); v != "list" && v != "get" {
			t.Errorf("the check made a %s request; it must only read", v)
		}
	}
}

func TestFromDirReadProblems(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "bad.yaml", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: [\n")
	writeFile(t, dir, "good.yml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ingress-nginx-controller\n  namespace: ingress-nginx\ndata:\n  ssl-redirect: \"false\"\n")
	objs, err := FromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := Check(objs, Options{})
	if len(r.ReadProblems) != 1 || !strings.HasSuffix(r.ReadProblems[0].Where, "bad.yaml") || len(r.ConfigMaps) != 1 || r.Ready {
		t.Fatalf("report %+v: want bad.yaml unreadable, the ConfigMap read, not ready", r)
	}
	if _, err := FromDir(dir + "/absent"); err == nil {
		t.Error("an absent directory must be an error")
	}
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSnippetVerdicts: with allow-snippet-annotations true in the
// controller's ConfigMap, a snippet Causeway reads is supported with a
// difference and one it refuses is invalid, naming the directive.
func TestSnippetVerdicts(t *testing.T) {
	cm := mkConfigMap("ingress-nginx", DefaultConfigMapName, map[string]string{"allow-snippet-annotations": "true"})
	for _, tc := range []struct {
		value   string
		want    Verdict
		message string
	}{
		{`more_set_headers "X-Frame-Options: DENY";`, SupportedWithDifference, ""},
		{`include /etc/nginx/secret.conf;`, Invalid, `directive "include" is not allowed`},
	} {
		ann := map[string]string{p + "configuration-snippet": tc.value}
		r := Check(Objects{Ingresses: []*networkingv1.Ingress{mkIngress("default", "web", "", ann)}, ConfigMaps: []*corev1.ConfigMap{cm}}, Options{})
		e := entry(t, r, p+"configuration-snippet")
		if e.Verdict != tc.want || tc.message != "" && !slices.ContainsFunc(e.Messages, func(m string) bool { return strings.Contains(m, tc.message) }) {
			t.Errorf("%q: verdict %q, messages %q; want %q with %q", tc.value, e.Verdict, e.Messages, tc.want, tc.message)
		}
	}
}

// TestSelfAuthWithoutHost: an auth-url naming $host in an Ingress with a
// rule without host is reported as the build treats it: those paths
// answer 503.
func TestSelfAuthWithoutHost(t *testing.T) {
	ing := mkIngress("default", "web", "", map[string]string{p + "auth-url": "https://$host/oauth2/auth"})
	ing.Spec.Rules[0].Host = ""
	e := entry(t, Check(Objects{Ingresses: []*networkingv1.Ingress{ing}}, Options{}), p+"auth-url")
	if e.Verdict != FailClosed || len(e.Messages) != 1 || !strings.Contains(e.Messages[0], "names $host") {
		t.Fatalf("entry %+v, want fail-closed naming $host", e)
	}
}
