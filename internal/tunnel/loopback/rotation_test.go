package loopback

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/tunnel/certs"
)

// TestCertificateRotation: the agent's certificate is about to expire and
// its files are replaced. The open tunneled connection keeps working past
// the old certificate's expiry, and when the server restarts the agent
// links again with the new certificate (the old one would be rejected).
func TestCertificateRotation(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p, serverOpts{})
	addr := s.agentAddr
	dir := t.TempDir()
	short, err := p.AgentCA.Issue("system:node:edge", false, nil, nil, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, _ := short.WriteFiles(dir, "agent")
	kp, err := certs.NewKeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg := certs.ClientConfig(kp, p.ServerCA.Pool(), "causeway-tunnel")
	issued := time.Now()
	a := startAgent(t, p, agentOpts{node: "edge", server: addr, nodeIPs: []string{"127.0.0.1"}, tls: tlsCfg})
	eventually(t, 5*time.Second, "link", a.Ready)
	c, err := connectUDS(t, s, echoBackend(t, "127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	long, _ := p.AgentCert("edge")
	long.WriteFiles(dir, "agent")
	future := time.Now().Add(time.Minute)
	os.Chtimes(certFile, future, future)
	os.Chtimes(keyFile, future, future)
	time.Sleep(time.Until(issued.Add(2500 * time.Millisecond)))
	echo(t, c, "after the old certificate expired")

	s.stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s2 := startServer(t, p, serverOpts{agentLn: ln})
	eventually(t, 3*time.Second, "relink with the rotated certificate", func() bool { return s2.AgentCount() == 1 })
}

// TestCSRRotation: certificates issued through CSRs live 20 s, so both
// sides renew them during the test (at 70–90% of their lifetime). A
// tunneled connection opened with the first certificates keeps working
// after they expired, on the same link, and a new link, made after the
// rotation, presents the new certificates in both directions.
//
// The two replicas share one serving identity here, so that a single new
// link shows both sides' rotation.
func TestCSRRotation(t *testing.T) {
	const lifetime = 20 * time.Second
	k := startKube(t, lifetime)
	dir := t.TempDir()
	srvSrc := k.servingSource(t, "s1", filepath.Join(dir, "server"))
	agentSrc := k.agentSource(t, "edge", filepath.Join(dir, "agent"))
	oldServer, oldAgent := srvSrc.Leaf(), agentSrc.Leaf()

	var atS1, atS2, atAgent peers
	s1 := startServer(t, nil, serverOpts{id: "s1", count: 1, tls: k.serverTLS(srvSrc, &atS1)})
	s2 := startServer(t, nil, serverOpts{id: "s2", count: 2, tls: k.serverTLS(srvSrc, &atS2)})
	// The first dial through the balancer reaches s1, which reports one
	// replica: the agent holds just that link until told otherwise.
	lb := startRoundRobin(t, s1.agentAddr, s2.agentAddr)
	a := startAgent(t, nil, agentOpts{node: "edge", server: lb.ln.Addr().String(), nodeIPs: []string{"127.0.0.1"},
		tls: k.agentTLS(agentSrc, &atAgent)})
	eventually(t, 5*time.Second, "link to s1", a.Ready)
	c, err := connectUDS(t, s1, echoBackend(t, "127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	// connectUDS bounds the whole connection to 10 s; this one must outlive
	// the certificates, so each exchange gets its own deadline instead.
	say := func(msg string) {
		t.Helper()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		echo(t, c, msg)
	}
	say("before rotation")

	took := eventually(t, lifetime+5*time.Second, "both certificates renewed", func() bool {
		return serialOf(srvSrc.Leaf()) != serialOf(oldServer) && serialOf(agentSrc.Leaf()) != serialOf(oldAgent)
	})
	t.Logf("both sides renewed %s after issuance of 20 s certificates", took)
	time.Sleep(time.Until(later(oldServer.NotAfter, oldAgent.NotAfter).Add(200 * time.Millisecond)))
	say("after the first certificates expired")

	s1.SetServerCount(2)
	eventually(t, 5*time.Second, "new link to s2", func() bool { return len(a.ServerIDs()) == 2 })
	say("after the new link")

	newServer, newAgent := serialOf(srvSrc.Leaf()), serialOf(agentSrc.Leaf())
	if got := atS1.list(); !slices.Equal(got, []string{serialOf(oldAgent)}) {
		t.Errorf("s1 saw agent certificates %v, want only the first, %s: its link was remade", got, serialOf(oldAgent))
	}
	if got := atS2.list(); len(got) == 0 || got[len(got)-1] != newAgent {
		t.Errorf("the new link presented agent certificate %v, want the renewed %s", got, newAgent)
	}
	if got := atAgent.list(); len(got) < 2 || got[0] != serialOf(oldServer) || got[len(got)-1] != newServer {
		t.Errorf("agent saw server certificates %v, want the first %s and, on the new link, the renewed %s",
			got, serialOf(oldServer), newServer)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
