package testenv

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// clusterName names the cluster and context in every kubeconfig written.
const clusterName = "causeway-testenv"

// serviceAccountTokenTTL is the lifetime requested for minted tokens: far
// longer than any test, short enough not to matter if a file leaks.
const serviceAccountTokenTTL = 24 * time.Hour

// writeKubeconfig writes a self-contained kubeconfig (CA embedded) that
// authenticates with a bearer token. namespace, if set, becomes the
// context's default namespace.
func writeKubeconfig(path, server string, caData []byte, user, token, namespace string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: caData,
	}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[clusterName] = &clientcmdapi.Context{
		Cluster:   clusterName,
		AuthInfo:  user,
		Namespace: namespace,
	}
	cfg.CurrentContext = clusterName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

// ServiceAccountKubeconfig returns the path of a kubeconfig that
// authenticates as the ServiceAccount namespace/name, creating the
// namespace and the ServiceAccount if they are missing. Its token comes from
// the TokenRequest API, exactly as a pod's projected token would, so a
// process using it has only the permissions RBAC grants that account.
// The token survives StopAPIServer/StartAPIServer.
func (e *Env) ServiceAccountKubeconfig(ctx context.Context, namespace, name string) (string, error) {
	client, err := kubernetes.NewForConfig(e.RESTConfig())
	if err != nil {
		return "", fmt.Errorf("admin client: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if _, err := client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create service account %s/%s: %w", namespace, name, err)
	}
	ttl := int64(serviceAccountTokenTTL / time.Second)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &ttl}}
	tr, err = client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, tr, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("request token for service account %s/%s: %w", namespace, name, err)
	}
	path := filepath.Join(e.Dir, fmt.Sprintf("sa-%s-%s.kubeconfig", namespace, name))
	user := fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name)
	if err := writeKubeconfig(path, e.apiServerURL, e.caData, user, tr.Status.Token, namespace); err != nil {
		return "", err
	}
	return path, nil
}

// UserKubeconfig writes a kubeconfig for one of Options.Users to path and
// returns path.
func (e *Env) UserKubeconfig(path, user string) (string, error) {
	token, ok := e.creds.userTokens[user]
	if !ok {
		return "", fmt.Errorf("user %q is not in Options.Users", user)
	}
	return path, writeKubeconfig(path, e.apiServerURL, e.caData, user, token, "")
}

// CAData is the PEM bundle that verifies kube-apiserver's serving
// certificate.
func (e *Env) CAData() []byte { return append([]byte(nil), e.caData...) }
