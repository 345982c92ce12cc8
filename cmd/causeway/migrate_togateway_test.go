package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/causeway/causeway/internal/migrate"
	"github.com/causeway/causeway/internal/migrate/togateway"
)

const toGatewayTestdata = "../../internal/migrate/togateway/testdata"

// runToGateway runs `causeway migrate to-gateway ARGS` through cobra.
func runToGateway(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runMigrateCommand(t, newMigrateToGatewayCommand(), args...)
}

func TestMigrateToGatewayUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"two directories", []string{"a", "b"}, "at most one DIR"},
		{"directory and context", []string{"a", "--context", "prod"}, "do not go with DIR"},
		{"bad report format", []string{"a", "--report-format", "yaml"}, "want text or json"},
		{"bad gateway name", []string{"a", "--gateway-name", "Not_A_Name"}, "--gateway-name"},
		{"bad gateway namespace", []string{"a", "--gateway-namespace", "a.b"}, "--gateway-namespace"},
		{"without class alone", []string{"a", "--watch-ingress-without-class"}, "goes with --ingress-class"},
		{"unknown flag", []string{"--no-such-flag"}, "unknown flag"},
		{"absent directory", []string{"/nonexistent/manifests"}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runToGateway(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Fatalf("exit %d, stderr %q, stdout %q; want %d and an error containing %q", code, stderr, stdout, exitUsage, tc.want)
			}
		})
	}
}

// splitYAML decodes the documents the command wrote, by kind.
func splitYAML(t *testing.T, text string) (out togateway.Output) {
	t.Helper()
	for _, doc := range strings.Split(text, "\n---\n") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		var err error
		switch meta.Kind {
		case "Gateway":
			g := &gwv1.Gateway{}
			err = yaml.UnmarshalStrict([]byte(doc), g)
			out.Gateways = append(out.Gateways, g)
		case "HTTPRoute":
			r := &gwv1.HTTPRoute{}
			err = yaml.UnmarshalStrict([]byte(doc), r)
			out.HTTPRoutes = append(out.HTTPRoutes, r)
		case "GRPCRoute":
			r := &gwv1.GRPCRoute{}
			err = yaml.UnmarshalStrict([]byte(doc), r)
			out.GRPCRoutes = append(out.GRPCRoutes, r)
		case "TLSRoute":
			r := &gwv1.TLSRoute{}
			err = yaml.UnmarshalStrict([]byte(doc), r)
			out.TLSRoutes = append(out.TLSRoutes, r)
		case "ReferenceGrant":
			g := &gwv1.ReferenceGrant{}
			err = yaml.UnmarshalStrict([]byte(doc), g)
			out.ReferenceGrants = append(out.ReferenceGrants, g)
		default:
			t.Fatalf("unexpected document kind %q:\n%s", meta.Kind, doc)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestMigrateToGatewayWrites: the YAML the command writes decodes into
// the objects the converter made, the report goes to its file, and the
// exit status says the conversion is not exact.
func TestMigrateToGatewayWrites(t *testing.T) {
	dir := t.TempDir()
	yamlFile, reportFile := filepath.Join(dir, "gateway.yaml"), filepath.Join(dir, "report.json")
	input := filepath.Join(toGatewayTestdata, "tls.yaml")
	code, stdout, stderr := runToGateway(t, input, "-o", yamlFile, "--report", reportFile, "--report-format", "json")
	if code != exitAttention || stdout != "" || stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %d and nothing printed", code, stdout, stderr, exitAttention)
	}
	data, err := os.ReadFile(yamlFile)
	if err != nil {
		t.Fatal(err)
	}
	got := splitYAML(t, string(data))
	if len(got.Gateways) != 1 || len(got.HTTPRoutes) == 0 || len(got.ReferenceGrants) == 0 {
		t.Fatalf("want a Gateway, HTTPRoutes and ReferenceGrants, got %d, %d, %d", len(got.Gateways), len(got.HTTPRoutes), len(got.ReferenceGrants))
	}
	for i, r := range got.HTTPRoutes {
		// The writer leaves status out; the decoded object has none.
		if r.Spec.Hostnames == nil || len(r.Spec.Rules) == 0 {
			t.Errorf("HTTPRoute %d decoded empty: %+v", i, r)
		}
	}
	var report togateway.Report
	data, err = os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatal(err)
	}
	if report.Exact || report.Gateway != "default/causeway" || len(report.Ingresses) != 3 {
		t.Fatalf("report: exact %v, gateway %q, %d Ingresses", report.Exact, report.Gateway, len(report.Ingresses))
	}
}

// TestMigrateToGatewayRoundTrip: every golden case's YAML decodes back
// into exactly the typed objects converted.
func TestMigrateToGatewayRoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(toGatewayTestdata, "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no cases")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			_, stdout, _ := runToGateway(t, file, "--allow-insecure")
			got := splitYAML(t, stdout)
			// The converter's own objects, from the same input and options.
			objs, err := migrate.FromDir(file)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := togateway.Convert(togateway.Input{Ingresses: objs.Ingresses, ConfigMaps: objs.ConfigMaps,
				Controller: togateway.ControllerConfigMap(objs.ConfigMaps, "", "", migrate.DefaultConfigMapName)},
				togateway.Options{AllowInsecure: true})
			if !reflect.DeepEqual(got, want) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				t.Fatalf("decoded objects differ from the converted ones:\n got %s\nwant %s", gj, wj)
			}
		})
	}
}

