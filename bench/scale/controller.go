package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/causeway/causeway/bench/internal/proc"
)

// controller is the running binary.
type controller struct {
	cmd                     *exec.Cmd
	done                    chan struct{}
	start                   time.Time
	stateDir, ip            string
	httpPort, health, mport int
	// pport is the port of the controller's profiler (--profiling).
	pport int
	log   *os.File
}

func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// dataPlane is the nginx (or Angie) the controller drives; the zero value
// is the controller's default, Debian's nginx.
type dataPlane struct{ binary, modulesDir, luaPackagePath string }

func (d dataPlane) args() []string {
	var out []string
	if d.binary != "" {
		out = append(out, "--nginx-binary", d.binary)
	}
	if d.modulesDir != "" {
		out = append(out, "--nginx-modules-dir", d.modulesDir)
	}
	if d.luaPackagePath != "" {
		out = append(out, "--lua-package-path", d.luaPackagePath)
	}
	return out
}

func (d dataPlane) nginx() string {
	if d.binary == "" {
		return "nginx"
	}
	return d.binary
}

func startController(ctx context.Context, bin, kubeconfig, stateDir string, plane dataPlane, args []string) (*controller, error) {
	c := &controller{stateDir: stateDir, ip: "127.0.200.1", done: make(chan struct{})}
	var err error
	for _, p := range []*int{&c.httpPort, &c.health, &c.mport, &c.pport} {
		if *p, err = freePort(c.ip); err != nil {
			return nil, err
		}
	}
	httpsPort, err := freePort(c.ip)
	if err != nil {
		return nil, err
	}
	if c.log, err = os.CreateTemp("", "causeway-scale-controller-*.log"); err != nil {
		return nil, err
	}
	c.cmd = exec.Command(bin, "controller", "--kubeconfig", kubeconfig, "--state-dir", stateDir,
		"--listen-address", c.ip, "--http-port", strconv.Itoa(c.httpPort), "--https-port", strconv.Itoa(httpsPort),
		"--health-port", strconv.Itoa(c.health), "--metrics-port", strconv.Itoa(c.mport),
		"--profiling", "--profiler-port", strconv.Itoa(c.pport),
		"--publish-address", publishAddress, "--shutdown-timeout", "10s")
	c.cmd.Args = append(append(c.cmd.Args, args...), plane.args()...)
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	c.cmd.WaitDelay = time.Second
	fmt.Fprintf(os.Stderr, "starting the controller (log: %s) ...\n", c.log.Name())
	c.start = time.Now()
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { c.cmd.Wait(); close(c.done) }()
	return c, nil
}

func (c *controller) stop() {
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
	c.log.Close()
}

