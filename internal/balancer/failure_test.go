package balancer_test

import (
	"bufio"
	"fmt"
	"github.com/causeway/causeway/internal/balancer"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A dead endpoint (connection refused) is retried on a different
// endpoint, whatever the method; with retries disabled the failure
// reaches the client.
func TestRetryOnDeadEndpoint(t *testing.T) {
	const key = "ns/retry/80"
	tests := []struct {
		name     string
		b        balancer.Backend
		dead     int  // dead endpoints listed before the live one
		v6       bool // every endpoint on ::1
		hdr      func(i int) map[string]string
		wantFail bool
	}{
		{name: "round_robin", b: balancer.Backend{Method: balancer.RoundRobin}, dead: 1},
		{name: "least_conn", b: balancer.Backend{Method: balancer.LeastConn}, dead: 1},
		{name: "ewma", b: balancer.Backend{Method: balancer.EWMA}, dead: 1},
		{name: "p2c", b: balancer.Backend{Method: balancer.P2C}, dead: 1},
		{name: "chash", b: balancer.Backend{Method: balancer.CHash, HashKey: "$http_x_user"}, dead: 1,
			hdr: func(i int) map[string]string { return map[string]string{"X-User": strconv.Itoa(i)} }},
		{name: "sticky", b: balancer.Backend{Method: balancer.Sticky}, dead: 1},
		// chash retries exactly where the exclusion of tried peers works:
		// it would pick the same dead peer again. Tried peers are read back
		// from nginx's $upstream_addr, so IPv6 ids must match its format.
		{name: "chash, IPv6", b: balancer.Backend{Method: balancer.CHash, HashKey: "$http_x_user"}, dead: 1, v6: true,
			hdr: func(i int) map[string]string { return map[string]string{"X-User": strconv.Itoa(i)} }},
		{name: "two dead, retries 2", b: balancer.Backend{Retries: new(2)}, dead: 2},
		{name: "retries 0", b: balancer.Backend{Retries: new(0)}, dead: 1, wantFail: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ip := func(i int) string { return fmt.Sprintf("127.0.0.%d", i) }
			if tc.v6 {
				ln, err := net.Listen("tcp", "[::1]:0")
				if err != nil {
					t.Skipf("no IPv6 loopback: %v", err)
				}
				ln.Close()
				ip = func(int) string { return "::1" }
			}
			n := startNginx(t, nginxOptions{keys: []string{key}})
			live := startBackend(t, ip(9), "live")
			b := tc.b
			b.Key = key
			for i := 0; i < tc.dead; i++ {
				b.Endpoints = append(b.Endpoints, deadEndpoint(t, ip(i+2)))
			}
			b.Endpoints = append(b.Endpoints, live.endpoint())
			n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{b}})
			const total = 60
			got := n.counts(t, n.url(0, "/"), total, 2, tc.hdr)
			t.Logf("%v", got)
			if tc.wantFail {
				if got["status 502"] == 0 {
					t.Errorf("no 502 with retries disabled: %v", got)
				}
				return
			}
			if got["live"] != total {
				t.Errorf("%d of %d requests served, want all: %v", got["live"], total, got)
			}
		})
	}
}

// Zero ready endpoints end the request with 503 from the local answerer;
// pushing endpoints again restores service.
func TestNoReadyEndpointsGive503(t *testing.T) {
	n := startNginx(t, nginxOptions{keys: []string{"ns/a/80", "ns/unknown/80"}})
	a := startBackend(t, "127.0.0.2", "a")
	b := startBackend(t, "127.0.0.3", "b")
	url := n.url(0, "/")
	expect := func(step string, status int, backend string) {
		t.Helper()
		r := n.get(t, n.http, url, nil)
		if r.status != status || r.backend != backend {
			t.Errorf("%s: status %d from %q, want %d from %q", step, r.status, r.backend, status, backend)
		}
	}

	expect("before any push", 503, "")
	n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{{Key: "ns/a/80", Endpoints: []balancer.Endpoint{a.endpoint()}}}})
	expect("pushed", 200, "a")
	if r := n.get(t, n.http, n.url(1, "/"), nil); r.status != 503 {
		t.Errorf("key never pushed: status %d, want 503", r.status)
	}
	n.replace(t, balancer.State{Generation: 2, Backends: []balancer.Backend{{Key: "ns/a/80", Endpoints: []balancer.Endpoint{}}}})
	expect("empty endpoint list", 503, "")
	notReady := a.endpoint()
	notReady.Ready = false
	n.replace(t, balancer.State{Generation: 3, Backends: []balancer.Backend{{Key: "ns/a/80", Endpoints: []balancer.Endpoint{notReady}}}})
	expect("only not-ready endpoints", 503, "")
	n.replace(t, balancer.State{Generation: 4, Backends: []balancer.Backend{{Key: "ns/a/80", Endpoints: []balancer.Endpoint{notReady, b.endpoint()}}}})
	expect("restored", 200, "b")
	// Not-ready endpoints are never picked.
	before := a.hits.Load()
	got := n.counts(t, url, 100, 4, nil)
	if served := a.hits.Load() - before; got["b"] != 100 || served != 0 {
		t.Errorf("with a not ready: %v, a served %d", got, served)
	}
}

