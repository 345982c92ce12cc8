package loopback

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/tunnel/certs"
)

// TestCSRBootstrap: the server and the agent get their certificates
// through CertificateSigningRequests made with only the documented RBAC,
// which the harness approves and signs; the tunnel then works with them.
// It also checks the requests themselves, the key files, reuse of a stored
// certificate across restarts, and that a stored certificate of another
// node is never presented.
func TestCSRBootstrap(t *testing.T) {
	k := startKube(t, time.Hour)
	dir := t.TempDir()
	srvSrc := k.servingSource(t, "s1", filepath.Join(dir, "server"))
	agentDir := filepath.Join(dir, "agent")
	agentSrc := k.agentSource(t, "edge", agentDir)

	var agentCerts, serverCerts peers
	s := startServer(t, nil, serverOpts{tls: k.serverTLS(srvSrc, &agentCerts)})
	a := startAgent(t, nil, agentOpts{node: "edge", server: s.agentAddr, nodeIPs: []string{"127.0.0.1"},
		tls: k.agentTLS(agentSrc, &serverCerts)})
	eventually(t, 5*time.Second, "agent linked with CSR-issued certificates", a.Ready)
	c, err := connectUDS(t, s, echoBackend(t, "127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	echo(t, c, "through a tunnel made of CSR-issued certificates")
	if got, want := agentCerts.list(), serialOf(agentSrc.Leaf()); !slices.Contains(got, want) {
		t.Errorf("server saw agent certificates %v, want the issued %s", got, want)
	}
	if got, want := serverCerts.list(), serialOf(srvSrc.Leaf()); !slices.Contains(got, want) {
		t.Errorf("agent saw server certificates %v, want the issued %s", got, want)
	}

	t.Run("requests", func(t *testing.T) {
		list, err := k.admin.CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]struct {
			user   string
			usages []certificatesv1.KeyUsage
		}{
			certs.AgentSignerName:   {"system:serviceaccount:" + tunnelNS + ":" + agentSA, certs.ClientUsages},
			certs.ServingSignerName: {"system:serviceaccount:" + tunnelNS + ":" + serverSA, certs.ServingUsages},
		}
		for _, csr := range list.Items {
			w, ok := want[csr.Spec.SignerName]
			if !ok {
				t.Errorf("CSR %s: unexpected signer %s", csr.Name, csr.Spec.SignerName)
				continue
			}
			delete(want, csr.Spec.SignerName)
			if csr.Spec.Username != w.user || !slices.Equal(csr.Spec.Usages, w.usages) {
				t.Errorf("CSR %s: requested by %s with %v, want %s with %v", csr.Name, csr.Spec.Username, csr.Spec.Usages, w.user, w.usages)
			}
		}
		if len(want) > 0 {
			t.Errorf("no CSR for %v", want)
		}
		leaf := agentSrc.Leaf()
		if leaf.Subject.CommonName != "system:node:edge" || !slices.Equal(leaf.Subject.Organization, []string{"system:nodes"}) {
			t.Errorf("agent certificate subject %s, want CN=system:node:edge,O=system:nodes", leaf.Subject)
		}
	})

	t.Run("private key stays private", func(t *testing.T) {
		fi, err := os.Stat(agentDir)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("cert dir mode %v, want 0700", fi.Mode().Perm())
		}
		pem, err := filepath.EvalSymlinks(filepath.Join(agentDir, "tunnel-agent-current.pem"))
		if err != nil {
			t.Fatal(err)
		}
		if fi, err = os.Stat(pem); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("key pair file %s: mode %v, err %v; want 0600", pem, fi.Mode().Perm(), err)
		}
	})

	t.Run("restart reuses the stored certificate", func(t *testing.T) {
		issued := k.signer.Issued()
		again := k.agentSource(t, "edge", agentDir)
		if got, want := serialOf(again.Leaf()), serialOf(agentSrc.Leaf()); got != want {
			t.Errorf("restarted source holds %s, want the stored %s", got, want)
		}
		if k.signer.Issued() != issued {
			t.Error("restarted source requested a new certificate although the stored one is valid")
		}
	})

	t.Run("stored certificate of another node is not presented", func(t *testing.T) {
		renamed := k.agentSource(t, "edge-renamed", agentDir)
		if cn := renamed.Leaf().Subject.CommonName; cn != "system:node:edge-renamed" {
			t.Errorf("source for edge-renamed holds %s", cn)
		}
	})

	t.Run("certificate for another node is refused", func(t *testing.T) {
		var logs logBuffer
		s2 := startServer(t, nil, serverOpts{id: "s2", tls: k.serverTLS(srvSrc, &peers{}), log: logs.logger()})
		other := k.agentSource(t, "other", filepath.Join(dir, "other"))
		// A validly issued certificate, but for node "other".
		a2 := startAgent(t, nil, agentOpts{node: "edge", server: s2.agentAddr, nodeIPs: []string{"127.0.0.1"},
			tls: k.agentTLS(other, &peers{}), log: logs.logger()})
		const why = `certificate is for node \"other\" but the agent claims node \"edge\"`
		eventually(t, 5*time.Second, "the refusal in the server log", func() bool {
			return logs.contains("agent registration refused") && logs.contains(why)
		})
		time.Sleep(300 * time.Millisecond) // a few more attempts
		if s2.AgentCount() != 0 || a2.Ready() {
			t.Fatalf("agent with another node's certificate registered (server links %d)", s2.AgentCount())
		}
	})
}
