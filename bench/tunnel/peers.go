package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/causeway/causeway/bench/internal/proc"
	"github.com/causeway/causeway/internal/tunnel/tunneltest"
)

// peer is a tunnel run as two processes on loopback, a server and an
// agent with mutual TLS between them, whose server takes HTTP CONNECT on a
// unix socket: Causeway's binary, or apiserver-network-proxy's (ANP) in
// its http-connect mode. Both are measured the same way.
type peer struct {
	name          string
	uds           string
	server, agent *exec.Cmd
}

// processPKI are the files of a PKI for two processes. The server's
// certificate names 127.0.0.1, which ANP's agent checks.
type processPKI struct {
	serverCert, serverKey, serverCA, agentCA, agentCert, agentKey string
}

// writePKI writes a PKI with an agent certificate for node into dir. The
// server's certificate names serverIPs too, and the agent's names agentIPs
// (the node IPs the server then accepts from it).
func writePKI(dir, node string, serverIPs, agentIPs []net.IP) (*processPKI, error) {
	p, err := tunneltest.NewPKI(serverIPs...)
	if err != nil {
		return nil, err
	}
	out := &processPKI{}
	if out.serverCert, out.serverKey, err = p.Server.WriteFiles(dir, "server"); err != nil {
		return nil, err
	}
	if out.agentCA, err = p.AgentCA.WriteFile(dir, "agent-ca"); err != nil {
		return nil, err
	}
	if out.serverCA, err = p.ServerCA.WriteFile(dir, "server-ca"); err != nil {
		return nil, err
	}
	leaf, err := p.AgentCA.Issue("system:node:"+node, false, agentIPs, nil, 24*time.Hour)
	if err != nil {
		return nil, err
	}
	out.agentCert, out.agentKey, err = leaf.WriteFiles(dir, "agent")
	return out, err
}

// startCauseway runs `causeway tunnel server` and `causeway tunnel agent`.
// compression is the CONNECT socket's default ("" for the binary's own).
func startCauseway(bin, dir, compression string) (*peer, error) {
	pki, err := writePKI(dir, "bench-edge", nil, nil)
	if err != nil {
		return nil, err
	}
	agentAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	uds := filepath.Join(dir, "causeway.sock")
	args := []string{"tunnel", "server", "--server-id", "bench", "--agent-bind-address", agentAddr,
		"--connect-uds-path", uds, "--health-bind-address", "", "--log-level", "warn",
		"--tls-cert-file", pki.serverCert, "--tls-private-key-file", pki.serverKey, "--agent-ca-file", pki.agentCA,
		// The agent's certificate names no address: grant its loopback one.
		"--route-allow", "bench-edge=127.0.0.1"}
	if compression != "" {
		args = append(args, "--compression", compression)
	}
	p := &peer{name: "Causeway", uds: uds,
		server: exec.Command(bin, args...),
		agent: exec.Command(bin, "tunnel", "agent", "--server", agentAddr, "--server-name", "causeway-tunnel",
			"--node-name", "bench-edge", "--node-ip", "127.0.0.1", "--health-bind-address", "", "--log-level", "warn",
			"--drain-timeout", "1s", "--tls-cert-file", pki.agentCert, "--tls-private-key-file", pki.agentKey, "--ca-file", pki.serverCA)}
	return p, p.start()
}

// startANP runs ANP's proxy-server (http-connect mode, on a unix socket)
// and proxy-agent from dir anp (bench/tunnel/README.md says how they are
// built).
func startANP(anp, dir string) (*peer, error) {
	pki, err := writePKI(dir, "bench-edge", nil, nil)
	if err != nil {
		return nil, err
	}
	ports := make([]string, 5)
	for i := range ports {
		a, err := freePort()
		if err != nil {
			return nil, err
		}
		_, ports[i], _ = net.SplitHostPort(a)
	}
	uds := filepath.Join(dir, "anp.sock")
	p := &peer{name: "ANP", uds: uds,
		server: exec.Command(filepath.Join(anp, "proxy-server"), "--mode", "http-connect", "--uds-name", uds,
			"--delete-existing-uds-file", "--server-port", "0", "--server-id", "bench", "--server-count", "1",
			"--agent-port", ports[0], "--agent-bind-address", "127.0.0.1", "--admin-port", ports[1], "--health-port", ports[2],
			"--health-bind-address", "127.0.0.1",
			"--cluster-cert", pki.serverCert, "--cluster-key", pki.serverKey, "--cluster-ca-cert", pki.agentCA, "-v", "0"),
		agent: exec.Command(filepath.Join(anp, "proxy-agent"), "--proxy-server-host", "127.0.0.1", "--proxy-server-port", ports[0],
			"--ca-cert", pki.serverCA, "--agent-cert", pki.agentCert, "--agent-key", pki.agentKey, "--agent-id", "bench-edge",
			"--admin-server-port", ports[3], "--health-server-port", ports[4], "--health-server-host", "127.0.0.1", "-v", "0"),
	}
	return p, p.start()
}

