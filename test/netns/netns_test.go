// Package netns tests the tunnel across Linux network namespaces with the
// real causeway binary: a "cloud" namespace runs the server, an "edge"
// namespace runs the agent and a backend that the cloud cannot reach
// except through the tunnel.
package netns

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
)

// helperEnv makes the test binary act as a small tool inside a namespace.
const helperEnv = "CAUSEWAY_NETNS_HELPER"

var binary string

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "serve":
		helperServe(os.Args[len(os.Args)-1])
		return
	case "get":
		os.Exit(helperGet(os.Args[len(os.Args)-1]))
	case "kubelet":
		helperKubelet(os.Args[len(os.Args)-1])
		return
	case "forward":
		helperForward(os.Args[len(os.Args)-2], os.Args[len(os.Args)-1])
		return
	}
	dir, err := os.MkdirTemp("", "causeway-netns")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "causeway")
	out, err := exec.Command("go", "build", "-o", binary, "github.com/causeway/causeway/cmd/causeway").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build causeway: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// helperServe is the edge backend: a plain HTTP "kubelet".
func helperServe(addr string) {
	http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from edge %s", r.URL.Path)
	}))
}

// helperForward listens on TCP addr and forwards each connection to the
// unix socket path: a way out of a namespace to a host-side listener.
func helperForward(addr, path string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	forward(ln, func() (net.Conn, error) { return net.Dial("unix", path) })
}

// serveUnixToTCP forwards connections on the unix socket path to addr
// until the test ends.
func serveUnixToTCP(t *testing.T, path, addr string) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go forward(ln, func() (net.Conn, error) { return net.Dial("tcp", addr) })
}

// forward pipes each connection ln accepts to one dial opens, both ways,
// until ln is closed.
func forward(ln net.Listener, dial func() (net.Conn, error)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			u, err := dial()
			if err != nil {
				return
			}
			defer u.Close()
			go func() {
				io.Copy(u, c)
				if cw, ok := u.(interface{ CloseWrite() error }); ok {
					cw.CloseWrite()
				}
			}()
			io.Copy(c, u)
		}()
	}
}

// helperGet fetches url with a short timeout and prints the body.
func helperGet(url string) int {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Print(string(b))
	return 0
}

const (
	cloudIP = "10.250.0.1"
	edgeIP  = "10.250.0.2"
)

// topology is two namespaces joined by a veth pair. The edge drops new
// inbound connections, like a NAT: it can dial out, nobody can dial in.
type topology struct {
	cloud, edge *tunneltest.Netns
	dir         string
	pki         *tunneltest.PKI // set by writePKI
}

func newTopology(t *testing.T) *topology {
	tunneltest.NeedNetns(t)
	id := os.Getpid() % 100000
	tp := &topology{
		cloud: tunneltest.NewNetns(t, fmt.Sprintf("cw-cloud-%d", id)),
		edge:  tunneltest.NewNetns(t, fmt.Sprintf("cw-edge-%d", id)),
		dir:   shortDir(t),
	}
	vc, ve := fmt.Sprintf("cwc%d", id), fmt.Sprintf("cwe%d", id)
	if out, err := exec.Command("ip", "link", "add", vc, "netns", tp.cloud.Name, "type", "veth",
		"peer", "name", ve, "netns", tp.edge.Name).CombinedOutput(); err != nil {
		t.Fatalf("veth: %v: %s", err, out)
	}
	tp.cloud.MustRun(t, "ip", "addr", "add", cloudIP+"/24", "dev", vc)
	tp.cloud.MustRun(t, "ip", "link", "set", vc, "up")
	tp.edge.MustRun(t, "ip", "addr", "add", edgeIP+"/24", "dev", ve)
	tp.edge.MustRun(t, "ip", "link", "set", ve, "up")
	tp.edge.MustRun(t, "iptables", "-A", "INPUT", "-i", ve, "-m", "conntrack", "--ctstate", "NEW", "-j", "DROP")
	return tp
}

func shortDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "cwn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// proc is a process started inside a namespace; it is killed at cleanup.
type proc struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
}

func (tp *topology) start(t *testing.T, ns *tunneltest.Netns, name string, argv ...string) *proc {
	t.Helper()
	logPath := filepath.Join(tp.dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := ns.Cmd(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), helperEnv+"=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	p := &proc{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.signal(syscall.SIGKILL)
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("--- %s log ---\n%s", name, b)
		}
	})
	return p
}

// signal signals the process; `ip netns exec` execs the command, so the
// PID is the command's own.
func (p *proc) signal(sig syscall.Signal) {
	if p.cmd.Process != nil {
		p.cmd.Process.Signal(sig)
	}
}

func (p *proc) waitExit(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-p.done:
		return
	case <-time.After(d):
	}
	t.Fatalf("process %d did not exit within %s", p.cmd.Process.Pid, d)
}

// viaConnect does GET path on dest through the server's CONNECT socket.
func viaConnect(uds, dest, path string) (string, error) {
	c, err := net.DialTimeout("unix", uds, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	tc, err := tunneltest.Connect(c, dest, nil)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(tc, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, dest)
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() error) time.Duration {
	t.Helper()
	start := time.Now()
	var err error
	for time.Since(start) < d {
		if err = cond(); err == nil {
			return time.Since(start)
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s: %v", d, what, err)
	return 0
}

// writePKI writes the certificates; the agent's carries agentIPs as IP
// SANs, the addresses the server then accepts as its node IPs.
func (tp *topology) writePKI(t *testing.T, agentIPs ...net.IP) (serverArgs, agentArgs []string) {
	t.Helper()
	p, err := tunneltest.NewPKI(net.ParseIP(cloudIP))
	if err != nil {
		t.Fatal(err)
	}
	tp.pki = p
	sc, sk, _ := p.Server.WriteFiles(tp.dir, "server")
	agentCA, _ := p.AgentCA.WriteFile(tp.dir, "agent-ca")
	return []string{"--tls-cert-file", sc, "--tls-private-key-file", sk, "--agent-ca-file", agentCA},
		tp.agentTLS(t, "edge-1", agentIPs...)
}

// agentTLS writes a certificate for node, signed by writePKI's agent CA,
// and returns the agent's TLS flags.
func (tp *topology) agentTLS(t *testing.T, node string, ips ...net.IP) []string {
	t.Helper()
	leaf, err := tp.pki.AgentCA.Issue("system:node:"+node, false, ips, nil, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ac, ak, _ := leaf.WriteFiles(tp.dir, "agent-"+node)
	serverCA, _ := tp.pki.ServerCA.WriteFile(tp.dir, "server-ca")
	return []string{"--tls-cert-file", ac, "--tls-private-key-file", ak, "--ca-file", serverCA}
}
