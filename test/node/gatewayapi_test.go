package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/causeway/causeway/test/cluster"
	"github.com/causeway/causeway/test/testcert"
	"github.com/causeway/causeway/test/testenv"
)

// The Gateway API conformance suite's backends as the suite deploys them
// (make test-gateway-conformance), without the suite and without a
// Gateway controller: the pinned CRDs installed from the module cache, the
// suite's base manifests applied unchanged (their Gateways stay pending),
// the Secrets the suite would create, and then every Deployment Ready with
// the images built here, echo-basic answering over HTTP (its JSON naming
// its Pod and namespace) and TLS (with the Secret's certificate), and
// CoreDNS answering its whoami zone. A broken image, a wrong entrypoint, a
// missing capability or a renamed tag fails here, before the suite runs.

// conformanceNamespaces are the base manifests' namespaces.
var conformanceNamespaces = []string{"gateway-conformance-infra", "gateway-conformance-app-backend", "gateway-conformance-web-backend"}

func TestGatewayConformanceBackends(t *testing.T) {
	c := node(t)
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	client, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range cluster.GatewayAPIImages {
		archive := filepath.Join(root, "bin", name)
		if _, err := os.Stat(archive); err != nil {
			if os.Getenv("CAUSEWAY_REQUIRE_CLUSTER") != "1" {
				t.Skipf("%s: run make gateway-api-images", archive)
			}
			t.Fatalf("%s: run make gateway-api-images", archive)
		}
		if err := c.ImportImage(ctx, archive); err != nil {
			t.Fatal(err)
		}
	}

	const channel = "standard"
	version, err := c.InstallGatewayAPICRDs(ctx, channel)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		removeNamespaces(c, conformanceNamespaces...)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := c.UninstallGatewayAPICRDs(ctx, channel); err != nil {
			t.Errorf("removing the Gateway API CRDs: %v", err)
		}
	})
	reportLine("gateway-api", fmt.Sprintf("CRDs %s (%s) installed from the module cache", version, channel))

	suiteDir, _, err := cluster.PinnedModuleDir(ctx, cluster.GatewayAPIConformanceModule)
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.ReadFile(filepath.Join(suiteDir, "base", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The one substitution the suite's applier makes in these manifests.
	manifest := strings.ReplaceAll(string(base), "{GATEWAY_CLASS_NAME}", "causeway")
	if _, err := c.KubectlApply(ctx, manifest); err != nil {
		t.Fatal(err)
	}
	certs := conformanceSecrets(t, ctx, c)

	start := time.Now()
	if err := deploymentsReady(ctx, client, conformanceNamespaces); err != nil {
		out, _ := c.Kubectl(ctx, "get", "pods", "-A", "-o", "wide", "-l", "!app.kubernetes.io/name")
		t.Fatalf("%v\n%s\n%s", err, out, logsOnFailure(c))
	}
	t.Logf("every Deployment of the base manifests Ready in %s", time.Since(start).Round(100*time.Millisecond))
	// A container without a readiness probe is Ready while it runs, even
	// one that exits a second later: none may have restarted.
	time.Sleep(5 * time.Second)
	if restarted := restartedContainers(t, ctx, client, conformanceNamespaces); len(restarted) > 0 {
		t.Errorf("containers restarted: %s", strings.Join(restarted, ", "))
	}

	const infra = "gateway-conformance-infra"
	pods := podsOf(t, ctx, client, infra, "app=infra-backend-v1")
	svc, err := client.CoreV1().Services(infra).Get(ctx, "infra-backend-v1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A Pod's own port, then the Service's ClusterIP port that maps to it.
	for _, addr := range []string{net.JoinHostPort(pods[0].Status.PodIP, "3000"), net.JoinHostPort(svc.Spec.ClusterIP, "8080")} {
		got := echoBasic(t, ctx, "http://"+addr+"/probe", nil)
		if got.Namespace != infra || !hasPod(pods, got.Pod) || got.Path != "/probe" {
			t.Errorf("%s answered namespace %q pod %q path %q; want %s, one of the Deployment's Pods, /probe", addr, got.Namespace, got.Pod, got.Path, infra)
		}
	}

	// TLS on 8443 with the certificate of the mounted Secret.
	tlsPods := podsOf(t, ctx, client, infra, "app=tls-backend")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certs["tls-checks-certificate"])
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "abc.example.com"}}
	got := echoBasic(t, ctx, "https://"+net.JoinHostPort(tlsPods[0].Status.PodIP, "8443")+"/tls", tr)
	if got.Pod != tlsPods[0].Name || got.TLS == nil {
		t.Errorf("tls-backend answered pod %q TLS %v; want %s over TLS", got.Pod, got.TLS, tlsPods[0].Name)
	}

	// CoreDNS, non-root on port 53 through its file capability, answering
	// the whoami zone the UDPRoute tests ask (never the zone it forwards).
	dns, err := client.CoreV1().Services(infra).Get(ctx, "coredns", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := whoami(ctx, net.JoinHostPort(dns.Spec.ClusterIP, "53"), "foo.bar.com."); err != nil {
		out, _ := c.Kubectl(ctx, "logs", "-n", infra, "deployment/coredns", "--tail=20")
		t.Errorf("CoreDNS: %v\n%s", err, out)
	}
}

