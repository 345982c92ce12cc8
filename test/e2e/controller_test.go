package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// controller is a running `causeway controller` with its own nginx.
type controller struct {
	t           *testing.T
	IP          string
	HTTPPort    int
	HTTPSPort   int
	HealthPort  int
	MetricsPort int
	StateDir    string
	args        []string
	cmd         *exec.Cmd
	log         *harness.SyncBuffer
	done        chan struct{}
	// apiRestart is when the API server was last started again. Right
	// after a start, its RBAC authorizer may refuse requests until its
	// caches fill; checkLog forgives refusals in that window.
	apiRestart time.Time
}

// controllerConfig says how to run a controller. Namespace holds its
// ConfigMap and Lease and is watched unless Watch says otherwise.
type controllerConfig struct {
	Namespace string
	Watch     []string
	Args      []string
}

// startController runs the controller as deploy/'s ServiceAccount and
// waits until it is ready.
func startController(t *testing.T, cfg controllerConfig) *controller {
	t.Helper()
	c := &controller{t: t, IP: loopbackIP()}
	c.HTTPPort, c.HTTPSPort = freePort(t, c.IP), freePort(t, c.IP)
	c.HealthPort, c.MetricsPort = freePort(t, "127.0.0.1"), freePort(t, "127.0.0.1")
	base, err := os.MkdirTemp("", "causeway-e2e-ctl-")
	if err != nil {
		t.Fatal(err)
	}
	// nginx workers run as an unprivileged user and must reach the files.
	os.Chmod(base, 0o755)
	c.StateDir = filepath.Join(base, "state")
	watch := cfg.Watch
	if watch == nil {
		watch = []string{cfg.Namespace}
	}
	c.args = []string{"controller",
		"--kubeconfig", e2e.kubeconfig, "--state-dir", c.StateDir,
		"--listen-address", c.IP,
		"--http-port", strconv.Itoa(c.HTTPPort), "--https-port", strconv.Itoa(c.HTTPSPort),
		"--health-port", strconv.Itoa(c.HealthPort), "--metrics-port", strconv.Itoa(c.MetricsPort),
		"--configmap", cfg.Namespace + "/causeway", "--shutdown-timeout", "5s",
		"--leader-election-lease-duration", leaseDuration.String(),
		"--leader-election-renew-deadline", renewDeadline.String(),
		"--leader-election-retry-period", retryPeriod.String(),
	}
	for _, ns := range watch {
		c.args = append(c.args, "--watch-namespace", ns)
	}
	c.args = append(c.args, cfg.Args...)
	t.Cleanup(func() {
		c.Stop()
		c.killNginx()
		if t.Failed() {
			t.Logf("controller %s log:\n%s", c.IP, c.log.String())
		}
		os.RemoveAll(base)
	})
	c.start()
	c.WaitReady(waitFor)
	return c
}

// start runs the binary; the log survives restarts.
func (c *controller) start() {
	c.t.Helper()
	if c.log == nil {
		c.log = &harness.SyncBuffer{}
	}
	c.done = make(chan struct{})
	c.cmd = exec.Command(e2e.binary, c.args...)
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	c.cmd.Env = append(os.Environ(), "POD_NAMESPACE=") // the --configmap namespace holds the Lease
	// nginx inherits the output pipes; after a SIGKILL it keeps them open
	// until cleanup, and Wait must not wait for it.
	c.cmd.WaitDelay = time.Second
	// Should the test binary die, the controller goes with it.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	done := c.done
	go func() { c.cmd.Wait(); close(done) }()
}

// Stop sends SIGTERM and waits for a clean exit. A controller must never
// need more than its shutdown timeout, and never log an RBAC refusal.
func (c *controller) Stop() {
	select {
	case <-c.done:
		return
	default:
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
		c.t.Errorf("controller did not stop within 20s of SIGTERM")
	}
	c.checkLog()
}

// Kill sends SIGKILL, as a node failure would. nginx, in its own process
// group, keeps running until cleanup.
func (c *controller) Kill() {
	c.cmd.Process.Kill()
	<-c.done
	c.checkLog()
}

// Restart stops the controller and starts it again on the same state
// directory and ports, as a container restart would.
func (c *controller) Restart() {
	c.t.Helper()
	c.Stop()
	c.start()
	c.WaitReady(waitFor)
}

