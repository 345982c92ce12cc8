package netns

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/causeway/causeway/internal/tunnel/certs"
	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	"github.com/causeway/causeway/test/testenv"
)

// TestCSRBootstrapAcrossNamespaces runs the binaries with --csr: the
// server in the cloud namespace and the agent in the edge namespace each
// request their certificate from kube-apiserver (reached through a unix
// socket bridge, as their only way to it), as ServiceAccounts holding only
// the documented RBAC. The test approves and signs the requests with
// 16-second certificates, so both processes renew them while a tunneled
// HTTP keep-alive connection stays open and keeps working after the first
// certificates expired. Probes and metrics of both processes are checked,
// a restarted server relinks with the renewed certificates, and the
// server's Lease (--server-count-from-leases) is held and then released on
// SIGTERM.
func TestCSRBootstrapAcrossNamespaces(t *testing.T) {
	const lifetime = 16 * time.Second
	tp := newTopology(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.StartForTest(t, testenv.Options{})
	apiAddr := strings.TrimPrefix(env.APIServerURL(), "https://")
	bridge := filepath.Join(tp.dir, "api.sock")
	serveUnixToTCP(t, bridge, apiAddr)
	tp.start(t, tp.cloud, "api-bridge-cloud", "env", helperEnv+"=forward", self, apiAddr, bridge)
	tp.start(t, tp.edge, "api-bridge-edge", "env", helperEnv+"=forward", self, apiAddr, bridge)

	ctx := t.Context()
	admin, err := kubernetes.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	agentCA, _ := tunneltest.NewCA("kubelet-client-ca")
	servingCA, _ := tunneltest.NewCA("tunnel-serving-ca")
	signer := &tunneltest.Signer{Lifetime: lifetime, Logf: t.Logf, CAs: map[string]*tunneltest.CA{
		certs.AgentSignerName: agentCA, certs.ServingSignerName: servingCA}}
	if err := signer.Start(ctx, admin); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(signer.Stop)
	kubeconfig := map[string]string{}
	for _, sa := range []string{"tunnel-agent", "tunnel-server"} {
		if kubeconfig[sa], err = env.ServiceAccountKubeconfig(ctx, "causeway-system", sa); err != nil {
			t.Fatal(err)
		}
	}
	if err := tunneltest.GrantClusterRole(ctx, admin, "causeway-tunnel-csr", tunneltest.CSRRequesterRules,
		"causeway-system", "tunnel-agent", "tunnel-server"); err != nil {
		t.Fatal(err)
	}
	if err := tunneltest.GrantRole(ctx, admin, "causeway-tunnel-leases", tunneltest.LeaseRules,
		"causeway-system", "tunnel-server"); err != nil {
		t.Fatal(err)
	}
	agentCAFile, _ := agentCA.WriteFile(tp.dir, "agent-ca")
	servingCAFile, _ := servingCA.WriteFile(tp.dir, "serving-ca")

	backend := edgeIP + ":10250"
	tp.start(t, tp.edge, "backend", "env", helperEnv+"=serve", self, backend)
	uds := filepath.Join(tp.dir, "connect.sock")
	serverCerts, agentCerts := filepath.Join(tp.dir, "server-certs"), filepath.Join(tp.dir, "agent-certs")
	serverArgs := []string{binary, "tunnel", "server", "--server-id", "cloud-1",
		"--agent-bind-address", cloudIP + ":8132", "--connect-uds-path", uds, "--health-bind-address", cloudIP + ":8133",
		"--agent-ca-file", agentCAFile, "--csr", "--bootstrap-kubeconfig", kubeconfig["tunnel-server"],
		"--cert-dir", serverCerts, "--csr-ip-address", cloudIP, "--csr-dns-name", "causeway-tunnel",
		"--keepalive-interval", "500ms", "--keepalive-timeout", "1s",
		"--server-count-from-leases", "--kubeconfig", kubeconfig["tunnel-server"], "--lease-renew-interval", "1s",
		// The agent's CSR certificate carries no SANs and there is no
		// Node object: the administrator grants its address.
		"--route-allow", "edge-1=" + edgeIP}
	srv := tp.start(t, tp.cloud, "server", serverArgs...)
	tp.start(t, tp.edge, "agent", binary, "tunnel", "agent", "--server", cloudIP+":8132",
		"--node-name", "edge-1", "--node-ip", edgeIP, "--health-bind-address", "127.0.0.1:8134",
		"--ca-file", servingCAFile, "--csr", "--bootstrap-kubeconfig", kubeconfig["tunnel-agent"],
		"--cert-dir", agentCerts, "--keepalive-interval", "500ms", "--keepalive-timeout", "1s")
	get := func() error {
		body, err := viaConnect(uds, backend, "/containerLogs/ns/pod/c")
		if err == nil && body != "hello from edge /containerLogs/ns/pod/c" {
			err = fmt.Errorf("body %q", body)
		}
		return err
	}
	took := waitFor(t, 20*time.Second, "CONNECT through a tunnel with CSR-issued certificates", get)
	issued := time.Now()
	t.Logf("bootstrap (two CSRs approved and signed) and first request: %s", took)

	fetch := func(ns interface {
		MustRun(testing.TB, string, ...string) string
	}, url string) string {
		return ns.MustRun(t, "env", helperEnv+"=get", self, url)
	}
	for _, c := range []struct {
		side, url string
		ns        interface {
			MustRun(testing.TB, string, ...string) string
		}
	}{{"server", "http://" + cloudIP + ":8133", tp.cloud}, {"agent", "http://127.0.0.1:8134", tp.edge}} {
		for _, path := range []string{"/healthz", "/readyz"} {
			if body := fetch(c.ns, c.url+path); body != "ok\n" {
				t.Errorf("%s %s = %q, want ok", c.side, path, body)
			}
		}
		m := fetch(c.ns, c.url+"/metrics")
		if !strings.Contains(m, "causeway_tunnel_"+c.side+"_certificate_expiration_timestamp_seconds 1.") {
			t.Errorf("%s metrics lack the certificate expiry:\n%s", c.side, m)
		}
	}
	l, err := admin.CoordinationV1().Leases("causeway-system").Get(ctx, "causeway-tunnel-cloud-1", metav1.GetOptions{})
	if err != nil || *l.Spec.HolderIdentity != "cloud-1" || l.Labels["causeway.io/tunnel-server"] != "causeway-tunnel" {
		t.Errorf("server Lease: %+v, %v", l, err)
	}
	checkKeyFiles(t, agentCerts, "tunnel-agent")
	checkKeyFiles(t, serverCerts, "tunnel-server")

	// A keep-alive HTTP connection through the tunnel, opened with the
	// first certificates.
	conn, err := net.DialTimeout("unix", uds, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	tc, err := tunneltest.Connect(conn, backend, nil)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(tc)
	keepAlive := func(path string) {
		t.Helper()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(tc, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, backend)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("keep-alive GET %s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "hello from edge "+path {
			t.Fatalf("keep-alive GET %s: %q", path, b)
		}
	}
	keepAlive("/first")

	waitFor(t, lifetime+5*time.Second, "both processes renewed their certificates", func() error {
		for _, d := range []string{agentCerts, serverCerts} {
			if n := pairFiles(d); n < 2 {
				return fmt.Errorf("%s holds %d key pair(s)", d, n)
			}
		}
		return nil
	})
	t.Logf("both renewed %s after issuance", time.Since(issued).Round(100*time.Millisecond))
	time.Sleep(time.Until(issued.Add(lifetime + 500*time.Millisecond)))
	keepAlive("/after-the-first-certificates-expired")
	if m := fetch(tp.edge, "http://127.0.0.1:8134/metrics"); !strings.Contains(m, "causeway_tunnel_agent_certificate_rotation_age_seconds_count 1") {
		t.Errorf("agent metrics do not show the rotation:\n%s", m)
	}

	// The first certificates have expired: a new link can only be made
	// with the renewed ones, which the restarted server reads back from
	// its cert dir.
	srv.signal(syscall.SIGKILL)
	srv.waitExit(t, 2*time.Second)
	srv = tp.start(t, tp.cloud, "server", serverArgs...)
	took = waitFor(t, 5*time.Second, "tunnel back after a server restart, with renewed certificates", get)
	t.Logf("server restart → tunnel with renewed certificates: %s", took)

	// A graceful stop releases the replica's Lease.
	srv.signal(syscall.SIGTERM)
	srv.waitExit(t, 5*time.Second)
	if _, err := admin.CoordinationV1().Leases("causeway-system").Get(ctx, "causeway-tunnel-cloud-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("server Lease after SIGTERM: err = %v, want NotFound", err)
	}
}

// checkKeyFiles: the cert dir is 0700 and the current pair (key
// included) 0600.
func checkKeyFiles(t *testing.T, dir, name string) {
	t.Helper()
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("cert dir %s: %v, %v; want mode 0700", dir, fi.Mode().Perm(), err)
	}
	p, err := filepath.EvalSymlinks(filepath.Join(dir, name+"-current.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key pair %s: %v, %v; want mode 0600", p, fi.Mode().Perm(), err)
	}
}

// pairFiles counts the issued key pairs in a cert dir (the "current" link
// aside).
func pairFiles(dir string) int {
	m, _ := filepath.Glob(filepath.Join(dir, "*.pem"))
	n := 0
	for _, f := range m {
		if !strings.HasSuffix(f, "-current.pem") {
			n++
		}
	}
	return n
}