// conformanceSecrets creates the Secrets the base manifests' Pods mount,
// which the suite creates in its Setup, and returns their certificates.
func conformanceSecrets(t *testing.T, ctx context.Context, c *cluster.Cluster) map[string][]byte {
	t.Helper()
	certs := map[string][]byte{}
	var yaml strings.Builder
	for _, s := range []struct{ ns, name string }{
		{"gateway-conformance-infra", "tls-checks-certificate"},
		{"gateway-conformance-infra", "tls-passthrough-checks-certificate"},
		{"gateway-conformance-app-backend", "tls-passthrough-checks-certificate"},
	} {
		certPEM, keyPEM, err := testcert.SelfSigned(0, time.Hour, "abc.example.com")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := certs[s.name]; !ok || s.ns == "gateway-conformance-infra" {
			certs[s.name] = certPEM
		}
		yaml.WriteString("---\n" + testcert.SecretYAML(s.ns, s.name, certPEM, keyPEM))
	}
	if _, err := c.KubectlApply(ctx, yaml.String()); err != nil {
		t.Fatal(err)
	}
	return certs
}

// deploymentsReady waits until every Deployment in the namespaces has all
// its replicas updated and Ready.
func deploymentsReady(ctx context.Context, client kubernetes.Interface, namespaces []string) error {
	var notReady []string
	for {
		notReady = notReady[:0]
		total := 0
		for _, ns := range namespaces {
			list, err := client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, d := range list.Items {
				total++
				want := int32(1)
				if d.Spec.Replicas != nil {
					want = *d.Spec.Replicas
				}
				if d.Status.ReadyReplicas != want || d.Status.UpdatedReplicas != want || d.Status.Replicas != want {
					notReady = append(notReady, fmt.Sprintf("%s/%s %d/%d", ns, d.Name, d.Status.ReadyReplicas, want))
				}
			}
		}
		if total > 0 && len(notReady) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("Deployments not Ready: %s", strings.Join(notReady, ", "))
		case <-time.After(2 * time.Second):
		}
	}
}

func restartedContainers(t *testing.T, ctx context.Context, client kubernetes.Interface, namespaces []string) []string {
	t.Helper()
	var restarted []string
	for _, ns := range namespaces {
		list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list.Items {
			for _, cs := range p.Status.ContainerStatuses {
				if cs.RestartCount > 0 || !cs.Ready {
					restarted = append(restarted, fmt.Sprintf("%s/%s %s (restarts %d, ready %t)", ns, p.Name, cs.Name, cs.RestartCount, cs.Ready))
				}
			}
		}
	}
	return restarted
}

func podsOf(t *testing.T, ctx context.Context, client kubernetes.Interface, ns, selector string) []corev1.Pod {
	t.Helper()
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	var running []corev1.Pod
	for _, p := range list.Items {
		if p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			running = append(running, p)
		}
	}
	if len(running) == 0 {
		t.Fatalf("no Pod with an address in %s for %s", ns, selector)
	}
	return running
}

func hasPod(pods []corev1.Pod, name string) bool {
	for _, p := range pods {
		if p.Name == name {
			return true
		}
	}
	return false
}

// echoResponse is the part of echo-basic's JSON the test reads.
type echoResponse struct {
	Path      string          `json:"path"`
	Namespace string          `json:"namespace"`
	Pod       string          `json:"pod"`
	TLS       json.RawMessage `json:"tls"`
}

// echoBasic GETs url (a Pod or Service address in the cluster's networks),
// retrying for a few seconds while kube-proxy's rules settle.
func echoBasic(t *testing.T, ctx context.Context, url string, tr *http.Transport) echoResponse {
	t.Helper()
	if tr == nil {
		tr = &http.Transport{}
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	var last error
	for range 10 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := hc.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			var got echoResponse
			if err = json.Unmarshal(body, &got); err == nil && resp.StatusCode == http.StatusOK {
				return got
			}
			last = fmt.Errorf("status %d, body %q (%v)", resp.StatusCode, body, err)
		} else {
			last = err
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("GET %s: %v", url, last)
	return echoResponse{}
}

// whoami sends one DNS query for name (type A) over UDP to addr and
// checks the answer: a response to it, NOERROR, and the whoami plugin's
// records (the client's address and port) in the additional section.
func whoami(ctx context.Context, addr, name string) error {
	q := []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}
	for _, label := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		q = append(q, byte(len(label)))
		q = append(q, label...)
	}
	q = append(q, 0, 0, 1, 0, 1) // root, type A, class IN
	var last error
	for range 5 {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "udp", addr)
		if err != nil {
			return err
		}
		conn.SetDeadline(time.Now().Add(3 * time.Second))
		_, err = conn.Write(q)
		buf := make([]byte, 512)
		n := 0
		if err == nil {
			n, err = conn.Read(buf)
		}
		conn.Close()
		if err != nil {
			last = err
			time.Sleep(time.Second)
			continue
		}
		if n < 12 || buf[0] != 0x12 || buf[1] != 0x34 || buf[2]&0x80 == 0 {
			return fmt.Errorf("not a response to the query: % x", buf[:n])
		}
		if rcode := buf[3] & 0x0f; rcode != 0 {
			return fmt.Errorf("rcode %d for %s", rcode, name)
		}
		if additional := binary.BigEndian.Uint16(buf[10:12]); additional == 0 {
			return fmt.Errorf("no whoami records for %s: % x", name, buf[:n])
		}
		return nil
	}
	return errors.Join(fmt.Errorf("no answer from %s", addr), last)
}
