package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/causeway/causeway/bench/internal/proc"
	"github.com/causeway/causeway/internal/tunnel/tunneltest"
)

// buildCauseway builds the causeway binary into dir unless bin is set.
func buildCauseway(bin, dir string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	bin = filepath.Join(dir, "causeway")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/causeway/causeway/cmd/causeway").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build causeway: %v: %s", err, out)
	}
	return bin, nil
}

// memory runs the causeway binary as a server and an agent on loopback,
// opens conns tunneled connections that each carry one echo round trip
// and stay open, and reports both processes' resident memory.
func memory(bin string, conns int) error {
	dir, err := os.MkdirTemp("", "cwmem")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin, err = buildCauseway(bin, dir); err != nil {
		return err
	}
	p, err := startCauseway(bin, dir, "zstd")
	if err != nil {
		return err
	}
	defer p.stop()
	m, err := heldMemory(p, conns)
	if err != nil {
		return err
	}
	fmt.Printf("| Memory (RSS), %d open tunneled connections, zstd | idle | with connections | per connection |\n", conns)
	fmt.Println("|---|---:|---:|---:|")
	for _, r := range []struct {
		name   string
		before int64
		after  int64
	}{{"server", m.server0, m.server1}, {"agent", m.agent0, m.agent1}} {
		fmt.Printf("| %s | %.1f MiB | %.1f MiB | %.1f KiB |\n", r.name, float64(r.before)/(1<<20), float64(r.after)/(1<<20),
			float64(r.after-r.before)/1024/float64(conns))
	}
	return nil
}

// heldRSS is a peer's server and agent resident memory (bytes) idle and
// with the connections open.
type heldRSS struct{ server0, agent0, server1, agent1 int64 }

// heldMemory opens conns tunneled connections through p, each of which
// does one echo round trip and stays open, and reads both processes'
// resident memory before and with them.
func heldMemory(p *peer, conns int) (heldRSS, error) {
	var m heldRSS
	echoLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return m, err
	}
	defer tunneltest.EchoServer(echoLn)()
	open := func() (net.Conn, error) {
		tc, err := p.dial(echoLn.Addr().String())
		if err != nil {
			return nil, err
		}
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := tc.Write([]byte("ping")); err != nil {
			tc.Close()
			return nil, err
		}
		if _, err := io.ReadFull(tc, make([]byte, 4)); err != nil {
			tc.Close()
			return nil, err
		}
		return tc, nil
	}
	time.Sleep(200 * time.Millisecond)
	m.server0, m.agent0 = proc.Of(p.server.Process.Pid).Current, proc.Of(p.agent.Process.Pid).Current
	held := make([]net.Conn, 0, conns)
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := 0; i < conns; i++ {
		c, err := open()
		if err != nil {
			return m, fmt.Errorf("%s: connection %d: %w", p.name, i, err)
		}
		held = append(held, c)
	}
	time.Sleep(500 * time.Millisecond)
	m.server1, m.agent1 = proc.Of(p.server.Process.Pid).Current, proc.Of(p.agent.Process.Pid).Current
	return m, nil
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
