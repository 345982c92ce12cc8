package netns

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	e2enetns "github.com/causeway/causeway/test/e2e/netns"
	"github.com/causeway/causeway/test/harness"
)

// The edge Pod network: the cloud routes it to the edge node, whose NAT
// drops every connection from outside, so only the agent reaches it.
const (
	edgePodCIDR = "10.251.7.0/24"
	edgePodIP   = "10.251.7.10"
	// edgeNetwork is what the servers always redirect (--iptables-cidr).
	edgeNetwork = "10.251.0.0/16"
)

// edgeManifests are the controller's objects: one Service whose only
// endpoint is the edge Pod, served by an Ingress and a VirtualServer.
const edgeManifests = `
apiVersion: v1
kind: Service
metadata: {name: edge-web, namespace: edge}
spec:
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: edge-web-1
  namespace: edge
  labels: {kubernetes.io/service-name: edge-web}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
  - addresses: [` + edgePodIP + `]
    conditions: {ready: true}
    nodeName: edge-1
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: edge-web, namespace: edge}
spec:
  ingressClassName: causeway
  rules:
  - host: edge.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: edge-web, port: {number: 80}}}}
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: edge-vs, namespace: edge}
spec:
  ingressClassName: causeway
  host: vs.edge.test
  upstreams: [{name: web, service: edge-web, port: 80}]
  routes: [{path: /, action: {pass: web}}]
`

// edgePod is the edge workload: a plain answer, a streamed one
// (/stream?n=N&every=DURATION, one flushed line each) and a WebSocket-style
// upgrade that echoes what follows it.
func edgePod() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from edge pod %s", r.URL.Path)
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		every, _ := time.ParseDuration(r.URL.Query().Get("every"))
		for i := range n {
			if i > 0 {
				select {
				case <-time.After(every):
				case <-r.Context().Done():
					return
				}
			}
			fmt.Fprintf(w, "chunk %d\n", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			http.Error(w, "not an upgrade", http.StatusBadRequest)
			return
		}
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		rw.Flush()
		buf := make([]byte, 4096)
		for {
			n, err := rw.Read(buf)
			if n > 0 {
				c.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	})
	return mux
}

