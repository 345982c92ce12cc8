package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/causeway/causeway/bench/internal/proc"
)

// peerName names the Pod, ConfigMap and election id ingress-nginx runs
// as in the set's namespace.
const peerName = "ingress-nginx-peer"

// controller is a running ingress-nginx controller and its nginx.
type controller struct {
	cmd                   *exec.Cmd
	root, log             string
	httpPort, healthzPort int
}

// mountScript gives ingress-nginx its image's paths in a mount namespace
// of its own: $R/etc/nginx, $R/etc/ingress-controller and $R/tmp/nginx
// over /etc/nginx, /etc/ingress-controller and /tmp/nginx.
const mountScript = `set -e
for d in etc/nginx etc/ingress-controller tmp/nginx; do mount --bind "$R/$d" "/$d"; done
exec "$@"`

// startController prepares what ingress-nginx reads from the API server
// beside the Ingresses (its Pod, for POD_NAME; its ConfigMap) and starts
// it on namespace ns, listening on loopback ports of its own.
func startController(ctx context.Context, o options, client kubernetes.Interface, ns string) (*controller, error) {
	if err := peerObjects(ctx, client, ns); err != nil {
		return nil, err
	}
	// A fresh start: the image's nginx.conf (setup.sh keeps a copy), no
	// pid file or socket of an earlier run.
	image, err := os.ReadFile(filepath.Join(o.root, "etc/nginx/nginx.conf.image"))
	if err != nil {
		return nil, fmt.Errorf("%w (run bench/peer/setup.sh)", err)
	}
	if err := os.WriteFile(filepath.Join(o.root, "etc/nginx/nginx.conf"), image, 0o644); err != nil {
		return nil, err
	}
	tmp := filepath.Join(o.root, "tmp/nginx")
	os.RemoveAll(tmp)
	for _, d := range []string{tmp, "/etc/ingress-controller", "/tmp/nginx"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	ports := make([]int, 7)
	for k := range ports {
		if ports[k], err = freePort(); err != nil {
			return nil, err
		}
	}
	c := &controller{root: o.root, httpPort: ports[0], healthzPort: ports[2], log: filepath.Join(o.root, "controller-"+ns+".log")}
	logFile, err := os.Create(c.log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	args := []string{"-m", "--propagation", "private", "sh", "-c", mountScript, "sh", o.controller,
		"--kubeconfig", o.kubeconfig,
		"--watch-namespace", ns,
		"--configmap", ns + "/" + peerName,
		"--election-id", peerName,
		"--controller-class", "causeway.io/ingress-controller",
		"--ingress-class", "causeway",
		"--update-status=false",
		"--enable-metrics=false",
		"--http-port", strconv.Itoa(ports[0]),
		"--https-port", strconv.Itoa(ports[1]),
		"--healthz-port", strconv.Itoa(ports[2]),
		"--healthz-host", "127.0.0.1",
		"--status-port", strconv.Itoa(ports[3]),
		"--stream-port", strconv.Itoa(ports[4]),
		"--default-server-port", strconv.Itoa(ports[5]),
		"--profiler-port", strconv.Itoa(ports[6]),
		"--profiling=false",
		"--shutdown-grace-period", "0",
		"--post-shutdown-grace-period", "0",
	}
	args = append(args, o.extra...)
	c.cmd = exec.CommandContext(ctx, "unshare", args...)
	c.cmd.Env = append(os.Environ(), "R="+o.root, "POD_NAME="+peerName, "POD_NAMESPACE="+ns, "NGINX_BINARY="+o.nginx)
	c.cmd.Stdout, c.cmd.Stderr = logFile, logFile
	// Should this tool die, the controller stops (and stops its nginx).
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	return c, nil
}

// peerObjects creates (or keeps) ingress-nginx's ServiceAccount-less Pod
// and its ConfigMap in ns. The ConfigMap binds every listener to
// 127.0.0.1, turns HTTP/2 off (nginx 1.22 has no "http2 on") and keeps
// the logs in the private tmp/nginx.
func peerObjects(ctx context.Context, client kubernetes.Interface, ns string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: peerName, Labels: map[string]string{"app": peerName}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "controller", Image: "ingress-nginx-peer:local"}},
		},
	}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: peerName}, Data: map[string]string{
		"bind-address":    "127.0.0.1",
		"use-http2":       "false",
		"access-log-path": "/tmp/nginx/access.log",
		"error-log-path":  "/tmp/nginx/error.log",
	}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// stop ends the controller (it stops its nginx) and, should it not within
// ten seconds, its process group and the nginx of its pid file.
func (c *controller) stop() {
	c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
	if pid := c.nginxPid(); pid > 0 {
		syscall.Kill(pid, syscall.SIGQUIT)
	}
}

// waitReady polls the controller's /healthz (nginx running and Lua's
// balancer configured) until 200, and returns the time since start.
func (c *controller) waitReady(ctx context.Context, start time.Time, timeout time.Duration) (time.Duration, error) {
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", c.healthzPort)
	hc := &http.Client{Timeout: time.Second}
	for time.Since(start) < timeout {
		if resp, err := hc.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(start), nil
			}
		}
		if c.cmd.ProcessState != nil {
			return 0, fmt.Errorf("controller exited: see %s", c.log)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("not ready within %s: see %s", timeout, c.log)
}

// reloads counts the reloads the controller logged (the first
// configuration at start is one).
func (c *controller) reloads() int {
	data, _ := os.ReadFile(c.log)
	return strings.Count(string(data), "Backend successfully reloaded")
}

func (c *controller) nginxPid() int {
	data, err := os.ReadFile(filepath.Join(c.root, "tmp/nginx/nginx.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// controllerPid is the controller's own pid: unshare and sh exec it.
func (c *controller) controllerPid() int { return c.cmd.Process.Pid }

// nginxRSS adds up the nginx master's and its children's resident memory.
func (c *controller) nginxRSS() int64 { return proc.TreeRSS(c.nginxPid()) }

func nginxVersion(bin string) string {
	out, _ := exec.Command(bin, "-v").CombinedOutput()
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "nginx version: nginx/")
}