// IPv6 endpoints are bracketed for nginx and reachable.
func TestIPv6Endpoint(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	ln.Close()
	n := startNginx(t, nginxOptions{keys: []string{"ns/v6/80"}})
	b := startBackend(t, "::1", "v6")
	n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{{Key: "ns/v6/80", Endpoints: []balancer.Endpoint{b.endpoint()}}}})
	if r := n.get(t, n.http, n.url(0, "/"), nil); r.status != 200 || r.backend != "v6" {
		t.Errorf("status %d from %q, want 200 from v6", r.status, r.backend)
	}
}

// The dynamic channel is a unix socket only: the running nginx listens on
// no TCP port but the test's HTTP port, and the config has no other
// listener than that port, the channel and the 503 and 502 answerers.
func TestDynamicSocketNotOnTCP(t *testing.T) {
	n := startNginx(t, nginxOptions{keys: []string{"k"}})

	listens := regexp.MustCompile(`(?m)^\s*listen\s+([^;\s]+)`).FindAllStringSubmatch(n.conf, -1)
	var tcp []string
	unix := 0
	for _, m := range listens {
		if strings.HasPrefix(m[1], "unix:") {
			unix++
		} else {
			tcp = append(tcp, m[1])
		}
	}
	if want := fmt.Sprintf("127.0.0.1:%d", n.port); unix != 3 || len(tcp) != 1 || tcp[0] != want {
		t.Errorf("config listens on %v (and %d unix sockets), want only %s and three unix sockets", tcp, unix, want)
	}

	// The processes: the master and its workers, and the sockets they hold.
	// The master forks its workers after it is up: on a busy machine the
	// second one may come a moment later.
	pids := append([]int{n.cmd.Process.Pid}, n.workerPIDs()...)
	for deadline := time.Now().Add(10 * time.Second); len(pids) < 3 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		pids = append([]int{n.cmd.Process.Pid}, n.workerPIDs()...)
	}
	if len(pids) < 3 {
		t.Fatalf("found nginx processes %v, want a master and 2 workers", pids)
	}
	inodes := map[string]bool{}
	for _, pid := range pids {
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
	}
	ports := map[int]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st ... inode (10th field)
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" || !inodes[fs[9]] {
				continue
			}
			port, _ := strconv.ParseInt(fs[1][strings.LastIndexByte(fs[1], ':')+1:], 16, 32)
			ports[int(port)] = true
		}
		f.Close()
	}
	if len(ports) != 1 || !ports[n.port] {
		t.Errorf("nginx listens on TCP ports %v, want only %d", ports, n.port)
	}
	// And the dynamic API answers on the socket but not on the HTTP port.
	if _, err := n.client.Generation(ctxT(t)); err != nil {
		t.Errorf("dynamic socket: %v", err)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/v1/generation", n.port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("the dynamic API answered on the TCP port")
	}
}

// A location's fallback backend answers while its own backend has no
// ready endpoint (ingress-nginx's default-backend annotation), and steps
// aside as soon as the backend has one again.
func TestFallbackAnswersWithoutEndpoints(t *testing.T) {
	n := startNginx(t, nginxOptions{keys: []string{"ns/a/80"}, fallbacks: map[string]string{"ns/a/80": "ns/fb/80"}})
	a := startBackend(t, "127.0.0.2", "a")
	fb := startBackend(t, "127.0.0.3", "fb")
	expect := func(step string, status int, backend string) {
		t.Helper()
		if r := n.get(t, n.http, n.url(0, "/"), nil); r.status != status || r.backend != backend {
			t.Errorf("%s: status %d from %q, want %d from %q", step, r.status, r.backend, status, backend)
		}
	}
	expect("neither pushed", 503, "")
	n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{
		{Key: "ns/a/80", Endpoints: []balancer.Endpoint{}}, {Key: "ns/fb/80", Endpoints: []balancer.Endpoint{fb.endpoint()}}}})
	expect("no endpoint: the fallback answers", 200, "fb")
	n.replace(t, balancer.State{Generation: 2, Backends: []balancer.Backend{
		{Key: "ns/a/80", Endpoints: []balancer.Endpoint{a.endpoint()}}, {Key: "ns/fb/80", Endpoints: []balancer.Endpoint{fb.endpoint()}}}})
	expect("an endpoint again: the backend answers", 200, "a")
	n.replace(t, balancer.State{Generation: 3, Backends: []balancer.Backend{
		{Key: "ns/a/80", Endpoints: []balancer.Endpoint{}}, {Key: "ns/fb/80", Endpoints: []balancer.Endpoint{}}}})
	expect("neither has an endpoint", 503, "")
}
