package testenv_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/causeway/causeway/test/testenv"
)

// TestEnv checks the promises end-to-end tests rely on: the admin
// kubeconfig works, a ServiceAccount kubeconfig authenticates as that
// account and gets only what RBAC grants, and an API server restart keeps
// the data and the credentials.
func TestEnv(t *testing.T) {
	env := testenv.StartForTest(t, testenv.Options{})
	ctx := t.Context()

	admin := clientFromKubeconfig(t, env.AdminKubeconfig)
	const ns, saName = "testenv-e2e", "controller"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("admin creates namespace: %v", err)
	}

	saPath, err := env.ServiceAccountKubeconfig(ctx, ns, saName)
	if err != nil {
		t.Fatalf("ServiceAccountKubeconfig: %v", err)
	}
	sa := clientFromKubeconfig(t, saPath)

	t.Run("service account kubeconfig authenticates as the service account", func(t *testing.T) {
		review, err := sa.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SelfSubjectReview: %v", err)
		}
		want := "system:serviceaccount:" + ns + ":" + saName
		if got := review.Status.UserInfo.Username; got != want {
			t.Errorf("username = %q, want %q", got, want)
		}
	})

	t.Run("RBAC forbids what was not granted", func(t *testing.T) {
		_, err := sa.CoreV1().Secrets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("service account lists secrets cluster-wide: err = %v, want Forbidden", err)
		}
	})

	t.Run("RBAC allows what a Role grants and nothing more", func(t *testing.T) {
		grantSecretReader(ctx, t, admin, ns, saName)
		// The authorizer sees the new binding through an informer.
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := sa.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
			if apierrors.IsForbidden(err) {
				return false, nil
			}
			return err == nil, err
		})
		if err != nil {
			t.Fatalf("service account lists secrets in %s after the grant: %v", ns, err)
		}
		if _, err := sa.CoreV1().Secrets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("service account lists secrets cluster-wide after a namespaced grant: err = %v, want Forbidden", err)
		}
	})

	t.Run("data and credentials survive an API server restart", func(t *testing.T) {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "survivor"},
			Data:       map[string]string{"key": "value"},
		}
		if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ConfigMap: %v", err)
		}

		if err := env.StopAPIServer(); err != nil {
			t.Fatalf("StopAPIServer: %v", err)
		}
		shortCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := admin.CoreV1().ConfigMaps(ns).Get(shortCtx, cm.Name, metav1.GetOptions{})
		cancel()
		if err == nil || apierrors.IsNotFound(err) {
			t.Fatalf("Get during the outage: err = %v, want a connection error", err)
		}

		if err := env.StartAPIServer(ctx); err != nil {
			t.Fatalf("StartAPIServer: %v", err)
		}
		got, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, cm.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Get after restart: %v", err)
		}
		if got.Data["key"] != "value" {
			t.Errorf("ConfigMap data after restart = %v, want key=value", got.Data)
		}
		// The token minted before the outage is still accepted.
		if _, err := sa.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("service account lists secrets in %s after restart: %v", ns, err)
		}
	})
}

// grantSecretReader lets the ServiceAccount list secrets in ns only.
func grantSecretReader(ctx context.Context, t *testing.T, admin kubernetes.Interface, ns, saName string) {
	t.Helper()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "secret-reader"},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""},
			Resources: []string{"secrets"},
			Verbs:     []string{"get", "list", "watch"},
		}},
	}
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Role: %v", err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "secret-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: saName}},
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create RoleBinding: %v", err)
	}
}

func clientFromKubeconfig(t *testing.T, path string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("load kubeconfig %s: %v", path, err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client for %s: %v", path, err)
	}
	return client
}

// TestStartReportsMissingBinaries checks that a missing binary is reported
// as ErrBinaryNotFound with the way to get it, which is what lets tests
// skip locally and fail in CI.
func TestStartReportsMissingBinaries(t *testing.T) {
	// A module root without .cache/bin, so the default lookup misses.
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module github.com/causeway/causeway\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "test", "e2e")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	fakeEtcd := filepath.Join(root, "etcd")
	if err := os.WriteFile(fakeEtcd, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name          string
		kubeAPIServer string
		etcd          string
		want          string
	}{
		{"default kube-apiserver not built", "", fakeEtcd, "make kube-apiserver"},
		{"KUBE_APISERVER points nowhere", filepath.Join(root, "nope"), fakeEtcd, "$KUBE_APISERVER"},
		{"ETCD points nowhere", "", filepath.Join(root, "nope"), "$ETCD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(sub)
			t.Setenv(testenv.EnvKubeAPIServer, tt.kubeAPIServer)
			t.Setenv(testenv.EnvEtcd, tt.etcd)
			env, err := testenv.Start(t.Context(), testenv.Options{})
			if err == nil {
				env.Stop()
				t.Fatal("Start succeeded, want an error")
			}
			if !errors.Is(err, testenv.ErrBinaryNotFound) {
				t.Errorf("error %q does not wrap ErrBinaryNotFound", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}
