package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	"github.com/causeway/causeway/test/e2e/netns"
)

// The Ingress section's network: a cloud namespace (controller, nginx,
// tunnel server, wrk) and an edge namespace (agent, two backends) joined
// by a veth pair. The edge drops new connections from outside except to
// the "direct" Pod, so the tunneled Pod is reachable only through the
// agent while the direct one is the same hop without the tunnel.
const (
	ingCloudIP   = "10.249.0.1"
	ingEdgeIP    = "10.249.0.2"
	ingTunnelPod = "10.249.7.10"
	ingDirectPod = "10.249.8.10"
)

// ingressConfig sets up the Ingress section.
type ingressConfig struct {
	bin      string
	turns    int
	duration time.Duration
	conns    int
	body     int
}

// ingressSection measures requests per second and latency through
// Ingress → tunnel → edge Pod against Ingress → the same kind of Pod
// reached directly, in alternating turns of one run.
func ingressSection(cfg ingressConfig) error {
	if why := ingressUnavailable(); why != "" {
		fmt.Printf("Ingress → tunnel → edge Pod: skipped (%s)\n\n", why)
		return nil
	}
	dir, err := os.MkdirTemp("", "cwing")
	if err != nil {
		return err
	}
	os.Chmod(dir, 0o755) // nginx's workers read the state directory
	defer os.RemoveAll(dir)
	if cfg.bin, err = buildCauseway(cfg.bin, dir); err != nil {
		return err
	}
	id := os.Getpid() % 100000
	cloud, edge := fmt.Sprintf("cwb-cloud-%d", id), fmt.Sprintf("cwb-edge-%d", id)
	defer exec.Command("ip", "netns", "del", cloud).Run()
	defer exec.Command("ip", "netns", "del", edge).Run()
	vc, ve := fmt.Sprintf("cwbc%d", id), fmt.Sprintf("cwbe%d", id)
	steps := [][]string{
		{"ip", "netns", "add", cloud}, {"ip", "netns", "add", edge},
		{"ip", "link", "add", vc, "netns", cloud, "type", "veth", "peer", "name", ve, "netns", edge},
		{"ip", "-n", cloud, "addr", "add", ingCloudIP + "/24", "dev", vc},
		{"ip", "-n", edge, "addr", "add", ingEdgeIP + "/24", "dev", ve},
		{"ip", "-n", edge, "addr", "add", ingTunnelPod + "/32", "dev", "lo"},
		{"ip", "-n", edge, "addr", "add", ingDirectPod + "/32", "dev", "lo"},
	}
	for _, ns := range []string{cloud, edge} {
		steps = append(steps, []string{"ip", "-n", ns, "link", "set", "lo", "up"})
	}
	steps = append(steps,
		[]string{"ip", "-n", cloud, "link", "set", vc, "up"}, []string{"ip", "-n", edge, "link", "set", ve, "up"},
		[]string{"ip", "-n", cloud, "route", "add", "10.249.0.0/16", "via", ingEdgeIP},
		[]string{"ip", "netns", "exec", edge, "iptables", "-A", "INPUT", "-i", ve, "-d", ingDirectPod, "-j", "ACCEPT"},
		[]string{"ip", "netns", "exec", edge, "iptables", "-A", "INPUT", "-i", ve, "-m", "conntrack", "--ctstate", "NEW", "-j", "DROP"})
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(s, " "), err, out)
		}
	}

	payload := strings.Repeat("x", cfg.body)
	pod := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(payload)) })
	for _, addr := range []string{ingTunnelPod + ":8080", ingDirectPod + ":8080"} {
		ln, err := netns.ListenIn(edge, addr)
		if err != nil {
			return err
		}
		defer tunneltest.HTTPServer(ln, pod)()
	}

	pki, err := writePKI(dir, "edge-1", []net.IP{net.ParseIP(ingCloudIP)}, []net.IP{net.ParseIP(ingEdgeIP)})
	if err != nil {
		return err
	}

	manifests := filepath.Join(dir, "manifests")
	os.MkdirAll(manifests, 0o755)
	if err := os.WriteFile(filepath.Join(manifests, "ingress.yaml"), []byte(ingressManifests()), 0o644); err != nil {
		return err
	}
	var procs []*exec.Cmd
	defer func() {
		for _, c := range slices.Backward(procs) { // the controller first: it stops nginx
			c.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { c.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				c.Process.Kill()
			}
		}
	}()
	start := func(ns, name string, args ...string) error {
		f, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			return err
		}
		defer f.Close()
		c := exec.Command("ip", append([]string{"netns", "exec", ns, cfg.bin}, args...)...)
		c.Stdout, c.Stderr = f, f
		if err := c.Start(); err != nil {
			return err
		}
		procs = append(procs, c)
		return nil
	}
	if err := start(cloud, "server", "tunnel", "server", "--server-id", "cloud-1",
		"--agent-bind-address", ingCloudIP+":8132", "--transparent-bind-address", ingCloudIP+":10263",
		"--iptables", "--iptables-ports", "all", "--iptables-cidr", "10.249.7.0/24",
		"--route-allow", "edge-1=10.249.7.0/24", "--health-bind-address", ingCloudIP+":8133",
		"--tls-cert-file", pki.serverCert, "--tls-private-key-file", pki.serverKey, "--agent-ca-file", pki.agentCA); err != nil {
		return err
	}
	if err := start(edge, "agent", "tunnel", "agent", "--server", ingCloudIP+":8132", "--node-name", "edge-1",
		"--node-ip", ingEdgeIP, "--cidr", "10.249.7.0/24", "--health-bind-address", "127.0.0.1:8134",
		"--tls-cert-file", pki.agentCert, "--tls-private-key-file", pki.agentKey, "--ca-file", pki.serverCA); err != nil {
		return err
	}
	if err := start(cloud, "controller", "controller", "--manifests", manifests, "--state-dir", filepath.Join(dir, "state"),
		"--listen-address", "127.0.0.1", "--http-port", "8080", "--https-port", "8443",
		"--health-port", "8081", "--metrics-port", "9113"); err != nil {
		return err
	}
	// Both hosts answer 200 before anything is measured.
	deadline := time.Now().Add(60 * time.Second)
	for _, host := range []string{"tunnel.test", "direct.test"} {
		for {
			r, err := wrk(cloud, host, 1, time.Second)
			if err == nil && r.bad == 0 && r.rps > 0 {
				break
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(filepath.Join(dir, "controller.log"))
				return fmt.Errorf("%s not served in 60 s (%v)\n%s", host, err, log)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	fmt.Printf("Ingress → edge Pod, tunnel vs direct (%d turns of %s each, alternating; wrk -t1 -c%d, keep-alive; %d-byte answers; one machine, %d CPUs shared by wrk, nginx, the tunnel and the Pods)\n\n",
		cfg.turns, cfg.duration, cfg.conns, cfg.body, runtime.NumCPU())
	fmt.Println("| turn | direct req/s | tunnel req/s | tunnel / direct | direct p50 | tunnel p50 | direct p99 | tunnel p99 | errors (direct / tunnel) |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	var ratios, dp99, tp99, drps, trps []float64
	for turn := 1; turn <= cfg.turns; turn++ {
		d, err := wrk(cloud, "direct.test", cfg.conns, cfg.duration)
		if err != nil {
			return err
		}
		tu, err := wrk(cloud, "tunnel.test", cfg.conns, cfg.duration)
		if err != nil {
			return err
		}
		fmt.Printf("| %d | %.0f | %.0f | %.2f | %s | %s | %s | %s | %d / %d |\n", turn, d.rps, tu.rps, tu.rps/d.rps,
			ms(d.p50), ms(tu.p50), ms(d.p99), ms(tu.p99), d.bad, tu.bad)
		ratios, drps, trps = append(ratios, tu.rps/d.rps), append(drps, d.rps), append(trps, tu.rps)
		dp99, tp99 = append(dp99, d.p99.Seconds()), append(tp99, tu.p99.Seconds())
	}
	fmt.Printf("| median | %.0f | %.0f | **%.2f** | | | %s | %s | |\n\n", median(drps), median(trps), median(ratios),
		ms(time.Duration(median(dp99)*float64(time.Second))), ms(time.Duration(median(tp99)*float64(time.Second))))
	return nil
}

// ingressManifests serves tunnel.test from the Pod behind the edge's NAT
// and direct.test from the one the cloud reaches directly.
func ingressManifests() string {
	var b strings.Builder
	for _, s := range []struct{ name, ip string }{{"tunnel", ingTunnelPod}, {"direct", ingDirectPod}} {
		fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: bench}
spec:
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %[1]s-1, namespace: bench, labels: {kubernetes.io/service-name: %[1]s}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints: [{addresses: [%[2]s], conditions: {ready: true}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %[1]s, namespace: bench}
spec:
  ingressClassName: causeway
  rules:
  - host: %[1]s.test
    http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: %[1]s, port: {number: 80}}}}]
---
`, s.name, s.ip)
	}
	return b.String()
}

// ingressUnavailable says why the section cannot run here, or "".
func ingressUnavailable() string {
	if os.Geteuid() != 0 {
		return "needs root for network namespaces"
	}
	for _, bin := range []string{"ip", "iptables", "iptables-restore", "wrk", "nginx"} {
		if _, err := exec.LookPath(bin); err != nil {
			return bin + " is not installed"
		}
	}
	return ""
}

// wrkResult is one wrk run.
type wrkResult struct {
	rps      float64
	p50, p99 time.Duration
	bad      int
}

var (
	wrkRPS     = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkPercent = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+)(us|ms|s)\s*$`)
	wrkErrors  = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)|Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// wrk runs wrk inside the namespace against nginx on 127.0.0.1:8080.
func wrk(ns, host string, conns int, d time.Duration) (wrkResult, error) {
	out, err := exec.Command("ip", "netns", "exec", ns, "wrk", "-t1", "-c"+strconv.Itoa(conns),
		"-d"+strconv.Itoa(max(1, int(d.Seconds())))+"s", "--latency", "--timeout", "5s",
		"-H", "Host: "+host, "http://127.0.0.1:8080/").CombinedOutput()
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk: %w: %s", err, out)
	}
	var r wrkResult
	m := wrkRPS.FindSubmatch(out)
	if m == nil {
		return r, errors.New("wrk printed no Requests/sec:\n" + string(out))
	}
	r.rps, _ = strconv.ParseFloat(string(m[1]), 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}
	for _, m := range wrkPercent.FindAllSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(string(m[2]), 64)
		d := time.Duration(v * float64(unit[string(m[3])]))
		if string(m[1]) == "50" {
			r.p50 = d
		} else {
			r.p99 = d
		}
	}
	for _, m := range wrkErrors.FindAllSubmatch(out, -1) {
		for _, f := range m[1:] {
			n, _ := strconv.Atoi(string(f))
			r.bad += n
		}
	}
	return r, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
