package loopback

import (
	"net"
	"os"
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