// dialIn dials addr from inside the namespace.
func dialIn(ns string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := e2enetns.Within(ns, func() error {
			var err error
			c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
}

// listenIn listens on addr inside the namespace until the test ends.
func listenIn(t *testing.T, ns, addr string) net.Listener {
	t.Helper()
	ln, err := e2enetns.ListenIn(ns, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// edgeClient sends requests from inside the cloud namespace, one
// connection each.
type edgeClient struct {
	ns   string
	http *http.Client
}

func newEdgeClient(ns string) *edgeClient {
	return &edgeClient{ns: ns, http: &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{DialContext: dialIn(ns), DisableKeepAlives: true},
	}}
}

// get sends GET path with Host host to nginx and returns status and body.
func (c *edgeClient) get(host, path string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:8080"+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// served checks that host answers path from the edge Pod.
func (c *edgeClient) served(host, path string) func() error {
	return func() error {
		code, body, err := c.get(host, path)
		if err != nil {
			return err
		}
		if want := "hello from edge pod " + path; code != http.StatusOK || body != want {
			return fmt.Errorf("%s%s: %d %q, want 200 %q", host, path, code, body, want)
		}
		return nil
	}
}

// metric sums a metric's samples from a /metrics page inside the namespace.
func (c *edgeClient) metric(url, name string, labels ...string) float64 {
	resp, err := c.http.Get(url)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	v, err := harness.SumMetric(string(b), name, labels...)
	if err != nil {
		return -1
	}
	return v
}

// forwardAgents listens on addr in the namespace and sends each
// connection to the next of targets in turn: the load balancer in front
// of the server replicas that agents dial.
func forwardAgents(t *testing.T, ns, addr string, targets ...string) {
	var next atomic.Uint64
	dial := dialIn(ns)
	go forward(listenIn(t, ns, addr), func() (net.Conn, error) {
		return dial(context.Background(), "tcp", targets[next.Add(1)%uint64(len(targets))])
	})
}

// TestIngressToEdgeBackends: an Ingress and a VirtualServer on the cloud
// side serve a Pod on an edge node that only the tunnel reaches. nginx
// proxies to the Pod's own address, as to any endpoint; the servers'
// iptables rules send it to their transparent listeners and the tunnel.
// Checked in order: without an agent a request fails at once (502, no
// connect timeout); through the agent a plain, a streamed and an upgraded
// (WebSocket) exchange; a second agent claiming the same network is
// refused; the agent killed mid-transfer ends the response and later
// requests fail fast; its return restores them; neither reloads nginx;
// one of two server replicas stopping leaves traffic flowing.
func TestIngressToEdgeBackends(t *testing.T) {
	tp := newTopology(t)
	cloud, edge := tp.cloud.Name, tp.edge.Name
	tp.edge.MustRun(t, "ip", "addr", "add", edgePodIP+"/32", "dev", "lo")
	tp.cloud.MustRun(t, "ip", "route", "add", edgePodCIDR, "via", edgeIP)
	tunneltest.HTTPServer(listenIn(t, edge, edgePodIP+":8080"), edgePod())

	// The NAT holds: the cloud's packets to the Pod are dropped.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if c, err := dialIn(cloud)(ctx, "tcp", edgePodIP+":8080"); err == nil {
		c.Close()
		t.Fatal("the cloud reached the edge Pod directly")
	}

	serverTLS, agentTLS := tp.writePKI(t, net.ParseIP(edgeIP))
	replica := func(i int) *proc {
		args := append([]string{binary, "tunnel", "server", "--server-id", fmt.Sprintf("cloud-%d", i), "--server-count", "2",
			"--agent-bind-address", fmt.Sprintf("%s:814%d", cloudIP, i),
			// Replica 2's listener is on loopback: DNAT from OUTPUT to
			// 127.0.0.1 needs no route_localnet (docs/tunnel.md).
			"--transparent-bind-address", fmt.Sprintf("%s:1026%d", map[int]string{1: cloudIP, 2: "127.0.0.1"}[i], i),
			"--iptables", "--iptables-ports", "all", "--iptables-cidr", edgeNetwork,
			"--iptables-chain", fmt.Sprintf("CAUSEWAY-EDGE-%d", i), "--iptables-resync-period", "1s",
			"--route-allow", "edge-1=" + edgePodCIDR,
			"--health-bind-address", fmt.Sprintf("%s:815%d", cloudIP, i),
			"--keepalive-interval", "500ms", "--keepalive-timeout", "1s", "--log-level", "debug"}, serverTLS...)
		return tp.start(t, tp.cloud, fmt.Sprintf("server-%d", i), args...)
	}
	servers := []*proc{replica(1), replica(2)}
	forwardAgents(t, cloud, cloudIP+":8132", cloudIP+":8141", cloudIP+":8142")

	// The controller, on the files source, in the cloud namespace. Its
	// state directory must be readable by nginx's unprivileged workers.
	base, err := os.MkdirTemp("", "cw-edge-ctl")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(base, 0o755)
	t.Cleanup(func() { os.RemoveAll(base) })
	manifests := filepath.Join(base, "manifests")
	os.MkdirAll(manifests, 0o755)
	if err := os.WriteFile(filepath.Join(manifests, "edge.yaml"), []byte(edgeManifests), 0o644); err != nil {
		t.Fatal(err)
	}
	ctl := tp.start(t, tp.cloud, "controller", binary, "controller", "--manifests", manifests,
		"--state-dir", filepath.Join(base, "state"), "--listen-address", "127.0.0.1",
		"--http-port", "8080", "--https-port", "8443", "--health-port", "8081", "--metrics-port", "9113",
		"--shutdown-timeout", "2s")
	t.Cleanup(func() { ctl.signal(syscall.SIGTERM); ctl.waitExit(t, 10*time.Second) })
	client := newEdgeClient(cloud)
	waitFor(t, 30*time.Second, "controller ready", func() error {
		resp, err := client.http.Get("http://127.0.0.1:8081/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz %d", resp.StatusCode)
		}
		return nil
	})

	// failsFast: with no agent for the Pod, nginx's connection is reset
	// by the transparent listener, not left to its 5 s connect timeout.
	failsFast := func(what string) {
		t.Helper()
		waitFor(t, 5*time.Second, what, func() error {
			start := time.Now()
			code, body, err := client.get("edge.test", "/")
			if err != nil {
				return err
			}
			if took := time.Since(start); code != http.StatusBadGateway || took > time.Second {
				return fmt.Errorf("%d %q after %s, want 502 within 1s", code, body, took)
			}
			return nil
		})
	}
	failsFast("a fast 502 before any agent")

	agentArgs := append([]string{binary, "tunnel", "agent", "--server", cloudIP + ":8132",
		"--node-name", "edge-1", "--node-ip", edgeIP, "--cidr", edgePodCIDR, "--health-bind-address", "127.0.0.1:8134",
		"--keepalive-interval", "500ms", "--keepalive-timeout", "1s", "--drain-timeout", "2s"}, agentTLS...)
	agent := tp.start(t, tp.edge, "agent", agentArgs...)
	took := waitFor(t, 10*time.Second, "the Ingress serving the edge Pod", client.served("edge.test", "/"))
	t.Logf("Ingress → tunnel → edge Pod: first answer %s after the agent started", took)
	waitFor(t, 2*time.Second, "the VirtualServer serving the edge Pod", client.served("vs.edge.test", "/vs"))
	waitFor(t, 5*time.Second, "the agent linked to both replicas", func() error {
		for i := 1; i <= 2; i++ {
			if n := client.metric(fmt.Sprintf("http://%s:815%d/metrics", cloudIP, i), "causeway_tunnel_server_links"); n != 1 {
				return fmt.Errorf("replica %d has %v links", i, n)
			}
		}
		return nil
	})
	top := t // processes started in subtests outlive them
	reloads := func() float64 {
		return client.metric("http://127.0.0.1:9113/metrics", "nginx_ingress_controller_success")
	}
	liveReloads := reloads()

	// A streamed response arrives as it is written.
	t.Run("streamed", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:8080/stream?n=5&every=200ms", nil)
		req.Host = "edge.test"
		start := time.Now()
		resp, err := client.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		first, err := r.ReadString('\n')
		firstAt := time.Since(start)
		if err != nil || first != "chunk 0\n" {
			t.Fatalf("first line %q, %v", first, err)
		}
		rest, err := io.ReadAll(r)
		if err != nil || strings.Count(string(rest), "\n") != 4 {
			t.Fatalf("rest %q, %v", rest, err)
		}
		if all := time.Since(start); firstAt > 400*time.Millisecond || all < 800*time.Millisecond {
			t.Fatalf("first line after %s, all after %s: not streamed", firstAt, all)
		}
	})

	// An upgraded connection carries bytes both ways.
	t.Run("websocket", func(t *testing.T) {
		c, err := dialIn(cloud)(context.Background(), "tcp", "127.0.0.1:8080")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprint(c, "GET /ws HTTP/1.1\r\nHost: edge.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
		r := bufio.NewReader(c)
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("upgrade: %v, %v", resp, err)
		}
		for _, msg := range []string{"ping 1\n", "ping 2\n", strings.Repeat("x", 100_000) + "\n"} {
			fmt.Fprint(c, msg)
			got, err := r.ReadString('\n')
			if err != nil || got != msg {
				t.Fatalf("echo of %d bytes: %d bytes, %v", len(msg), len(got), err)
			}
		}
	})

	// A second agent claiming the edge Pod network is refused by both
	// replicas and takes nothing.
	t.Run("duplicate claim", func(t *testing.T) {
		otherTLS := tp.agentTLS(t, "edge-2")
		other := tp.start(t, tp.edge, "agent-2", append([]string{binary, "tunnel", "agent", "--server", cloudIP + ":8132",
			"--node-name", "edge-2", "--cidr", edgePodCIDR, "--health-bind-address", "127.0.0.1:8135"}, otherTLS...)...)
		defer other.signal(syscall.SIGKILL)
		waitFor(t, 5*time.Second, "both replicas refusing edge-2", func() error {
			for i := 1; i <= 2; i++ {
				b, _ := os.ReadFile(filepath.Join(tp.dir, fmt.Sprintf("server-%d.log", i)))
				if !strings.Contains(string(b), "agent registration refused") || !strings.Contains(string(b), "edge-2") {
					return fmt.Errorf("replica %d has not refused edge-2", i)
				}
			}
			return nil
		})
		for i := 1; i <= 2; i++ {
			if n := client.metric(fmt.Sprintf("http://%s:815%d/metrics", cloudIP, i), "causeway_tunnel_server_links"); n != 1 {
				t.Fatalf("replica %d has %v links, want edge-1's only", i, n)
			}
		}
		if err := client.served("edge.test", "/still")(); err != nil {
			t.Fatal(err)
		}
	})

	// The agent killed mid-transfer ends the response at once; later
	// requests fail fast; its return restores them; nginx never reloads.
	t.Run("agent killed mid-transfer", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:8080/stream?n=200&every=50ms", nil)
		req.Host = "edge.test"
		resp, err := client.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		for range 3 {
			if _, err := r.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
		}
		agent.signal(syscall.SIGKILL)
		killed := time.Now()
		rest, err := io.ReadAll(r)
		ended := time.Since(killed)
		if err == nil && strings.Count(string(rest), "\n") >= 197 {
			t.Fatal("the response went on to the end with the agent gone")
		}
		if ended > 2*time.Second {
			t.Fatalf("the response ended %s after the agent died", ended)
		}
		t.Logf("agent SIGKILL mid-transfer: response cut %s later (%v)", ended, err)
		agent.waitExit(t, 2*time.Second)
		failsFast("a fast 502 with the agent gone")

		restarted := time.Now()
		agent = tp.start(top, tp.edge, "agent", agentArgs...)
		waitFor(t, 5*time.Second, "traffic back with the agent", client.served("edge.test", "/back"))
		t.Logf("agent restarted: Ingress traffic back after %s", time.Since(restarted))
		if got := reloads(); got != liveReloads {
			t.Fatalf("%v reloads counted, want %v: the agent's departure or return reloaded nginx", got, liveReloads)
		}
	})

	// One of two replicas stops: the agent's link to the other carries on.
	t.Run("replica stops", func(t *testing.T) {
		waitFor(t, 5*time.Second, "the agent linked to both replicas again", func() error {
			for i := 1; i <= 2; i++ {
				if n := client.metric(fmt.Sprintf("http://%s:815%d/metrics", cloudIP, i), "causeway_tunnel_server_links"); n != 1 {
					return fmt.Errorf("replica %d has %v links", i, n)
				}
			}
			return nil
		})
		// Bytes, not dials: nginx keeps upstream connections alive, so
		// the requests below may all ride one that replica 2 already
		// carries, and dial nothing new (a run failed on dials 19 → 19).
		carried := func() float64 {
			return client.metric(fmt.Sprintf("http://%s:8152/metrics", cloudIP), "causeway_tunnel_server_bytes_total", `direction="out"`, `stage="raw"`)
		}
		before := carried()
		servers[0].signal(syscall.SIGTERM)
		servers[0].waitExit(t, 10*time.Second)
		if save := tp.cloud.MustRun(t, "iptables-save", "-t", "nat"); strings.Contains(save, "CAUSEWAY-EDGE-1") {
			t.Fatalf("replica 1's rules outlived it:\n%s", save)
		}
		for i := range 10 {
			if err := client.served("edge.test", fmt.Sprintf("/after-%d", i))(); err != nil {
				t.Fatalf("request %d after replica 1 stopped: %v", i, err)
			}
		}
		if after := carried(); before < 0 || after <= before {
			t.Fatalf("replica 2's bytes towards the edge %v → %v: it carried none of the requests", before, after)
		}
	})
}
