package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	"github.com/causeway/causeway/test/cluster"
	"github.com/causeway/causeway/test/e2e/netns"
	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/testenv"
)

// The edge of TestEdgeTunnel: a network namespace on the node standing for
// an edge node behind NAT, its Pod network, and the release that reaches
// it through the chart's tunnel.enabled.
const (
	edgeRelease   = "causeway-edge"
	edgeAppsNS    = "edge-apps"
	edgePodCIDR   = "10.252.7.0/24"
	edgePodIP     = "10.252.7.10"
	edgeHost      = "edge.causeway.test"
	edgeClass     = "edge"
	edgeTLSSecret = "tunnel-tls"
	edgeCASecret  = "tunnel-agent-ca"
)

// edgeAppManifests are the edge Pod's Service, its EndpointSlice and the
// Ingress of class edge that routes to it.
const edgeAppManifests = `apiVersion: v1
kind: Namespace
metadata: {name: ` + edgeAppsNS + `}
---
apiVersion: v1
kind: Service
metadata: {name: edge-web, namespace: ` + edgeAppsNS + `}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: edge-web-1, namespace: ` + edgeAppsNS + `, labels: {kubernetes.io/service-name: edge-web}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints: [{addresses: [` + edgePodIP + `], conditions: {ready: true}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: edge-web, namespace: ` + edgeAppsNS + `}
spec:
  ingressClassName: ` + edgeClass + `
  rules:
  - host: ` + edgeHost + `
    http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: edge-web, port: {number: 80}}}}]
`

