package testenv

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
)

// Identity and addressing of the test cluster.
const (
	// ServiceClusterIPRange is the range Services get their ClusterIPs from.
	ServiceClusterIPRange = "10.0.0.0/24"
	// ServiceAccountIssuer is the iss claim of service account tokens and,
	// through --api-audiences defaulting, their audience.
	ServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"
	// AdminUser is the user the admin token authenticates as; it is in the
	// system:masters group, which RBAC lets do everything.
	AdminUser = "causeway-testenv-admin"
)

// apiServerCredentials are the files kube-apiserver needs beyond etcd: the
// service account signing key pair and a static token file with the
// admin. They are generated once per Env and reused across restarts, so
// tokens minted before StopAPIServer stay valid after StartAPIServer.
type apiServerCredentials struct {
	adminToken     string
	tokenFile      string
	saPrivateKey   string
	saPublicKey    string
	certDir        string
	servingCertPEM string // written by kube-apiserver into certDir
	userTokens     map[string]string
}

func writeAPIServerCredentials(dir string, users []User) (apiServerCredentials, error) {
	c := apiServerCredentials{
		tokenFile:    filepath.Join(dir, "tokens.csv"),
		saPrivateKey: filepath.Join(dir, "service-account.key"),
		saPublicKey:  filepath.Join(dir, "service-account.pub"),
		certDir:      filepath.Join(dir, "apiserver-certs"),
	}
	// --cert-dir with no --tls-cert-file makes kube-apiserver generate a
	// self-signed serving certificate named after this pair; the file holds
	// the leaf followed by the CA that signed it.
	c.servingCertPEM = filepath.Join(c.certDir, "apiserver.crt")

	token := func() string {
		tok := make([]byte, 32)
		rand.Read(tok) // never fails (crypto/rand)
		return hex.EncodeToString(tok)
	}
	c.adminToken = token()
	// Format: token,user,uid,"group1,group2".
	lines := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", c.adminToken, AdminUser, AdminUser)
	c.userTokens = map[string]string{}
	for _, u := range users {
		if u.Name == "" || strings.ContainsAny(u.Name+strings.Join(u.Groups, ""), ",\"\n") {
			return c, fmt.Errorf("user %q: a name and groups without commas or quotes are needed", u.Name)
		}
		c.userTokens[u.Name] = token()
		lines += fmt.Sprintf("%s,%s,%s,\"%s\"\n", c.userTokens[u.Name], u.Name, u.Name, strings.Join(u.Groups, ","))
	}
	if err := os.WriteFile(c.tokenFile, []byte(lines), 0o600); err != nil {
		return c, fmt.Errorf("write token file: %w", err)
	}

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return c, fmt.Errorf("generate service account key: %w", err)
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return c, fmt.Errorf("encode service account private key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return c, fmt.Errorf("encode service account public key: %w", err)
	}
	if err := os.WriteFile(c.saPrivateKey, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}), 0o600); err != nil {
		return c, fmt.Errorf("write service account private key: %w", err)
	}
	if err := os.WriteFile(c.saPublicKey, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		return c, fmt.Errorf("write service account public key: %w", err)
	}
	if err := os.MkdirAll(c.certDir, 0o700); err != nil {
		return c, fmt.Errorf("create cert dir: %w", err)
	}
	return c, nil
}

// apiServerArgs are the flags for a minimal but real control plane:
// authentication by token and service account, RBAC enforced, and every
// default admission plugin. Extra arguments come last, so for single-valued
// flags they override these defaults.
func apiServerArgs(etcdURL, address string, port int, c apiServerCredentials, extra []string) []string {
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=" + address,
		"--advertise-address=" + address,
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + c.certDir,
		"--token-auth-file=" + c.tokenFile,
		"--service-account-issuer=" + ServiceAccountIssuer,
		"--service-account-key-file=" + c.saPublicKey,
		"--service-account-signing-key-file=" + c.saPrivateKey,
		"--authorization-mode=Node,RBAC",
		"--service-cluster-ip-range=" + ServiceClusterIPRange,
		"--profiling=false",
	}
	if ip := net.ParseIP(address); ip == nil || ip.IsLoopback() {
		// The "kubernetes" Service would otherwise get an Endpoints object
		// pointing at 127.0.0.1, which validation rejects as loopback, and
		// the reconciler would log that failure every few seconds.
		args = append(args, "--endpoint-reconciler-type=none")
	}
	return append(args, extra...)
}

