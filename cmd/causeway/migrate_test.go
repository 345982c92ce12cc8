package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/causeway/causeway/internal/migrate"
)

const migrateTestdata = "../../internal/migrate/testdata/ingress-nginx"

// runMigrateCheck runs `causeway migrate check ARGS` through cobra and
// returns the exit status and output.
func runMigrateCheck(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runMigrateCommand(t, newMigrateCheckCommand(), args...)
}

// runMigrateCommand runs a `causeway migrate` subcommand with ARGS.
func runMigrateCommand(t *testing.T, cmd *cobra.Command, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	code = exitReady
	exit = func(c int) { code = c }
	t.Cleanup(func() { exit = os.Exit })
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	_ = cmd.ExecuteContext(context.Background())
	return code, out.String(), errOut.String()
}

func TestMigrateCheckUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"two directories", []string{"a", "b"}, "at most one DIR"},
		{"directory and kubeconfig", []string{"a", "--kubeconfig", "k"}, "do not go with DIR"},
		{"directory and context", []string{"a", "--context", "prod"}, "do not go with DIR"},
		{"bad output", []string{"a", "-o", "yaml"}, "want text or json"},
		{"bad prefix", []string{"a", "--annotations-prefix", "Not A Prefix"}, "--annotations-prefix"},
		{"ConfigMap without namespace", []string{"a", "--configmap", "ingress-nginx-controller"}, "NAMESPACE/NAME"},
		{"ConfigMap with two slashes", []string{"a", "--configmap", "a/b/c"}, "NAMESPACE/NAME"},
		{"unknown flag", []string{"--no-such-flag"}, "unknown flag"},
		{"absent directory", []string{"/nonexistent/manifests"}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMigrateCheck(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Fatalf("exit %d, stderr %q, stdout %q; want %d and an error containing %q", code, stderr, stdout, exitUsage, tc.want)
			}
		})
	}
}

func TestMigrateCheckDir(t *testing.T) {
	code, stdout, _ := runMigrateCheck(t, migrateTestdata)
	if code != exitAttention || !strings.Contains(stdout, "\nnot ready to migrate: ") {
		t.Fatalf("exit %d; want %d and a not-ready verdict:\n%s", code, exitAttention, stdout)
	}

	code, stdout, _ = runMigrateCheck(t, migrateTestdata, "-o", "json")
	var r migrate.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("JSON output: %v", err)
	}
	if code != exitAttention || r.Ready || r.Summary.Ingresses != 13 {
		t.Fatalf("exit %d, ready %v, %d Ingresses", code, r.Ready, r.Summary.Ingresses)
	}

	// Only the named ConfigMap is checked.
	_, stdout, _ = runMigrateCheck(t, migrateTestdata, "--configmap", "ingress-nginx/absent")
	if !strings.Contains(stdout, "ConfigMap ingress-nginx/absent was not found.") {
		t.Fatalf("output does not say the ConfigMap is missing:\n%s", stdout)
	}
}

func TestMigrateCheckReadyAndUnreadable(t *testing.T) {
	dir := t.TempDir()
	ing := `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/ssl-redirect: "false"
spec:
  ingressClassName: nginx
  rules:
    - host: web.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: web
                port:
                  number: 80
`
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(ing), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runMigrateCheck(t, dir)
	if code != exitReady || !strings.HasSuffix(stdout, "\nready to migrate\n") {
		t.Fatalf("exit %d; want %d and ready to migrate:\n%s", code, exitReady, stdout)
	}

	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("kind: Ingress\nmetadata: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runMigrateCheck(t, dir)
	if code != exitUsage || !strings.Contains(stdout, "could not read") || !strings.Contains(stderr, "could not be read") {
		t.Fatalf("exit %d, stderr %q; want %d and the unreadable file named:\n%s", code, stderr, exitUsage, stdout)
	}
}

func TestMigrateCheckCluster(t *testing.T) {
	class := "nginx"
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: map[string]string{
			"nginx.ingress.kubernetes.io/auth-url": "https://$host/oauth2/auth",
		}},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}},
	}
	client := fake.NewSimpleClientset(ing)
	var gotConfig, gotContext string
	newMigrateClient = func(kubeconfig, context string) (kubernetes.Interface, error) {
		gotConfig, gotContext = kubeconfig, context
		return client, nil
	}
	defer func() { newMigrateClient = defaultMigrateClient }()

	code, stdout, _ := runMigrateCheck(t, "--kubeconfig", "/tmp/kubeconfig", "--context", "prod", "-o", "json")
	if gotConfig != "/tmp/kubeconfig" || gotContext != "prod" {
		t.Errorf("client built with kubeconfig %q, context %q", gotConfig, gotContext)
	}
	var r migrate.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if code != exitAttention || len(r.Ingresses) != 1 || r.Ingresses[0].Annotations[0].Verdict != migrate.FailClosed {
		t.Fatalf("exit %d, report %+v", code, r)
	}
	for _, a := range client.Actions() {
		if v := a.GetVerb(); v != "list" && v != "get" {
			t.Errorf("the check made a %s request; it must only read", v)
		}
	}

	newMigrateClient = func(string, string) (kubernetes.Interface, error) { return nil, errors.New("no configuration") }
	if code, _, stderr := runMigrateCheck(t); code != exitUsage || !strings.Contains(stderr, "no configuration") {
		t.Fatalf("exit %d, stderr %q; want %d", code, stderr, exitUsage)
	}
}

func TestMigrateRegistered(t *testing.T) {
	found := false
	for _, c := range extraCommands {
		if cmd := c(); cmd.Name() == "migrate" {
			sub, _, err := cmd.Find([]string{"check"})
			found = err == nil && sub.Name() == "check"
		}
	}
	if !found {
		t.Fatal("causeway migrate check is not registered")
	}
}
