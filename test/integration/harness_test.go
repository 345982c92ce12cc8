// Package integration runs the real causeway binary against real nginx and
// local echo backends on 127.0.0.x addresses.
package integration

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/causeway/causeway/test/echo"
	"github.com/causeway/causeway/test/harness"
)

var (
	binary string
	// nextIP hands every controller its own loopback address, so tests
	// never fight over ports or lingering connections.
	nextIP atomic.Int32
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if _, err := exec.LookPath(dataPlane.binary); err != nil {
		if dataPlane.other {
			fmt.Fprintf(os.Stderr, "CAUSEWAY_NGINX=%s: %v (for Angie, run make angie)\n", dataPlane.binary, err)
			return 1
		}
		if os.Getenv("CAUSEWAY_REQUIRE_NGINX") == "1" {
			fmt.Fprintln(os.Stderr, "nginx is required (CAUSEWAY_REQUIRE_NGINX=1) but not installed; run hack/install-deps.sh")
			return 1
		}
		fmt.Fprintln(os.Stderr, "skipping integration tests: nginx not installed")
		return 0
	}
	if err := detectDataPlane(); err != nil {
		fmt.Fprintln(os.Stderr, "data plane under test:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "data plane under test: %s (%s)\n", dataPlane.binary, dataPlaneFlavour)
	dir, err := os.MkdirTemp("", "causeway-it-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "causeway")
	// The controller under test is built as the tests are: with the race
	// detector, or without it.
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "github.com/causeway/causeway/cmd/causeway")...)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build causeway:", err)
		return 1
	}
	return m.Run()
}

// loopbackIP returns a fresh 127.0.x.y address. The tier on another data
// plane (Angie) runs beside the nginx tier in make test: it counts from
// 127.0.150.1, so that the two never pick the same address, where a port
// one asked the kernel for could be taken by the other before its nginx
// binds it.
func loopbackIP() string {
	n := nextIP.Add(1)
	base := int32(10)
	if dataPlane.other {
		base = 150
	}
	return fmt.Sprintf("127.0.%d.%d", base+n/250, 1+n%250)
}

// freePort asks the kernel for an unused port on ip.
func freePort(t *testing.T, ip string) int {
	t.Helper()
	return harness.FreePort(t, ip)
}

// backend is a running echo server.
type backend struct {
	Service string
	IP      string
	Port    int
	srv     *http.Server
}

// startBackend runs an echo backend for service on a fresh loopback IP.
func startBackend(t *testing.T, service string) *backend {
	t.Helper()
	return startBackendAt(t, service, loopbackIP(), 0)
}

// startBackends runs n echo backends for service on fresh loopback IPs
// sharing one port, as the endpoints of one EndpointSlice port do.
func startBackends(t *testing.T, service string, n int) []*backend {
	t.Helper()
	first := startBackend(t, service)
	out := []*backend{first}
	for len(out) < n {
		out = append(out, startBackendAt(t, service, loopbackIP(), first.Port))
	}
	return out
}

// startHandlerBackend runs h as a backend of service on a fresh loopback
// IP, for tests whose backend answers something particular.
func startHandlerBackend(t *testing.T, service string, h http.Handler) *backend {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(loopbackIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{Service: service, IP: l.Addr().(*net.TCPAddr).IP.String(), Port: l.Addr().(*net.TCPAddr).Port}
	b.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: h}
	go b.srv.Serve(l)
	t.Cleanup(func() { b.srv.Close() })
	return b
}

func startBackendAt(t *testing.T, service, ip string, port int) *backend {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{Service: service, IP: ip, Port: l.Addr().(*net.TCPAddr).Port}
	b.srv = &http.Server{Handler: echo.Handler(service, l.Addr().String()), ReadHeaderTimeout: 5 * time.Second}
	go b.srv.Serve(l)
	t.Cleanup(func() { b.srv.Close() })
	return b
}