// start starts both processes and waits until a CONNECT through them
// reaches an echo server.
func (p *peer) start() error {
	for _, c := range []*exec.Cmd{p.server, p.agent} {
		c.Stdout, c.Stderr = io.Discard, os.Stderr
		if p.name == "ANP" {
			c.Stderr = io.Discard // klog's info lines
		}
		if err := c.Start(); err != nil {
			p.stop()
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	echoLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer tunneltest.EchoServer(echoLn)()
	for i := 0; i < 500; i++ {
		if err = p.ping(echoLn.Addr().String()); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.stop()
	return fmt.Errorf("%s: tunnel not up: %w", p.name, err)
}

func (p *peer) ping(addr string) error {
	c, err := p.dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("ping")); err != nil {
		return err
	}
	_, err = io.ReadFull(c, make([]byte, 4))
	return err
}

// dial opens a tunneled connection to addr: CONNECT over the unix socket.
func (p *peer) dial(addr string) (net.Conn, error) {
	c, err := net.Dial("unix", p.uds)
	if err != nil {
		return nil, err
	}
	// A tunnel that cannot open the connection must not hang the bench.
	c.SetDeadline(time.Now().Add(10 * time.Second))
	tc, err := tunneltest.Connect(c, addr, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return tc, nil
}

func (p *peer) stop() {
	for _, c := range []*exec.Cmd{p.agent, p.server} {
		if c.Process != nil {
			c.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { c.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(3 * time.Second):
				c.Process.Kill()
				<-done
			}
		}
	}
}

// cpuSeconds is the CPU time, user and system, both processes have used.
func (p *peer) cpuSeconds() float64 {
	var s float64
	for _, c := range []*exec.Cmd{p.server, p.agent} {
		d, _ := proc.CPU(c.Process.Pid)
		s += d.Seconds()
	}
	return s
}

// slowReader opens one tunneled connection whose reader stops while its
// source keeps writing, then times a 1 MiB echo exchange on a second
// connection: the slow reader must not stall it. It reports the second
// connection's time, or the error that stopped it (ANP's one stream per
// agent: it may not even open).
func slowReader(p *peer, limit time.Duration) (time.Duration, error) {
	src, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer src.Close()
	go func() {
		c, err := src.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		chunk := make([]byte, 64<<10)
		c.SetWriteDeadline(time.Now().Add(limit + 5*time.Second))
		for i := 0; i < 1024; i++ { // 64 MiB at most, far more than any window
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	stalled, err := p.dial(src.Addr().String())
	if err != nil {
		return 0, err
	}
	defer stalled.Close()
	// Read a little, then stop reading: the tunnel's buffers fill up.
	if _, err := io.ReadFull(stalled, make([]byte, 1024)); err != nil {
		return 0, err
	}
	time.Sleep(500 * time.Millisecond)
	echoLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	// An echo server that closes its connections when done, without
	// waiting for the tunnel to (a stalled one never does).
	var mu sync.Mutex
	var echoed []net.Conn
	defer func() {
		echoLn.Close()
		mu.Lock()
		for _, c := range echoed {
			c.Close()
		}
		mu.Unlock()
	}()
	go func() {
		for {
			c, err := echoLn.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			echoed = append(echoed, c)
			mu.Unlock()
			go io.Copy(c, c)
		}
	}()
	type result struct {
		d   time.Duration
		err error
	}
	done := make(chan result, 1)
	go func() {
		start := time.Now()
		c, err := p.dial(echoLn.Addr().String())
		if err != nil {
			done <- result{err: err}
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(limit))
		payload := make([]byte, 1<<20)
		var wg sync.WaitGroup
		wg.Add(1)
		var werr error
		go func() { defer wg.Done(); _, werr = c.Write(payload) }()
		_, rerr := io.ReadFull(c, payload)
		wg.Wait()
		done <- result{time.Since(start), errors.Join(werr, rerr)}
	}()
	select {
	case r := <-done:
		return r.d, r.err
	case <-time.After(limit + time.Second):
		return 0, fmt.Errorf("no answer within %s", limit)
	}
}
