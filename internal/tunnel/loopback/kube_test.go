package loopback

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/causeway/causeway/internal/tunnel/certs"
	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	"github.com/causeway/causeway/test/testenv"
)

// Namespace and ServiceAccounts the tunnel runs as in the kube tests.
const (
	tunnelNS  = "causeway-system"
	agentSA   = "tunnel-agent"
	serverSA  = "tunnel-server"
	servingCN = "causeway-tunnel"
)

// kube is a real kube-apiserver with the test acting as the CSR approver
// and signer (there is no kube-controller-manager), and clients for the
// agent's and the server's ServiceAccounts, which hold exactly the RBAC
// docs/tunnel.md lists.
type kube struct {
	env                 *testenv.Env
	admin               kubernetes.Interface
	signer              *tunneltest.Signer
	agentCA, servingCA  *tunneltest.CA
	agentAPI, serverAPI kubernetes.Interface
}

// startKube starts the API server and the harness signer, whose
// certificates live for lifetime.
func startKube(t *testing.T, lifetime time.Duration) *kube {
	t.Helper()
	env := testenv.StartForTest(t, testenv.Options{})
	ctx := t.Context()
	k := &kube{env: env}
	var err error
	if k.admin, err = kubernetes.NewForConfig(env.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	if k.agentCA, err = tunneltest.NewCA("kubelet-client-ca"); err != nil {
		t.Fatal(err)
	}
	if k.servingCA, err = tunneltest.NewCA("tunnel-serving-ca"); err != nil {
		t.Fatal(err)
	}
	k.signer = &tunneltest.Signer{Lifetime: lifetime, Logf: t.Logf, CAs: map[string]*tunneltest.CA{
		certs.AgentSignerName: k.agentCA, certs.ServingSignerName: k.servingCA}}
	if err := k.signer.Start(ctx, k.admin); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.signer.Stop)
	k.agentAPI = k.serviceAccountClient(t, agentSA)
	k.serverAPI = k.serviceAccountClient(t, serverSA)
	if err := tunneltest.GrantClusterRole(ctx, k.admin, "causeway-tunnel-csr", tunneltest.CSRRequesterRules, tunnelNS, agentSA, serverSA); err != nil {
		t.Fatal(err)
	}
	return k
}

func (k *kube) serviceAccountClient(t *testing.T, sa string) kubernetes.Interface {
	t.Helper()
	path, err := k.env.ServiceAccountKubeconfig(t.Context(), tunnelNS, sa)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// agentSource bootstraps node's client certificate in dir through a CSR,
// as the agent's service account, and waits until it is issued.
func (k *kube) agentSource(t *testing.T, node, dir string) *certs.CSRSource {
	t.Helper()
	return k.source(t, certs.CSRConfig{Client: k.agentAPI, Dir: dir, Name: "tunnel-agent",
		SignerName: certs.AgentSignerName, Template: certs.AgentTemplate(node), Usages: certs.ClientUsages})
}

// servingSource bootstraps a server replica's serving certificate for
// servingCN and 127.0.0.1.
func (k *kube) servingSource(t *testing.T, id, dir string) *certs.CSRSource {
	t.Helper()
	tmpl := certs.ServingTemplate("causeway-tunnel-server:"+id, []string{servingCN}, []net.IP{net.IPv4(127, 0, 0, 1)})
	return k.source(t, certs.CSRConfig{Client: k.serverAPI, Dir: dir, Name: "tunnel-server",
		SignerName: certs.ServingSignerName, Template: tmpl, Usages: certs.ServingUsages})
}

func (k *kube) source(t *testing.T, cfg certs.CSRConfig) *certs.CSRSource {
	t.Helper()
	cfg.Logger = logger(t).With("csr", cfg.Template.Subject.CommonName)
	s, err := certs.StartCSRSource(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	if err := s.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

// peers records the leaf certificate the other side presented in each
// handshake, through tls.Config.VerifyConnection.
type peers struct {
	mu      sync.Mutex
	serials []string
}

func (p *peers) record(cs tls.ConnectionState) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.serials = append(p.serials, cs.PeerCertificates[0].SerialNumber.String())
	return nil
}

func (p *peers) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.serials...)
}

// serverTLS serves src's certificate to agents verified by the harness's
// kubelet client CA, recording their certificates in seen.
func (k *kube) serverTLS(src certs.Source, seen *peers) *tls.Config {
	c := certs.ServerConfig(src, k.agentCA.Pool())
	c.VerifyConnection = seen.record
	return c
}

// agentTLS presents src's certificate and trusts only the tunnel serving
// CA, recording the server certificates in seen.
func (k *kube) agentTLS(src certs.Source, seen *peers) *tls.Config {
	c := certs.ClientConfig(src, k.servingCA.Pool(), servingCN)
	c.VerifyConnection = seen.record
	return c
}

func serialOf(c *x509.Certificate) string { return c.SerialNumber.String() }

// logBuffer is a slog destination tests can search.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Contains(l.b.String(), s)
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
