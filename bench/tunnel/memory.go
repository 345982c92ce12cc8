package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
)

// memory runs the causeway binary as a server and an agent on loopback,
// opens conns tunneled connections that each carry one echo round trip
// and stay open, and reports both processes' resident memory.
func memory(bin string, conns int) error {
	dir, err := os.MkdirTemp("", "cwmem")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		bin = filepath.Join(dir, "causeway")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/causeway/causeway/cmd/causeway").CombinedOutput(); err != nil {
			return fmt.Errorf("build causeway: %v: %s", err, out)
		}
	}
	p, err := tunneltest.NewPKI()
	if err != nil {
		return err
	}
	sc, sk, _ := p.Server.WriteFiles(dir, "server")
	agentCA, _ := p.AgentCA.WriteFile(dir, "agent-ca")
	serverCA, _ := p.ServerCA.WriteFile(dir, "server-ca")
	leaf, _ := p.AgentCert("mem-edge")
	ac, ak, _ := leaf.WriteFiles(dir, "agent")
	agentAddr, err := freePort()
	if err != nil {
		return err
	}
	uds := filepath.Join(dir, "c.sock")
	srv := exec.Command(bin, "tunnel", "server", "--server-id", "mem", "--agent-bind-address", agentAddr,
		"--connect-uds-path", uds, "--health-bind-address", "", "--log-level", "warn",
		"--tls-cert-file", sc, "--tls-private-key-file", sk, "--agent-ca-file", agentCA,
		// The agent's certificate names no address: grant its loopback one.
		"--route-allow", "mem-edge=127.0.0.1")
	agt := exec.Command(bin, "tunnel", "agent", "--server", agentAddr, "--server-name", "causeway-tunnel",
		"--node-name", "mem-edge", "--node-ip", "127.0.0.1", "--health-bind-address", "", "--log-level", "warn",
		"--drain-timeout", "1s", "--tls-cert-file", ac, "--tls-private-key-file", ak, "--ca-file", serverCA)
	for _, c := range []*exec.Cmd{srv, agt} {
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			return err
		}
		defer func(c *exec.Cmd) { c.Process.Signal(syscall.SIGTERM); c.Wait() }(c)
	}
	echoLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer tunneltest.EchoServer(echoLn)()
	open := func() (net.Conn, error) {
		c, err := net.Dial("unix", uds)
		if err != nil {
			return nil, err
		}
		tc, err := tunneltest.Connect(c, echoLn.Addr().String(), nil)
		if err != nil {
			c.Close()
			return nil, err
		}
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := tc.Write([]byte("ping")); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(tc, make([]byte, 4)); err != nil {
			return nil, err
		}
		return tc, nil
	}
	var first net.Conn
	for i := 0; i < 300; i++ {
		if first, err = open(); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("tunnel not up: %w", err)
	}
	first.Close()
	time.Sleep(200 * time.Millisecond)
	s0, a0 := rss(srv.Process.Pid), rss(agt.Process.Pid)
	held := make([]net.Conn, 0, conns)
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := 0; i < conns; i++ {
		c, err := open()
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		held = append(held, c)
	}
	time.Sleep(500 * time.Millisecond)
	s1, a1 := rss(srv.Process.Pid), rss(agt.Process.Pid)
	fmt.Printf("| Memory (RSS), %d open tunneled connections, zstd | idle | with connections | per connection |\n", conns)
	fmt.Println("|---|---:|---:|---:|")
	for _, r := range []struct {
		name   string
		before int64
		after  int64
	}{{"server", s0, s1}, {"agent", a0, a1}} {
		fmt.Printf("| %s | %.1f MiB | %.1f MiB | %.1f KiB |\n", r.name, float64(r.before)/1024, float64(r.after)/1024,
			float64(r.after-r.before)/float64(conns))
	}
	return nil
}

// rss returns VmRSS of pid in KiB.
func rss(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
