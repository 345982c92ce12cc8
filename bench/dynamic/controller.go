package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// controllerProc is a running `causeway controller` serving a manifest
// directory, with the nginx it drives.
type controllerProc struct {
	IP                      string
	HTTPPort, HTTPSPort     int
	HealthPort, MetricsPort int
	StateDir, Manifests     string
	LogPath                 string
	proc                    *process
}

// controllerOptions adapts one controller to a section; the zero value
// is the default.
type controllerOptions struct {
	// args are extra command-line flags, such as --enable-metrics=false.
	args []string
	// logDir, when set, holds the controller's log (NAME-controller.log)
	// instead of its own directory. The controller's output carries
	// nginx's access log when it is on (one line per request, relayed by
	// the controller), so (d) puts it on tmpfs rather than on disk.
	logDir string
}

// startController writes manifests (file name to YAML) into a fresh
// directory, starts the controller on it and waits for /readyz.
func (e *env) startController(ctx context.Context, name string, manifests map[string]string, c *config) (*controllerProc, error) {
	return e.startControllerWith(ctx, name, manifests, c, controllerOptions{})
}

// startControllerWith is startController with options.
func (e *env) startControllerWith(ctx context.Context, name string, manifests map[string]string, c *config, opt controllerOptions) (*controllerProc, error) {
	base := filepath.Join(e.dir, name)
	p := &controllerProc{IP: e.nextIP(listenNet), StateDir: filepath.Join(base, "state"),
		Manifests: filepath.Join(base, "manifests"), LogPath: filepath.Join(base, "controller.log")}
	if opt.logDir != "" {
		p.LogPath = filepath.Join(opt.logDir, name+"-controller.log")
	}
	if err := os.MkdirAll(p.Manifests, 0o755); err != nil {
		return nil, fmt.Errorf("manifest directory: %w", err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		return nil, fmt.Errorf("controller directory: %w", err)
	}
	for file, body := range manifests {
		if _, err := writeManifest(p.Manifests, file, body); err != nil {
			return nil, err
		}
	}
	var err error
	for _, port := range []struct {
		dst *int
		ip  string
	}{{&p.HTTPPort, p.IP}, {&p.HTTPSPort, p.IP}, {&p.HealthPort, ""}, {&p.MetricsPort, ""}} {
		if *port.dst, err = freePort(port.ip); err != nil {
			return nil, err
		}
	}
	args := []string{"controller",
		"--manifests", p.Manifests, "--state-dir", p.StateDir,
		"--listen-address", p.IP,
		"--http-port", strconv.Itoa(p.HTTPPort), "--https-port", strconv.Itoa(p.HTTPSPort),
		"--health-port", strconv.Itoa(p.HealthPort), "--metrics-port", strconv.Itoa(p.MetricsPort),
		"--configmap", "causeway/config", "--shutdown-timeout", "5s", "--dataplane", "lua",
		"--sync-quiet-period", c.syncQuiet.String(), "--sync-max-delay", c.syncMaxDelay.String()}
	args = append(args, e.plane.controllerArgs()...)
	args = append(args, opt.args...)
	if p.proc, err = startProcess(p.LogPath, e.bin, args...); err != nil {
		return nil, err
	}
	e.onClose(p.stop)
	if err := p.waitReady(ctx, 30*time.Second); err != nil {
		return nil, err
	}
	if mode, err := p.Metric("causeway_dataplane_mode", `mode="lua"`); err != nil || mode != 1 {
		return nil, fmt.Errorf("controller %s is not using the Lua data plane (metric %v, %v)", name, mode, err)
	}
	return p, nil
}

// stop asks the controller to shut down (it stops its nginx), and kills
// both if that takes too long.
func (p *controllerProc) stop() {
	nginx := p.nginxPID()
	p.proc.stop(syscall.SIGTERM, 15*time.Second)
	if nginx > 0 && syscall.Kill(-nginx, 0) == nil {
		time.Sleep(time.Second)
		syscall.Kill(-nginx, syscall.SIGKILL)
	}
}

func (p *controllerProc) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", p.HealthPort))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if p.proc.exited() {
			return fmt.Errorf("controller exited before ready:\n%s", tail(p.LogPath, 4000))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("controller not ready within %s:\n%s", timeout, tail(p.LogPath, 4000))
}