// serviceYAML is a Service plus an EndpointSlice pointing at backends.
func serviceYAML(ns, name string, port int, backends ...*backend) string {
	var eps strings.Builder
	targetPort := 0
	for _, b := range backends {
		fmt.Fprintf(&eps, "  - addresses: [%q]\n    conditions: {ready: true}\n", b.IP)
		targetPort = b.Port
	}
	if len(backends) == 0 {
		eps.WriteString("  []\n")
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  ports: [{name: http, port: %[3]d}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %[2]s-1
  namespace: %[1]s
  labels: {kubernetes.io/service-name: %[2]s}
addressType: IPv4
ports: [{name: http, port: %[4]d, protocol: TCP}]
endpoints:
%[5]s---
`, ns, name, port, targetPort, eps.String())
}

// controller is a running causeway controller with its own nginx.
type controller struct {
	t           *testing.T
	IP          string
	HTTPPort    int
	HTTPSPort   int
	HealthPort  int
	MetricsPort int
	StateDir    string
	Manifests   string
	cmd         *exec.Cmd
	log         *harness.SyncBuffer
	done        chan struct{}
}

// startController writes manifests (file name -> YAML) into a fresh
// directory and starts the controller on it, waiting for /readyz.
func startController(t *testing.T, manifests map[string]string, extraArgs ...string) *controller {
	t.Helper()
	c := launchController(t, manifests, launch{}, extraArgs...)
	c.WaitReady(15 * time.Second)
	return c
}

// launch varies how launchController starts the controller.
type launch struct {
	// output, when set, receives the controller's stdout and stderr
	// directly (a plain file, say) instead of the test's log buffer.
	output *os.File
	// base, when set, is the directory the state and manifest
	// directories are made in.
	base string
	// after, when set, is a stopped controller whose address, ports,
	// state and manifest directories the new one takes over.
	after *controller
	// ip, when set, is the loopback address the controller listens on.
	ip string
}

// launchController starts the controller without waiting for it.
func launchController(t *testing.T, manifests map[string]string, how launch, extraArgs ...string) *controller {
	t.Helper()
	c := &controller{t: t, IP: how.ip, log: &harness.SyncBuffer{}, done: make(chan struct{})}
	if c.IP == "" {
		c.IP = loopbackIP()
	}
	if prev := how.after; prev != nil {
		c.IP, c.HTTPPort, c.HTTPSPort, c.HealthPort, c.MetricsPort = prev.IP, prev.HTTPPort, prev.HTTPSPort, prev.HealthPort, prev.MetricsPort
		c.StateDir, c.Manifests = prev.StateDir, prev.Manifests
	} else {
		c.HTTPPort, c.HTTPSPort = freePort(t, c.IP), freePort(t, c.IP)
		c.HealthPort, c.MetricsPort = freePort(t, "127.0.0.1"), freePort(t, "127.0.0.1")
		base, err := os.MkdirTemp(how.base, "causeway-ctl-")
		if err != nil {
			t.Fatal(err)
		}
		// nginx workers run as an unprivileged user and must reach temp dirs.
		os.Chmod(base, 0o755)
		t.Cleanup(func() { os.RemoveAll(base) })
		c.StateDir, c.Manifests = filepath.Join(base, "state"), filepath.Join(base, "manifests")
		os.MkdirAll(c.Manifests, 0o755)
	}
	for name, body := range manifests {
		c.WriteManifest(name, body)
	}
	statusPorts := []string{"--health-port", strconv.Itoa(c.HealthPort), "--metrics-port", strconv.Itoa(c.MetricsPort)}
	// ingress-nginx's --healthz-port stands for both.
	if i := slices.Index(extraArgs, "--healthz-port"); i >= 0 && i+1 < len(extraArgs) {
		c.HealthPort, _ = strconv.Atoi(extraArgs[i+1])
		c.MetricsPort, statusPorts = c.HealthPort, nil
	}
	args := append([]string{"controller",
		"--manifests", c.Manifests, "--state-dir", c.StateDir,
		"--listen-address", c.IP,
		"--http-port", strconv.Itoa(c.HTTPPort), "--https-port", strconv.Itoa(c.HTTPSPort)},
		statusPorts...)
	args = append(args,
		// nginx quits in about a second; Angie 1.12 lingers on each idle
		// keep-alive client connection for lingering_timeout (5 s) first,
		// so a longer timeout would only make every Angie test 5 s longer.
		"--configmap", "causeway/config", "--shutdown-timeout", "2s")
	args = append(args, dataPlaneArgs()...)
	c.cmd = exec.Command(binary, append(args, extraArgs...)...)
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if how.output != nil {
		c.cmd.Stdout, c.cmd.Stderr = how.output, how.output
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			t.Logf("controller log:\n%s", c.log.String())
		}
	})
	return c
}

// Stop sends SIGTERM and waits for a clean exit.
func (c *controller) Stop() {
	select {
	case <-c.done:
		return
	default:
	}
	nginxPID := 0
	if data, err := os.ReadFile(filepath.Join(c.StateDir, "run", "nginx.pid")); err == nil {
		nginxPID, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		if code := c.cmd.ProcessState.ExitCode(); code != 0 {
			c.t.Errorf("controller exited with %d after SIGTERM, want 0", code)
		}
		// Killed workers may take a moment to exit.
		for i := 0; i < 20 && nginxPID > 0 && groupRunning(nginxPID); i++ {
			time.Sleep(50 * time.Millisecond)
		}
		if nginxPID > 0 && groupRunning(nginxPID) {
			out, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,stat,cmd").CombinedOutput()
			c.t.Errorf("nginx (process group %d) still running after the controller stopped:\n%s", nginxPID, out)
		}
	case <-time.After(15 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
		c.t.Errorf("controller did not stop within 15s of SIGTERM")
	}
}

// WriteManifest writes (atomically) one manifest file.
func (c *controller) WriteManifest(name, body string) {
	c.t.Helper()
	p := filepath.Join(c.Manifests, name)
	tmp := filepath.Join(c.Manifests, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		c.t.Fatal(err)
	}
}

// ChangesStillApply adds an Ingress for a new host, b.test, routed to
// service, and waits for it to answer: after a refused or excluded object,
// later changes must keep going live.
func (c *controller) ChangesStillApply(service string) {
	c.t.Helper()
	c.WriteManifest("b.yaml", ingressYAML("default", "b", "b.test", "Prefix / "+service))
	eventually(c.t, 5*time.Second, func() error {
		if r := c.Get("b.test", "/"); r.Reply.Service != service {
			return fmt.Errorf("b.test: %d", r.Status)
		}
		return nil
	})
}

func (c *controller) WaitReady(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", c.HealthPort))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		select {
		case <-c.done:
			c.t.Fatalf("controller exited before ready:\n%s", c.log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	c.t.Fatalf("controller not ready within %s:\n%s", timeout, c.log.String())
}

// Metric returns the sum of a metric's samples whose labels contain all of
// the given label pairs (e.g. `result="success"`).
func (c *controller) Metric(name string, labels ...string) float64 {
	c.t.Helper()
	v, err := harness.Metric(fmt.Sprintf("http://127.0.0.1:%d/metrics", c.MetricsPort), name, labels...)
	if err != nil {
		c.t.Fatal(err)
	}
	return v
}

// result is one HTTP exchange.
type result = harness.Result

// Get sends a request for host+path to the controller's HTTP port.
func (c *controller) Get(host, path string) result {
	c.t.Helper()
	r, err := c.get("http", host, path)
	if err != nil {
		c.t.Fatalf("GET http://%s%s: %v", host, path, err)
	}
	return r
}

// GetTLS sends a request over HTTPS with SNI host.
func (c *controller) GetTLS(host, path string) result {
	c.t.Helper()
	r, err := c.get("https", host, path)
	if err != nil {
		c.t.Fatalf("GET https://%s%s: %v", host, path, err)
	}
	return r
}

func (c *controller) get(scheme, host, path string) (result, error) {
	port := c.HTTPPort
	if scheme == "https" {
		port = c.HTTPSPort
	}
	return harness.Get(scheme, net.JoinHostPort(c.IP, strconv.Itoa(port)), host, path)
}

// eventually is harness.Eventually.
var eventually = harness.Eventually

// nginxMasterPID reads the pid file nginx writes in the state directory.
func (c *controller) nginxMasterPID() int {
	c.t.Helper()
	data, err := os.ReadFile(filepath.Join(c.StateDir, "run", "nginx.pid"))
	if err != nil {
		return 0 // between a crash and the restart
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// groupRunning reports whether a process of process group pgid is still
// running. Zombies do not count: an nginx process whose parent exited
// first is reaped by PID 1, which in some sandboxes takes its time.
func groupRunning(pgid int) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and
		// parentheses, so read after the last ")".
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}