// startAPIServerLocked starts kube-apiserver and waits until /readyz passes and
// the default namespace exists. It must be called with e.mu held.
func (e *Env) startAPIServerLocked(ctx context.Context) error {
	if e.apiServer != nil && !e.apiServer.Exited() {
		return fmt.Errorf("kube-apiserver is already running")
	}
	proc, err := StartProcess("kube-apiserver", e.bins.kubeAPIServer, e.apiServerArgs, nil, filepath.Join(e.Dir, "kube-apiserver.log"))
	if err != nil {
		return err
	}
	e.apiServer = proc
	if err := e.waitAPIServerReady(ctx, proc); err != nil {
		proc.Stop(apiServerStopGrace)
		return fmt.Errorf("wait for kube-apiserver: %w", err)
	}
	return nil
}

// apiServerStopGrace is how long kube-apiserver gets to shut down after
// SIGTERM before it is killed; it normally needs well under a second.
const apiServerStopGrace = 15 * time.Second

// waitAPIServerReady waits for the serving certificate (needed to trust the
// server at all), then for /readyz, then for the default namespace, which
// a controller creates shortly after the server becomes ready.
func (e *Env) waitAPIServerReady(ctx context.Context, proc *Process) error {
	if e.caData == nil {
		err := poll(ctx, proc, 20*time.Millisecond, func() bool {
			data, err := os.ReadFile(e.creds.servingCertPEM)
			if err != nil {
				return false
			}
			// Leaf plus CA; fewer means the file is still being written.
			if certs, err := certutil.ParseCertsPEM(data); err != nil || len(certs) < 2 {
				return false
			}
			e.caData = data
			return true
		})
		if err != nil {
			return fmt.Errorf("wait for serving certificate: %w", err)
		}
	}
	client, err := kubernetes.NewForConfig(e.RESTConfig())
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	var lastErr error
	ready := func() bool {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if _, lastErr = client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(rctx); lastErr != nil {
			return false
		}
		_, lastErr = client.CoreV1().Namespaces().Get(rctx, metav1.NamespaceDefault, metav1.GetOptions{})
		return lastErr == nil
	}
	if err := poll(ctx, proc, 100*time.Millisecond, ready); err != nil {
		return fmt.Errorf("%w (last check: %v)", err, lastErr)
	}
	return nil
}

// RESTConfig returns a new admin client configuration (system:masters).
// Client-side rate limits are raised because the server is local and
// dedicated to the test; the defaults would only slow tests down.
func (e *Env) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            e.apiServerURL,
		BearerToken:     e.creds.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: append([]byte(nil), e.caData...)},
		QPS:             200,
		Burst:           400,
	}
}

// APIServerURL is the https URL of kube-apiserver; it stays the same across
// StopAPIServer and StartAPIServer.
func (e *Env) APIServerURL() string { return e.apiServerURL }

// EtcdURL is the client URL of the etcd behind the API server.
func (e *Env) EtcdURL() string { return e.etcd.clientURL }

// StopAPIServer stops kube-apiserver and leaves etcd running, to simulate an
// API outage. Clients then see connection errors until StartAPIServer.
func (e *Env) StopAPIServer() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.apiServer == nil || e.apiServer.Exited() {
		return fmt.Errorf("kube-apiserver is not running")
	}
	e.apiServer.Stop(apiServerStopGrace)
	return nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the same
// port, with the same etcd, serving certificate and keys, so existing
// kubeconfigs and tokens keep working. It returns once the server is ready.
func (e *Env) StartAPIServer(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return fmt.Errorf("start kube-apiserver: environment is stopped")
	}
	return e.startAPIServerLocked(ctx)
}
