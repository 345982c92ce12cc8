package netns

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTunnelAcrossNamespaces runs server and agent binaries in separate
// namespaces and checks, in order: the edge backend is unreachable from the
// cloud directly; (a) HTTP through CONNECT; (b) HTTP through the
// transparent listener with the iptables rules the server installed; the
// agent and then the server killed with SIGKILL and restarted, with the
// tunnel back within 2 s; and the rules removed when the server stops.
func TestTunnelAcrossNamespaces(t *testing.T) {
	tp := newTopology(t)
	// The agent's certificate vouches for its node IP; the server has no
	// API to ask.
	serverTLS, agentTLS := tp.writePKI(t, net.ParseIP(edgeIP))
	backend := edgeIP + ":10250"
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tp.start(t, tp.edge, "backend", "env", helperEnv+"=serve", self, backend)
	waitFor(t, 5*time.Second, "edge backend", func() error {
		out, err := tp.edge.Cmd("env", helperEnv+"=get", self, "http://"+backend+"/").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})

	if out, err := tp.cloud.Cmd("env", helperEnv+"=get", self, "http://"+backend+"/").CombinedOutput(); err == nil {
		t.Fatalf("the cloud reached the edge backend directly: %s", out)
	}

	uds := filepath.Join(tp.dir, "connect.sock")
	serverArgs := append([]string{binary, "tunnel", "server", "--server-id", "cloud-1",
		"--agent-bind-address", cloudIP + ":8132", "--connect-uds-path", uds,
		"--transparent-bind-address", cloudIP + ":10263", "--iptables", "--iptables-ports", "10250",
		"--iptables-resync-period", "1s", "--health-bind-address", cloudIP + ":8133",
		"--keepalive-interval", "500ms", "--keepalive-timeout", "1s", "--log-level", "debug"}, serverTLS...)
	agentArgs := append([]string{binary, "tunnel", "agent", "--server", cloudIP + ":8132",
		"--node-name", "edge-1", "--node-ip", edgeIP, "--health-bind-address", "127.0.0.1:8134",
		"--keepalive-interval", "500ms", "--keepalive-timeout", "1s", "--drain-timeout", "2s"}, agentTLS...)
	srv := tp.start(t, tp.cloud, "server", serverArgs...)
	agent := tp.start(t, tp.edge, "agent", agentArgs...)

	get := func() error {
		body, err := viaConnect(uds, backend, "/containerLogs/ns/pod/c")
		if err != nil {
			return err
		}
		if body != "hello from edge /containerLogs/ns/pod/c" {
			return fmt.Errorf("body %q", body)
		}
		return nil
	}
	took := waitFor(t, 10*time.Second, "(a) CONNECT through the tunnel", get)
	t.Logf("(a) CONNECT: first request through the tunnel after %s", took)

	transparent := func() error {
		out, err := tp.cloud.Cmd("env", helperEnv+"=get", self, "http://"+backend+"/stats/summary").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		if string(out) != "hello from edge /stats/summary" {
			return fmt.Errorf("body %q", out)
		}
		return nil
	}
	waitFor(t, 5*time.Second, "(b) transparent listener via iptables DNAT", transparent)
	rules := tp.cloud.MustRun(t, "iptables", "-t", "nat", "-S", "CAUSEWAY-TUNNEL")
	t.Logf("(b) transparent: ok; rules:\n%s", strings.TrimSpace(rules))

	// Agent killed without warning, then started again.
	agent.signal(syscall.SIGKILL)
	agent.waitExit(t, 2*time.Second)
	restarted := time.Now()
	agent = tp.start(t, tp.edge, "agent", agentArgs...)
	waitFor(t, 2*time.Second, "tunnel back after agent restart", get)
	t.Logf("agent SIGKILL+restart: tunnel back after %s", time.Since(restarted))

	// Server killed without warning: its rules stay behind, and the new
	// server must adopt them idempotently.
	srv.signal(syscall.SIGKILL)
	srv.waitExit(t, 2*time.Second)
	restarted = time.Now()
	srv = tp.start(t, tp.cloud, "server", serverArgs...)
	waitFor(t, 2*time.Second, "tunnel back after server restart", get)
	t.Logf("server SIGKILL+restart: tunnel back after %s", time.Since(restarted))
	waitFor(t, 3*time.Second, "transparent path after server restart", transparent)
	if got := strings.Count(tp.cloud.MustRun(t, "iptables-save", "-t", "nat"), "-j CAUSEWAY-TUNNEL"); got != 1 {
		t.Fatalf("%d jump rules after restart, want 1", got)
	}

	// Graceful stop removes every rule the server made.
	srv.signal(syscall.SIGTERM)
	srv.waitExit(t, 5*time.Second)
	if save := tp.cloud.MustRun(t, "iptables-save", "-t", "nat"); strings.Contains(save, "CAUSEWAY") {
		t.Fatalf("rules left after SIGTERM:\n%s", save)
	}
	if err := transparent(); err == nil {
		t.Fatal("transparent path still works after the server stopped")
	}
	agent.signal(syscall.SIGTERM)
	agent.waitExit(t, 5*time.Second)
}
