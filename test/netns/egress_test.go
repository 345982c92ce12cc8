package netns

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	"github.com/causeway/causeway/test/testenv"
)

const kubeletLogs = "2026-03-14T12:00:00Z app started\n2026-03-14T12:00:01Z serving on :8080\n"

// helperKubelet is the fake kubelet in the edge namespace: HTTPS, serving
// container logs the way the real kubelet's /containerLogs does.
func helperKubelet(addr string) {
	ca, err := tunneltest.NewCA("kubelet-ca")
	if err != nil {
		panic(err)
	}
	leaf, err := ca.Issue("edge-1", true, []net.IP{net.ParseIP(edgeIP)}, nil, time.Hour)
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Addr: addr, TLSConfig: &tls.Config{Certificates: []tls.Certificate{leaf.TLS}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/containerLogs/default/web/app" {
				fmt.Fprint(w, kubeletLogs)
				return
			}
			http.NotFound(w, r)
		})}
	srv.ListenAndServeTLS("", "")
}

// TestKubectlLogsThroughEgressSelector starts kube-apiserver with an
// EgressSelectorConfiguration whose "cluster" egress is the server's
// Konnectivity socket, creates a Node whose kubelet is the fake HTTPS
// kubelet in the edge namespace, and reads a Pod's logs through the API:
// the apiserver → Konnectivity gRPC → tunnel → agent → kubelet path. A
// second kube-apiserver does the same with proxyProtocol HTTPConnect on
// the server's CONNECT socket.
func TestKubectlLogsThroughEgressSelector(t *testing.T) {
	tp := newTopology(t)
	serverTLS, agentTLS := tp.writePKI(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tp.start(t, tp.edge, "kubelet", "env", helperEnv+"=kubelet", self, edgeIP+":10250")
	konn := filepath.Join(tp.dir, "konn.sock")
	connect := filepath.Join(tp.dir, "connect.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env, cs := egressAPIServer(ctx, t, tp, "GRPC", konn)

	// The server authorizes agents against the Node objects. It runs in
	// the cloud namespace, kube-apiserver on the host's loopback: bridge
	// the same 127.0.0.1 port across with a unix socket.
	apiAddr := strings.TrimPrefix(env.APIServerURL(), "https://")
	bridge := filepath.Join(tp.dir, "api.sock")
	serveUnixToTCP(t, bridge, apiAddr)
	tp.start(t, tp.cloud, "api-bridge", "env", helperEnv+"=forward", self, apiAddr, bridge)
	srv := tp.start(t, tp.cloud, "server", append([]string{binary, "tunnel", "server", "--server-id", "cloud-1",
		"--agent-bind-address", cloudIP + ":8132", "--konnectivity-uds-path", konn, "--connect-uds-path", connect,
		"--health-bind-address", cloudIP + ":8133", "--authorize-node-addresses", "--kubeconfig", env.AdminKubeconfig}, serverTLS...)...)
	// An agent with edge-1's certificate claiming an address the Node does
	// not have is refused, with a log line saying why.
	tp.start(t, tp.edge, "rogue-agent", append([]string{binary, "tunnel", "agent", "--server", cloudIP + ":8132",
		"--node-name", "edge-1", "--node-ip", "10.250.0.77", "--health-bind-address", ""}, agentTLS...)...)
	waitFor(t, 10*time.Second, "the rogue registration to be refused", func() error {
		b, _ := os.ReadFile(srv.log)
		if !strings.Contains(string(b), "node IP 10.250.0.77 is not among node") {
			return fmt.Errorf("no refusal in the server log yet")
		}
		return nil
	})
	tp.start(t, tp.edge, "agent", append([]string{binary, "tunnel", "agent", "--server", cloudIP + ":8132",
		"--node-name", "edge-1", "--node-ip", edgeIP, "--health-bind-address", ""}, agentTLS...)...)
	took := readLogs(ctx, t, cs)
	// The edge admits no inbound connections, so this is the only path;
	// the server's metrics confirm that it carried the dial.
	dialed := func(frontend string) {
		t.Helper()
		m := tp.cloud.MustRun(t, "env", helperEnv+"=get", self, "http://"+cloudIP+":8133/metrics")
		if !strings.Contains(m, `causeway_tunnel_server_dials_total{frontend="`+frontend+`",result="ok"}`) {
			t.Fatalf("server metrics show no %s dial:\n%s", frontend, m)
		}
	}
	dialed("konnectivity")
	t.Logf("kubectl logs through EgressSelector → Konnectivity → tunnel: ok after %s", took)

	_, cs = egressAPIServer(ctx, t, tp, "HTTPConnect", connect)
	took = readLogs(ctx, t, cs)
	dialed("connect-uds")
	t.Logf("kubectl logs through EgressSelector → HTTP CONNECT → tunnel: ok after %s", took)
}

// egressAPIServer starts a kube-apiserver whose "cluster" egress is
// proxyProtocol over the unix socket uds, and creates the Node edge-1
// whose kubelet is the fake one in the edge namespace.
func egressAPIServer(ctx context.Context, t *testing.T, tp *topology, proxyProtocol, uds string) (*testenv.Env, kubernetes.Interface) {
	t.Helper()
	egress := filepath.Join(tp.dir, "egress-"+proxyProtocol+".yaml")
	if err := os.WriteFile(egress, []byte(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: `+proxyProtocol+`
    transport:
      uds:
        udsName: `+uds+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := testenv.StartForTest(t, testenv.Options{ExtraAPIServerArgs: []string{"--egress-selector-config-file=" + egress}})
	cs, err := kubernetes.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "edge-1"}}
	node, err = cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: edgeIP}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = 10250
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return env, cs
}

// readLogs creates the Pod web on edge-1 and reads its logs through the
// API server, which fetches them from the kubelet through its egress.
func readLogs(ctx context.Context, t *testing.T, cs kubernetes.Interface) time.Duration {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "default"}}
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	no := false
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "edge-1", AutomountServiceAccountToken: &no,
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:v1"}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var logs []byte
	took := waitFor(t, 20*time.Second, "pod logs through the tunnel", func() error {
		var err error
		logs, err = cs.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{Container: "app"}).DoRaw(ctx)
		return err
	})
	if string(logs) != kubeletLogs {
		t.Fatalf("logs = %q, want %q", logs, kubeletLogs)
	}
	return took
}