func (c *controller) waitReady(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	client := &http.Client{Timeout: time.Second}
	err := c.poll(ctx, time.Now().Add(timeout), func() bool {
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", c.health))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if err != nil {
		return 0, fmt.Errorf("controller not ready: %w", err)
	}
	return time.Since(c.start), nil
}

// poll calls ok every 20 ms until it returns true (nil), or the
// controller exits, ctx ends or deadline passes (an error).
func (c *controller) poll(ctx context.Context, deadline time.Time, ok func() bool) error {
	for time.Now().Before(deadline) {
		select {
		case <-c.done:
			return fmt.Errorf("controller exited; see %s", c.log.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if ok() {
			return nil
		}
	}
	return fmt.Errorf("timed out; see %s", c.log.Name())
}

// changeTiming is one timed change: from the API update to traffic on the
// new host, and the controller's own share of it when exactly one sync
// ran for it (apply and reload are 0 otherwise).
type changeTiming struct {
	took time.Duration
	// apply is causeway_config_apply_seconds for the sync: from the
	// controller seeing the event to the configuration being live
	// (model build, render, reload, endpoint push).
	apply time.Duration
	// reload is causeway_nginx_last_reload_seconds after the sync: from
	// writing the files to new workers answering; 0 without a reload.
	reload time.Duration
	// reloads counts the reloads while the change was timed.
	reloads int
}

// change moves object i of set to a new host and times until nginx routes
// that host to the backend. Its EndpointSlice is first pointed at this
// run's backend, which matters when the objects come from an earlier run.
func (c *controller) change(ctx context.Context, client kubernetes.Interface, set objectSet, i int, ip string, port int) (changeTiming, error) {
	if err := pointSlice(ctx, client, set.namespace(), i, ip, port); err != nil {
		return changeTiming{}, err
	}
	newHost := fmt.Sprintf("changed-%d-%d.bench.test", i, time.Now().Unix())
	addr, err := set.addr(ctx, c, i)
	if err != nil {
		return changeTiming{}, err
	}
	write, err := set.setHost(ctx, i, newHost)
	if err != nil {
		return changeTiming{}, err
	}
	return c.timed(ctx, addr, newHost, func(r *http.Response) bool { return r.StatusCode == http.StatusOK }, write)
}

// pointSlice points EndpointSlice i of ns at ip:port unless it is there
// already, then waits for nginx to have it: applied without a reload,
// and kept out of the measurement that follows.
func pointSlice(ctx context.Context, client kubernetes.Interface, ns string, i int, ip string, port int) error {
	slice, err := client.DiscoveryV1().EndpointSlices(ns).Get(ctx, name(i)+"-1", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if slice.Endpoints[0].Addresses[0] == ip && *slice.Ports[0].Port == int32(port) {
		return nil
	}
	if err := setSlicePort(ctx, client, ns, i, ip, port); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	return nil
}

// setSlicePort writes EndpointSlice i of ns's one endpoint as ip:port.
func setSlicePort(ctx context.Context, client kubernetes.Interface, ns string, i int, ip string, port int) error {
	slices := client.DiscoveryV1().EndpointSlices(ns)
	slice, err := slices.Get(ctx, name(i)+"-1", metav1.GetOptions{})
	if err != nil {
		return err
	}
	slice.Endpoints[0].Addresses[0], slice.Ports[0].Port = ip, ptr.To(int32(port))
	_, err = slices.Update(ctx, slice, metav1.UpdateOptions{})
	return err
}

// timed runs write, then polls host at addr until done accepts an
// answer, and reads the controller's share of the sync that did it.
func (c *controller) timed(ctx context.Context, addr, host string, done func(*http.Response) bool, write func() error) (changeTiming, error) {
	var t changeTiming
	applied := func() (sum, count, reloads float64) {
		v := c.metrics("causeway_config_apply_seconds_sum", "causeway_config_apply_seconds_count", "causeway_nginx_reloads_total")
		return v[0], v[1], v[2]
	}
	sum0, count0, reloads0 := applied()
	start := time.Now()
	if err := write(); err != nil {
		return t, err
	}
	httpc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for time.Since(start) < time.Minute {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		req.Host = host
		if resp, err := httpc.Do(req); err == nil {
			resp.Body.Close()
			if done(resp) {
				t.took = time.Since(start)
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if t.took == 0 {
		return t, fmt.Errorf("%s not changed within a minute", host)
	}
	// The sync records its metric just after traffic can flow (or, when
	// the hosts went ahead of it, after its reload, seconds later); wait
	// for it, and for a moment more to see whether another follows. The
	// next change then does not wait for this one's sync: until
	// 2026-11-30 the wait ended after 5 s, shorter than a sync with a
	// reload at 10,000 Ingresses on a slow machine (5.6 s), and the next
	// change waited for the rest of it.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && c.metric("causeway_config_apply_seconds_count") == count0; {
		time.Sleep(metricsPoll)
	}
	time.Sleep(200 * time.Millisecond)
	sum, count, reloads := applied()
	t.reloads = int(reloads - reloads0)
	if count-count0 == 1 {
		t.apply = time.Duration((sum - sum0) * float64(time.Second))
		if t.reloads > 0 {
			t.reload = time.Duration(c.metric("causeway_nginx_last_reload_seconds") * float64(time.Second))
		}
	}
	return t, nil
}

// profile collects CPU profiles into dir, in 5-second pieces
// (cpu-PHASE-NN.pprof; merge them with go tool pprof), until the returned
// function is called, if dir is set, from the controller's profiler
// (--profiling, always given).
func (c *controller) profile(dir, phase string) (stop func()) {
	if dir == "" {
		return func() {}
	}
	var stopping atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=5", c.pport)
		for piece := 0; !stopping.Load(); {
			resp, err := http.Get(url)
			if err != nil {
				time.Sleep(20 * time.Millisecond) // not listening yet
				continue
			}
			if resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				fmt.Fprintf(os.Stderr, "profile %s: %s (is /debug/pprof served?)\n", phase, resp.Status)
				return
			}
			if f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%s-%02d.pprof", phase, piece))); err == nil {
				io.Copy(f, resp.Body)
				f.Close()
			}
			resp.Body.Close()
			piece++
		}
	}()
	return func() {
		stopping.Store(true)
		<-done
	}
}

// heapProfile writes the controller's heap profile to file in dir, if
// dir is set.
func (c *controller) heapProfile(dir, file string) {
	if dir == "" {
		return
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap", c.pport))
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if f, err := os.Create(filepath.Join(dir, file)); err == nil {
		io.Copy(f, resp.Body)
		f.Close()
	}
}

// rss reads the controller's resident memory now and at its peak.
func (c *controller) rss() proc.Memory {
	return proc.Of(c.cmd.Process.Pid)
}

// nginxRSS adds up the resident memory of the nginx master and its
// workers, found through the pid file.
func nginxRSS(stateDir string) int64 {
	data, err := os.ReadFile(filepath.Join(stateDir, "run", "nginx.pid"))
	if err != nil {
		return 0
	}
	master, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return proc.TreeRSS(master)
}

// configSize adds up the rendered configuration files (secrets excluded).
func configSize(stateDir string) (files int, size int64, err error) {
	err = filepath.WalkDir(stateDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".conf") {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		size += info.Size()
		return nil
	})
	return files, size, err
}

// nginxTest times `nginx -t` on the live configuration, best of three,
// and reports its peak memory.
func nginxTest(ctx context.Context, stateDir string, plane dataPlane) (time.Duration, int64, error) {
	return nginxTestEnv(ctx, stateDir, plane, nil)
}

// nginxTestEnv is nginxTest with env added to nginx's environment.
func nginxTestEnv(ctx context.Context, stateDir string, plane dataPlane, env []string) (time.Duration, int64, error) {
	best := time.Duration(1<<63 - 1)
	var peak int64
	for range 3 {
		cmd := exec.CommandContext(ctx, plane.nginx(), "-t", "-q", "-p", stateDir+"/", "-e", "stderr", "-c", filepath.Join(stateDir, "nginx.conf"))
		if env != nil {
			cmd.Env = append(os.Environ(), env...)
		}
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, 0, fmt.Errorf("nginx -t: %w: %s", err, out)
		}
		best = min(best, time.Since(start))
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss<<10)
		}
	}
	return best, peak, nil
}