// TestEdgeTunnel installs a release with the chart's tunnel.enabled (an
// init container writing the DNAT rules with NET_ADMIN, an unprivileged
// tunnel server beside nginx) and serves, through an Ingress, a Pod that
// only an agent reaches: the agent and the Pod run in a namespace on the
// node whose NAT drops every connection from outside. Then: the agent
// killed makes the Ingress answer 502 at once; its return serves again;
// a second replica counts itself in by its Lease and serves the edge Pod
// too. Its own release and IngressClass leave the shared release alone; it
// removes all it made.
func TestEdgeTunnel(t *testing.T) {
	c := node(t)
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	client, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	bin := buildCauseway(t)

	// The edge node: a namespace joined to the node by a veth pair, the
	// Pod's address on its loopback, and a NAT that refuses inbound
	// connections from the node.
	edge, err := netns.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { edge.Close() })
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("ip", "-n", edge.Name, "addr", "add", edgePodIP+"/32", "dev", "lo")
	run("ip", "-n", edge.Name, "route", "add", "default", "via", edge.HostIP.String())
	run("ip", "netns", "exec", edge.Name, "iptables", "-A", "INPUT", "!", "-i", "lo", "-m", "conntrack", "--ctstate", "NEW", "-j", "DROP")
	// The node routes the edge Pod network to the edge (the route goes
	// with the veth pair), where the NAT drops it: nothing reaches the Pod
	// but through the agent, and nothing leaves the machine.
	run("ip", "route", "add", edgePodCIDR, "via", edge.PeerIP.String())
	ln, err := netns.ListenIn(edge.Name, edgePodIP+":8080")
	if err != nil {
		t.Fatal(err)
	}
	defer tunneltest.HTTPServer(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from edge pod %s", r.URL.Path)
	}))()
	if c, err := (&net.Dialer{Timeout: 300 * time.Millisecond}).DialContext(ctx, "tcp", edgePodIP+":8080"); err == nil {
		c.Close()
		t.Fatal("the node reached the edge Pod directly: the NAT does not hold")
	}

	// Certificates: the server's (agents check the name causeway-tunnel)
	// and the CA of the agents' client certificates, as Secrets.
	p, err := tunneltest.NewPKI()
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: edgeRelease}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeNamespaces(c, edgeRelease, edgeAppsNS) })
	secrets := []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: edgeTLSSecret}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": p.Server.CertPEM, "tls.key": p.Server.KeyPEM}},
		{ObjectMeta: metav1.ObjectMeta{Name: edgeCASecret}, Data: map[string][]byte{"ca.crt": p.AgentCA.PEM}},
	}
	for _, s := range secrets {
		if _, err := client.CoreV1().Secrets(edgeRelease).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	start := time.Now()
	cw, err := c.InstallCauseway(ctx, cluster.InstallOptions{Release: edgeRelease, Namespace: edgeRelease, Set: []string{
		"controller.replicaCount=1", "controller.ingressClass=" + edgeClass, "controller.ingressClassResource.name=" + edgeClass,
		"controller.ingressClassResource.controllerValue=causeway.io/edge", "controller.electionID=edge-leader",
		"controller.admissionWebhooks.enabled=false", "controller.gatewayAPI.enabled=false", "controller.service.type=ClusterIP",
		"tunnel.enabled=true", "tunnel.edgeCIDRs[0]=" + edgePodCIDR, "tunnel.routeAllow[0]=edge-1=" + edgePodCIDR,
		"tunnel.tlsSecret=" + edgeTLSSecret, "tunnel.agentCASecret=" + edgeCASecret}})
	if err != nil {
		t.Fatalf("helm install with tunnel.enabled: %v\n%s", err, logsOnFailure(c))
	}
	t.Cleanup(func() {
		if err := c.UninstallCauseway(context.Background(), edgeRelease, edgeRelease); err != nil {
			t.Errorf("uninstall %s: %v", edgeRelease, err)
		}
	})
	t.Logf("helm install with tunnel.enabled took %s", time.Since(start).Round(100*time.Millisecond))
	pods, err := cw.Pods(ctx)
	if err != nil || len(pods) != 1 {
		t.Fatalf("%d pods, %v: want one", len(pods), err)
	}
	pod := pods[0]

	// The agent dials the release's tunnel Service, as an edge node would
	// from behind its NAT.
	tunnelSvc, err := client.CoreV1().Services(edgeRelease).Get(ctx, edgeRelease+"-tunnel", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	leaf, err := p.AgentCA.Issue("system:node:edge-1", false, []net.IP{net.IP(edge.PeerIP.AsSlice())}, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ac, ak, _ := leaf.WriteFiles(dir, "agent")
	serverCA, _ := p.ServerCA.WriteFile(dir, "server-ca")
	agentArgs := []string{"netns", "exec", edge.Name, bin, "tunnel", "agent",
		"--server", net.JoinHostPort(tunnelSvc.Spec.ClusterIP, "8132"), "--server-name", "causeway-tunnel",
		"--node-name", "edge-1", "--node-ip", edge.PeerIP.String(), "--cidr", edgePodCIDR, "--health-bind-address", "",
		"--tls-cert-file", ac, "--tls-private-key-file", ak, "--ca-file", serverCA}
	agentLog := &harness.SyncBuffer{}
	startAgent := func() *exec.Cmd {
		cmd := exec.Command("ip", agentArgs...)
		cmd.Stdout, cmd.Stderr = agentLog, agentLog
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	agent := startAgent()

	// The Service of the edge Pod: no selector, one EndpointSlice, as a
	// Pod on the edge node would have.
	if out, err := c.KubectlApply(ctx, edgeAppManifests); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}

	ctlSvc, err := client.CoreV1().Services(edgeRelease).Get(ctx, cw.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(ctlSvc.Spec.ClusterIP, "80")
	served := func(path string) func(context.Context) (bool, error) {
		return func(context.Context) (bool, error) {
			r, err := harness.Get("http", addr, edgeHost, path)
			return err == nil && r.Status == http.StatusOK && r.Body == "hello from edge pod "+path, nil
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, served("/")); err != nil {
		r, gerr := harness.Get("http", addr, edgeHost, "/")
		t.Fatalf("the Ingress never served the edge Pod through the tunnel (last: %d %q %v)\nagent:\n%s\n%s",
			r.Status, r.Body, gerr, agentLog.String(), containerLogs(t, c, pod, "tunnel-server", "tunnel-iptables"))
	}

	// The answer came through the tunnel server's transparent listener.
	if n, err := harness.Metric("http://"+net.JoinHostPort(pod.Status.PodIP, "8133")+"/metrics",
		"causeway_tunnel_server_dials_total", `frontend="transparent"`, `result="ok"`); err != nil || n < 1 {
		t.Fatalf("the tunnel server counts %v transparent dials (%v), want the Ingress's", n, err)
	}

	// The agent gone: the transparent listener refuses at once.
	agent.Process.Signal(syscall.SIGKILL)
	agent.Wait()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		begin := time.Now()
		r, err := harness.Get("http", addr, edgeHost, "/gone")
		return err == nil && r.Status == http.StatusBadGateway && time.Since(begin) < time.Second, nil
	}); err != nil {
		t.Fatal("with the agent gone the Ingress did not answer a fast 502")
	}
	startAgent()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, served("/back")); err != nil {
		t.Fatalf("the agent's return did not restore the edge Pod\nagent:\n%s", agentLog.String())
	}

	// A second replica: the servers count each other by their Leases, the
	// agent links to both, and both Pods' nginx serve the edge Pod.
	scale, err := client.AppsV1().Deployments(edgeRelease).GetScale(ctx, cw.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 2
	if _, err := client.AppsV1().Deployments(edgeRelease).UpdateScale(ctx, cw.Name, scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := cw.Pods(ctx)
		if err != nil || len(pods) != 2 {
			return false, nil
		}
		for _, p := range pods {
			if p.Status.PodIP == "" {
				return false, nil
			}
			n, err := harness.Metric("http://"+net.JoinHostPort(p.Status.PodIP, "8133")+"/metrics", "causeway_tunnel_server_links")
			if err != nil || n != 1 {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		leases, _ := client.CoordinationV1().Leases(edgeRelease).List(ctx, metav1.ListOptions{})
		t.Fatalf("two replicas, each linked to the agent: never (%d Leases)\nagent:\n%s", len(leases.Items), agentLog.String())
	}
	leases, err := client.CoordinationV1().Leases(edgeRelease).List(ctx, metav1.ListOptions{LabelSelector: "causeway.io/tunnel-server=" + cw.Name})
	if err != nil || len(leases.Items) != 2 {
		t.Fatalf("%v tunnel Leases (%v), want one per replica", len(leases.Items), err)
	}
	pods, err = cw.Pods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			r, err := harness.Get("http", net.JoinHostPort(p.Status.PodIP, "8080"), edgeHost, "/replica")
			return err == nil && r.Status == http.StatusOK && r.Body == "hello from edge pod /replica", nil
		}); err != nil {
			t.Errorf("replica %s does not serve the edge Pod", p.Name)
		}
	}

	// The server runs without a capability; only the init container,
	// finished by now, had NET_ADMIN.
	for _, p := range procsOf(t, pod) {
		if strings.Contains(p.Cmdline, "tunnel server") && (capMask(p.CapEff) != 0 || capMask(p.CapPrm) != 0) {
			t.Errorf("the tunnel server (pid %d) holds capabilities: effective %s, permitted %s", p.PID, p.CapEff, p.CapPrm)
		}
	}
}

// buildCauseway builds the causeway binary for processes the test runs on
// the node itself.
func buildCauseway(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "causeway")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/causeway")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// containerLogs returns the named containers' logs of pod, for a failure.
func containerLogs(t *testing.T, c *cluster.Cluster, pod corev1.Pod, containers ...string) string {
	client, err := c.Client()
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, name := range containers {
		data, err := client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: name}).DoRaw(context.Background())
		fmt.Fprintf(&b, "--- %s (%v)\n%s\n", name, err, data)
	}
	return b.String()
}