// WriteManifest replaces one manifest file atomically and returns the
// moment of the rename.
func (p *controllerProc) WriteManifest(name, body string) (time.Time, error) {
	return writeManifest(p.Manifests, name, body)
}

// HTTPAddr is where nginx serves plain HTTP.
func (p *controllerProc) HTTPAddr() string {
	return net.JoinHostPort(p.IP, strconv.Itoa(p.HTTPPort))
}

// HTTPSAddr is where nginx serves HTTPS.
func (p *controllerProc) HTTPSAddr() string {
	return net.JoinHostPort(p.IP, strconv.Itoa(p.HTTPSPort))
}

// nginxPID is nginx's master process, 0 if it is not running.
func (p *controllerProc) nginxPID() int {
	data, err := os.ReadFile(filepath.Join(p.StateDir, "run", "nginx.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// pid is the controller's process id.
func (p *controllerProc) pid() int { return p.proc.cmd.Process.Pid }

// rendered is the configuration the controller gave nginx: nginx.conf and
// the server files.
func (p *controllerProc) rendered() (string, error) {
	files, err := filepath.Glob(filepath.Join(p.StateDir, "servers", "*.conf"))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, f := range append([]string{filepath.Join(p.StateDir, "nginx.conf")}, files...) {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("rendered config: %w", err)
		}
		b.Write(data)
	}
	return b.String(), nil
}

// checkRendered makes sure the rendered configuration holds every string
// of want and none of refuse, so that a row named what measures what its
// name says.
func (p *controllerProc) checkRendered(what string, want, refuse []string) error {
	conf, err := p.rendered()
	if err != nil {
		return err
	}
	for _, w := range want {
		if !strings.Contains(conf, w) {
			return fmt.Errorf("%s: the rendered config lacks %q", what, w)
		}
	}
	for _, r := range refuse {
		if strings.Contains(conf, r) {
			return fmt.Errorf("%s: the rendered config holds %q", what, r)
		}
	}
	return nil
}

// Metric returns the sum of a metric's samples whose label sets contain
// every given pair (such as `result="success"`).
func (p *controllerProc) Metric(name string, labels ...string) (float64, error) {
	text, err := p.scrape()
	if err != nil {
		return 0, err
	}
	return sumMetric(text, name, labels...)
}

// scrape fetches the metrics page.
func (p *controllerProc) scrape() (string, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", p.MetricsPort))
	if err != nil {
		return "", fmt.Errorf("scrape metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return "", fmt.Errorf("read metrics: %w", err)
	}
	return string(body), nil
}

// sumMetric adds up the samples of name in a metrics page whose labels
// contain every given pair.
var sumMetric = harness.SumMetric

// counters is a snapshot of the controller metrics a section reports.
type counters struct {
	reloads, updates, updateFailures float64
	applySum, applyCount             float64
}

// snapshot reads the counters from one scrape.
func (p *controllerProc) snapshot() (counters, error) {
	var c counters
	text, err := p.scrape()
	if err != nil {
		return c, err
	}
	for _, m := range []struct {
		dst    *float64
		name   string
		labels []string
	}{
		{&c.reloads, "causeway_nginx_reloads_total", nil},
		{&c.updates, "causeway_dynamic_updates_total", []string{`kind="endpoints"`, `result="success"`}},
		{&c.updateFailures, "causeway_dynamic_updates_total", []string{`kind="endpoints"`, `result="failure"`}},
		{&c.applySum, "causeway_config_apply_seconds_sum", nil},
		{&c.applyCount, "causeway_config_apply_seconds_count", nil},
	} {
		if *m.dst, err = sumMetric(text, m.name, m.labels...); err != nil {
			return c, err
		}
	}
	return c, nil
}

// delta is what happened between two snapshots.
func (c counters) delta(before counters) counters {
	return counters{
		reloads:        c.reloads - before.reloads,
		updates:        c.updates - before.updates,
		updateFailures: c.updateFailures - before.updateFailures,
		applySum:       c.applySum - before.applySum,
		applyCount:     c.applyCount - before.applyCount,
	}
}

// applyMean is the controller's own mean time from a change event to the
// change being live (causeway_config_apply_seconds).
func (c counters) applyMean() time.Duration {
	if c.applyCount == 0 {
		return 0
	}
	return time.Duration(c.applySum / c.applyCount * float64(time.Second))
}