// checkLog fails the test when the API refused the controller anything:
// deploy/'s RBAC must grant every request the code makes.
func (c *controller) checkLog() {
	for _, line := range strings.Split(c.log.String(), "\n") {
		if !strings.Contains(line, "forbidden") && !strings.Contains(line, "Forbidden") {
			continue
		}
		if at, ok := logTime(line); ok && !c.apiRestart.IsZero() && !at.Before(c.apiRestart) && at.Before(c.apiRestart.Add(apiWarmUp)) {
			continue
		}
		c.t.Errorf("the controller was refused a request; deploy/ RBAC lacks a permission:\n%s", line)
		return
	}
}

// apiWarmUp bounds how long a restarted API server may refuse authorized
// requests while its RBAC caches fill.
const apiWarmUp = 30 * time.Second

// logTime reads the time= field of a controller log line.
func logTime(line string) (time.Time, bool) {
	_, rest, ok := strings.Cut(line, "time=")
	if !ok {
		return time.Time{}, false
	}
	stamp, _, _ := strings.Cut(rest, " ")
	at, err := time.Parse(time.RFC3339Nano, stamp)
	return at, err == nil
}

// killNginx stops an nginx left behind by a killed controller.
func (c *controller) killNginx() {
	data, err := os.ReadFile(filepath.Join(c.StateDir, "run", "nginx.pid"))
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
		syscall.Kill(-pid, syscall.SIGKILL) // nginx leads its own process group
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

func (c *controller) Exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// WaitReady waits for /readyz to answer 200.
func (c *controller) WaitReady(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if c.probe("/readyz") == http.StatusOK {
			return
		}
		if c.Exited() {
			c.t.Fatalf("controller exited before ready:\n%s", c.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("controller not ready within %s", timeout)
}

// probe returns the status of a health endpoint, or 0 when unreachable.
func (c *controller) probe(path string) int {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d%s", c.HealthPort, path))
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Metric returns the sum of a metric's samples (0 if it is absent or the
// controller does not answer).
func (c *controller) Metric(name string) float64 {
	c.t.Helper()
	v, _ := harness.Metric(fmt.Sprintf("http://127.0.0.1:%d/metrics", c.MetricsPort), name)
	return v
}

// IsLeader reports whether the controller says it holds the Lease.
func (c *controller) IsLeader() bool { return c.Metric("causeway_leader") == 1 }

// WaitLeader waits until the controller leads. Tests that expect events
// wait for it first: a replica that does not lead writes none.
func (c *controller) WaitLeader(timeout time.Duration) {
	c.t.Helper()
	eventually(c.t, timeout, func() error {
		if !c.IsLeader() {
			return fmt.Errorf("controller %s does not lead", c.IP)
		}
		return nil
	})
}

// result is one HTTP exchange through nginx.
type result = harness.Result

// Get sends GET host+path to the controller's HTTP port.
func (c *controller) Get(host, path string) (result, error) { return c.get("http", host, path) }

// GetTLS sends GET over HTTPS with SNI host.
func (c *controller) GetTLS(host, path string) (result, error) { return c.get("https", host, path) }

func (c *controller) get(scheme, host, path string) (result, error) {
	port := c.HTTPPort
	if scheme == "https" {
		port = c.HTTPSPort
	}
	return harness.Get(scheme, net.JoinHostPort(c.IP, strconv.Itoa(port)), host, path)
}

// waitServed waits until host/ is answered by service (or, with service
// "", with status 404: not routed).
func (c *controller) waitServed(host, service string) {
	c.t.Helper()
	eventually(c.t, waitFor, func() error { return c.served(host, service) })
}

func (c *controller) served(host, service string) error {
	r, err := c.Get(host, "/")
	if err != nil {
		return err
	}
	if service == "" {
		if r.Status != http.StatusNotFound {
			return fmt.Errorf("%s: status %d from %q, want 404", host, r.Status, r.Reply.Service)
		}
		return nil
	}
	if r.Status != http.StatusOK || r.Reply.Service != service {
		return fmt.Errorf("%s: status %d from %q, want 200 from %q", host, r.Status, r.Reply.Service, service)
	}
	return nil
}