// TestMigrateToGatewayExact: an Ingress every input of which converts
// exits 0; a refused one is not written without --allow-insecure.
func TestMigrateToGatewayExact(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exact := write("exact.yaml", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`)
	code, stdout, stderr := runToGateway(t, exact)
	if code != exitReady || !strings.Contains(stdout, "kind: HTTPRoute") || !strings.Contains(stderr, "every input converted as it was") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	auth := write("auth.yaml", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: admin
  namespace: shop
  annotations: {nginx.ingress.kubernetes.io/auth-url: "https://auth.example.com/"}
spec:
  rules:
  - host: admin.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: admin, port: {number: 80}}}}
`)
	code, stdout, stderr = runToGateway(t, auth)
	if code != exitAttention || strings.Contains(stdout, "kind: HTTPRoute") || !strings.Contains(stderr, "REFUSED") {
		t.Fatalf("without --allow-insecure: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = runToGateway(t, auth, "--allow-insecure")
	if code != exitAttention || !strings.Contains(stdout, "kind: HTTPRoute") || !strings.Contains(stderr, "INSECURE") {
		t.Fatalf("with --allow-insecure: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestMigrateToGatewayCluster: from a cluster, the ConfigMaps of headers
// the Ingresses and the controller's ConfigMap name are read too, and
// nothing is written.
func TestMigrateToGatewayCluster(t *testing.T) {
	prefix := networkingv1.PathTypePrefix
	ing := func(name, headers string) *networkingv1.Ingress {
		return &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Annotations: map[string]string{
				"nginx.ingress.kubernetes.io/custom-headers": headers}},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: name + ".example.com",
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: "/", PathType: &prefix,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}},
		}
	}
	cm := func(ns, name string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
	}
	client := fake.NewSimpleClientset(
		ing("web", "response-headers"), ing("gone", "shop/not-there"),
		cm("ingress-nginx", "ingress-nginx-controller", map[string]string{"proxy-set-headers": "ingress-nginx/request-headers",
			"global-allowed-response-headers": "X-Frame-Options"}),
		cm("ingress-nginx", "request-headers", map[string]string{"X-Team": "shop"}),
		cm("shop", "response-headers", map[string]string{"X-Frame-Options": "DENY"}),
	)
	newMigrateClient = func(string, string) (kubernetes.Interface, error) { return client, nil }
	defer func() { newMigrateClient = defaultMigrateClient }()

	code, stdout, stderr := runToGateway(t)
	if code != exitAttention {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"name: X-Team", "name: X-Frame-Options"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the YAML has no %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "ConfigMap shop/not-there of headers could not be read") {
		t.Errorf("the report does not say shop/not-there could not be read:\n%s", stderr)
	}
	for _, a := range client.Actions() {
		if v := a.GetVerb(); v != "list" && v != "get" {
			t.Errorf("the conversion made a %s request; it must only read", v)
		}
	}
}

// TestMigrateToGatewayProof: the report proves each Ingress, and the exit
// status follows: 0 for an equivalent conversion, 1 for a difference the
// findings report (every-origin CORS with credentials), 3 for a
// difference none reports.
func TestMigrateToGatewayProof(t *testing.T) {
	dir := t.TempDir()
	ingress := func(name, annotations string) string {
		p := filepath.Join(dir, name+".yaml")
		text := `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ` + name + `
  namespace: shop
  annotations: {` + annotations + `}
spec:
  rules:
  - host: ` + name + `.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, annotations string
		code              int
		want              []string
	}{
		{"plain", "", exitReady, []string{
			"Ingress shop/plain\n  writes HTTPRoute/plain-plain.example.com\n  converted     path-prefix                  spec.rules[0].http.paths[0] \"/\"\n  equivalence: equivalent (3 requests answered alike)\n",
			"equivalence: 1 equivalent, 0 differ as reported, 0 differ UNEXPECTEDLY, 0 not compared\n"}},
		{"cors", `nginx.ingress.kubernetes.io/enable-cors: "true"`, exitAttention, []string{
			"  equivalence: 1 differences over 3 requests\n" +
				"    differs policy.CORS at http://cors.example.com/ (and 2 more): reported by cors-any-origin-credentials nginx.ingress.kubernetes.io/cors-allow-credentials\n" +
				"      Ingress: Credentials=true\n      Gateway: Credentials=false\n",
			"equivalence: 0 equivalent, 1 differ as reported, 0 differ UNEXPECTEDLY, 0 not compared\n"}},
		{"refused", `nginx.ingress.kubernetes.io/auth-url: "https://auth.example.com/"`, exitAttention, []string{
			"  equivalence: not compared, its routes are not written (refused)\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runToGateway(t, ingress(tc.name, tc.annotations))
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("the report has no %q:\n%s", w, stderr)
				}
			}
		})
	}
	for _, tc := range []struct {
		name string
		r    togateway.Report
		code int
	}{
		{"exact and equivalent", togateway.Report{Exact: true, Equivalence: &togateway.EquivalenceSummary{Equivalent: 1}}, exitReady},
		{"explained", togateway.Report{Equivalence: &togateway.EquivalenceSummary{Explained: 1}}, exitAttention},
		{"unexpected", togateway.Report{Equivalence: &togateway.EquivalenceSummary{Explained: 1, Unexpected: 1}}, exitUnproven},
		{"unexpected though exact", togateway.Report{Exact: true, Equivalence: &togateway.EquivalenceSummary{Unexpected: 1}}, exitUnproven},
	} {
		if got := toGatewayExit(tc.r); got != tc.code {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.code)
		}
	}
}
